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
            invisible: Default::default(),
        })
        .collect();
    TableDef { options: Default::default(),
        db: "d".into(),
        name: "t".into(),
        engine: engine.into(),
        columns,
        indexes: vec![IndexDef {
invisible: false,
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
        default_collation: Default::default(),
    }
}

/// `def` with its last two columns added instantly (rows may be shorter); with
/// `dropped`, also an INT column dropped instantly after the first one (its physical
/// slot kept: rows step over its bytes).
fn instant_def(mut d: TableDef, dropped: bool) -> TableDef {
    use strata_types::PhysicalColumn::{Column, Dropped};
    let n = d.columns.len();
    let layout = dropped.then(|| {
        let mut l = vec![Column(0), Dropped(DataType::Int { unsigned: false })];
        l.extend((1..n).map(Column));
        l
    });
    d.instant = Some(strata_types::InstantColumns {
        cols: if dropped { n - 1 } else { n - 2 },
        defaults: vec![strata_types::Value::Int(5), strata_types::Value::Null],
        layout,
        versions: Some(if dropped { 3 } else { 2 }),
    });
    d
}

fuzz_target!(|data: &[u8]| {
    static DEFS: OnceLock<(TableDef, TableDef, [TableDef; 2])> = OnceLock::new();
    let (btree, heap, instant) = DEFS.get_or_init(|| {
        let added = instant_def(def("btree"), false);
        let moved = instant_def(def("btree"), true);
        (def("btree"), def("heap"), [added, moved])
    });
    let _ = strata_btree::row::RecHeader::read(data);
    let _ = strata_btree::row::decode_row(btree, data);
    // A record row of a table with instant columns (added at the end; and with a
    // dropped physical column), with and without its count.
    if let Some((&flags, rest)) = data.split_first() {
        for d in instant {
            let kinds = strata_btree::row::col_kinds(d);
            let phys = strata_btree::row::Physical::of(d);
            let mut row = Vec::new();
            let _ = strata_btree::row::decode_record_into(
                d,
                &kinds,
                phys.as_ref(),
                flags,
                rest,
                &mut row,
                None,
            );
        }
    }
    let _ = strata_heap::format::decode_row(heap, data);
});
