//! The row decoders of both engines over any record bytes, for a table with one column
//! of every type: the btree record header and row (`row::decode_row`) and the heap row
//! (`format::decode_row`). A malformed record must decode to None, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use strata_types::{Collation, ColumnDef, DataType, IndexDef, TableDef};

fn def(engine: &str) -> TableDef {
    let types = [
        DataType::Int { unsigned: false },
        DataType::TinyInt { unsigned: true },
        DataType::SmallInt { unsigned: false },
        DataType::MediumInt { unsigned: true },
        DataType::BigInt { unsigned: true },
        DataType::Float { fixed: None },
        DataType::Float { fixed: Some((7, 3)) },
        DataType::Double { fixed: None },
        DataType::Double { fixed: Some((10, 2)) },
        DataType::Decimal {
            precision: 20,
            scale: 4,
        },
        DataType::Char(10),
        DataType::VarChar(300),
        DataType::Binary(4),
        DataType::VarBinary(20),
        DataType::Text(65535),
        DataType::Blob(65535),
        DataType::Date,
        DataType::DateTime { fsp: 6 },
        DataType::Timestamp { fsp: 3 },
        DataType::Time { fsp: 2 },
        DataType::Year,
        DataType::Json,
        DataType::Bit(12),
    ];
    let columns = types
        .iter()
        .enumerate()
        .map(|(i, t)| ColumnDef {
            name: format!("c{i}"),
            data_type: *t,
            nullable: i > 0,
            default: None,
            auto_increment: false,
            on_update_now: false,
            collation: if t.is_text() {
                Collation::GeneralCi
            } else {
                Collation::Binary
            },
            members: Vec::new(),
            generated: None,
            comment: String::new(),
            real_unsigned: false,
        })
        .collect();
    TableDef {
        db: "d".into(),
        name: "t".into(),
        engine: engine.into(),
        columns,
        indexes: vec![IndexDef {
            name: "PRIMARY".into(),
            columns: vec![0],
            unique: true,
            primary: true,
            comment: String::new(),
        }],
        auto_increment_start: 1,
        comment: String::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
    }
}

/// `def` with its last two columns added instantly (rows may be shorter).
fn instant_def(mut d: TableDef) -> TableDef {
    d.instant = Some(strata_types::InstantColumns {
        cols: d.columns.len() - 2,
        defaults: vec![strata_types::Value::Int(5), strata_types::Value::Null],
    });
    d
}

fuzz_target!(|data: &[u8]| {
    static DEFS: OnceLock<(TableDef, TableDef, TableDef)> = OnceLock::new();
    let (btree, heap, instant) =
        DEFS.get_or_init(|| (def("btree"), def("heap"), instant_def(def("btree"))));
    let _ = strata_btree::row::RecHeader::read(data);
    let _ = strata_btree::row::decode_row(btree, data);
    // A record row of a table with instant columns, with and without its count.
    if let Some((&flags, rest)) = data.split_first() {
        let kinds = strata_btree::row::col_kinds(instant);
        let mut row = Vec::new();
        let _ = strata_btree::row::decode_record_into(instant, &kinds, flags, rest, &mut row, None);
    }
    let _ = strata_heap::format::decode_row(heap, data);
});
