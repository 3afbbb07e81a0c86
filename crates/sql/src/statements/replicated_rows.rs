//! Row events a replica applies (WRITE/UPDATE/DELETE_ROWS from its source's binary
//! log) through the engine API, without SQL text: each image's values are converted to
//! the table's column types with the same conversion an INSERT stores through
//! ([`crate::expr::convert::coerce`], strict), the row to change is found by the
//! primary key, else by a unique key whose columns the before image holds, else by
//! every column the image holds (the first such row: of two identical rows exactly one
//! goes), and the change goes through [`crate::row_log`] — the engines, their
//! secondary indexes, the transaction and the binary log — as a statement's would.
//!
//! What MySQL's replica does and this keeps: row events fire no triggers; the source's
//! image is the row (defaults and generated values are not evaluated again, except
//! for columns this table has past the source's, which take their defaults); foreign
//! keys are checked and their actions run unless the event says the source ran with
//! `foreign_key_checks=0`; a row an UPDATE or DELETE cannot find is 1032, a WRITE
//! that meets an existing key 1062. Partial images (the source's
//! `binlog_row_image=MINIMAL`) are taken: an UPDATE changes only the columns its after
//! image holds, a WRITE gives the missing ones their defaults.

use crate::constraints::enforce::Links;
use crate::context::{ExecCtx, ReadModeGuard, TableLocks};
use crate::expr::convert::coerce;
use crate::mdl::{MdlDuration, MdlKey, MdlMode, MdlRequest};
use std::sync::Arc;
use strata_engine::{Flow, KeyRange, LockMode, ReadMode, RowId, Table};
use strata_types::keycode::encode_index_key;
use strata_types::{DataType, Error, Result, TableDef, Value};

/// Which rows event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowEventKind {
    Write,
    Update,
    Delete,
}

/// One row image: the source's columns by position, `None` for a column the image does
/// not hold (a partial image), `Some(Value::Null)` for SQL NULL. Values are as the
/// source's log holds them (integers with their signedness resolved, DECIMAL as its
/// exact text, BIT as big-endian bytes, ENUM as its index, SET as its bitmap, JSON as
/// its text, TIME as its canonical text); they are converted to this table's types here.
pub type RowImage = Vec<Option<Value>>;

/// One rows event: its table and rows (before image, after image), as the source's
/// TABLE_MAP names them.
pub struct RowEvent<'a> {
    pub db: &'a str,
    pub table: &'a str,
    pub kind: RowEventKind,
    pub rows: &'a [(Option<RowImage>, Option<RowImage>)],
    /// The event's flags said the source checked foreign keys.
    pub foreign_key_checks: bool,
}

/// Applies `ev` in the transaction of `cx`; returns the rows changed. Takes the
/// metadata locks a statement changing the table would (SW on it, SR/SW on the tables
/// its foreign keys read or change) for the transaction, and the table's write lock.
pub fn apply_row_event(cx: &ExecCtx, ev: &RowEvent) -> Result<u64> {
    cx.mdl.acquire_global_intention()?;
    let mut reqs = vec![MdlRequest::new(
        MdlKey::table(ev.db, ev.table),
        MdlMode::SharedWrite,
    )];
    let table = cx.table(ev.db, ev.table)?;
    let def = table.def().clone();
    let links = Links::resolve(cx.catalog, &def);
    for (db, name, writes) in links.tables() {
        let mode = if writes {
            MdlMode::SharedWrite
        } else {
            MdlMode::SharedRead
        };
        reqs.push(MdlRequest::new(MdlKey::table(&db, &name), mode));
    }
    cx.mdl.acquire(&reqs, MdlDuration::Transaction)?;
    let mut locks = TableLocks::default();
    cx.lock_tables(&mut locks, &[(ev.db, ev.table, &table, LockMode::Write)])?;
    let links = (ev.foreign_key_checks && !links.is_empty()).then_some(links);
    let mut changed = 0;
    for (no, (before, after)) in ev.rows.iter().enumerate() {
        cx.txn.check_interrupt()?;
        let row_no = no as u64 + 1;
        match ev.kind {
            RowEventKind::Write => {
                let after = convert(&def, image(after)?, row_no)?;
                write(cx, &table, &def, &after, links.as_ref())?;
            }
            RowEventKind::Update => {
                let before = convert(&def, image(before)?, row_no)?;
                refuse_stale_generated(&def, image(after)?)?;
                let assigned = convert(&def, image(after)?, row_no)?;
                let (id, old) = locate(cx, &table, &def, &before)?;
                let mut new = old.clone();
                for (i, v) in assigned.into_iter().enumerate() {
                    if let Some(v) = v {
                        new[i] = v;
                    }
                }
                if let Some(l) = &links {
                    l.before_update(cx, &old, &new)?;
                }
                crate::row_log::update(cx, &table, id, &old, &new)?;
                if let Some(l) = &links {
                    l.check_parents(cx, Some(&old), &new)?;
                }
            }
            RowEventKind::Delete => {
                let before = convert(&def, image(before)?, row_no)?;
                let (id, old) = locate(cx, &table, &def, &before)?;
                if let Some(l) = &links {
                    l.before_delete(cx, &old)?;
                }
                crate::row_log::delete(cx, &table, id, &old)?;
            }
        }
        changed += 1;
    }
    Ok(changed)
}

fn image(img: &Option<RowImage>) -> Result<&RowImage> {
    img.as_ref()
        .ok_or_else(|| Error::Internal("a rows event without a row image".into()))
}

/// The image's values as this table's columns store them (strict: a value the column
/// cannot hold exactly is the event's error, as a type mismatch stops MySQL's
/// applier), indexed by this table's columns.
fn convert(def: &TableDef, image: &RowImage, row: u64) -> Result<Vec<Option<Value>>> {
    if image.len() > def.columns.len() {
        return Err(Error::NotSupported(format!(
            "a row event with {} columns for table '{}', which has {}",
            image.len(),
            def.name,
            def.columns.len()
        )));
    }
    let mut out = Vec::with_capacity(def.columns.len());
    for (col, v) in def.columns.iter().zip(image) {
        out.push(match v {
            None => None,
            Some(Value::Null) if !col.nullable => {
                return Err(Error::ColumnNotNull(col.name.clone()))
            }
            Some(v) => Some(coerce(v.clone(), col, row, true)?),
        });
    }
    out.resize(def.columns.len(), None);
    Ok(out)
}

/// A generated column the image leaves out would keep a value computed from the row as
/// it was: refused rather than stored stale.
fn refuse_stale_generated(def: &TableDef, image: &RowImage) -> Result<()> {
    match def
        .columns
        .iter()
        .enumerate()
        .find(|(i, c)| c.generated.is_some() && image.get(*i).is_none_or(|v| v.is_none()))
    {
        Some((_, c)) => Err(Error::NotSupported(format!(
            "a row event whose image leaves out the generated column '{}'",
            c.name
        ))),
        None => Ok(()),
    }
}

fn write(
    cx: &ExecCtx,
    table: &Arc<dyn Table>,
    def: &TableDef,
    after: &[Option<Value>],
    links: Option<&Links>,
) -> Result<()> {
    let mut row = Vec::with_capacity(def.columns.len());
    for (i, col) in def.columns.iter().enumerate() {
        row.push(match &after[i] {
            Some(v) => v.clone(),
            None if col.generated.is_some() => {
                return Err(Error::NotSupported(format!(
                    "a row event whose image leaves out the generated column '{}'",
                    col.name
                )))
            }
            // A column past the source's, or one a MINIMAL image leaves out: its
            // default (NULL for AUTO_INCREMENT, which the engine then generates).
            None if col.auto_increment => Value::Null,
            None => super::dml::default_value(col, cx, true)?,
        });
    }
    crate::row_log::insert(cx, table, &mut row)?;
    if let Some(l) = links {
        l.check_parents(cx, None, &row)?;
    }
    Ok(())
}

/// Finds the row a before image names, read locked exclusively (it is about to be
/// changed): by the first unique index (the primary key when there is one) whose
/// columns the image holds, all non-NULL; without one, the first row equal to the
/// image in every column it holds. 1032 when there is none.
fn locate(
    cx: &ExecCtx,
    table: &Arc<dyn Table>,
    def: &TableDef,
    before: &[Option<Value>],
) -> Result<(RowId, Vec<Value>)> {
    let _mode = ReadModeGuard::set(cx.txn, ReadMode::LockExclusive);
    let mut found = None;
    let by_key = def.indexes.iter().position(|ix| {
        ix.unique
            && ix
                .columns
                .iter()
                .all(|&c| before[c].as_ref().is_some_and(|v| !v.is_null()))
    });
    if let Some(ix) = by_key {
        let full: Vec<Value> = before
            .iter()
            .map(|v| v.clone().unwrap_or(Value::Null))
            .collect();
        let mut key = Vec::new();
        encode_index_key(&mut key, def, &def.indexes[ix], &full);
        table.index_scan(
            cx.txn,
            ix,
            &KeyRange::prefix(key),
            false,
            &mut |id, vals| {
                found = Some((id, vals.to_vec()));
                Ok(Flow::Stop)
            },
        )?;
    } else {
        table.scan(cx.txn, &mut |id, vals| {
            if matches_image(def, vals, before) {
                found = Some((id, vals.to_vec()));
                return Ok(Flow::Stop);
            }
            Ok(Flow::Continue)
        })?;
    }
    found.ok_or_else(|| Error::RecordNotFound(def.name.clone()))
}

/// Whether the stored row `vals` holds the image's value in every column the image
/// holds: the values compared exactly (NULL equal to NULL), as MySQL's applier compares
/// records; CHAR's pad spaces do not count.
fn matches_image(def: &TableDef, vals: &[Value], image: &[Option<Value>]) -> bool {
    image.iter().enumerate().all(|(i, want)| {
        let Some(want) = want else { return true };
        let Some(have) = vals.get(i) else {
            return false;
        };
        match (&def.columns[i].data_type, have, want) {
            (DataType::Char(_), Value::Bytes(a), Value::Bytes(b)) => trim_pad(a) == trim_pad(b),
            (_, Value::Double(a), Value::Double(b)) => a.to_bits() == b.to_bits() || a == b,
            _ => have == want,
        }
    })
}

fn trim_pad(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|c| *c != b' ').map_or(0, |p| p + 1);
    &b[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Collation, ColumnDef};

    fn def(cols: Vec<(&str, DataType)>) -> TableDef {
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: cols
                .into_iter()
                .map(|(n, t)| ColumnDef::plain(n, t, true, Collation::Binary))
                .collect(),
            indexes: Vec::new(),
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        }
    }

    #[test]
    fn converts_exactly() {
        let d = def(vec![
            ("f", DataType::Double { fixed: None }),
            ("u", DataType::BigInt { unsigned: true }),
            ("b", DataType::Bit(64)),
            (
                "x",
                DataType::Decimal {
                    precision: 30,
                    scale: 10,
                },
            ),
        ]);
        let img = vec![
            Some(Value::Double(0.1 + 0.2)),
            Some(Value::UInt(u64::MAX)),
            Some(Value::Bits(vec![0xFF; 8])),
            Some(Value::Bytes(b"-12345678901234567890.0123456789".to_vec())),
        ];
        let out = convert(&d, &img, 1).unwrap();
        match &out[0] {
            Some(Value::Double(f)) => assert_eq!(f.to_bits(), (0.1f64 + 0.2).to_bits()),
            other => panic!("{other:?}"),
        }
        assert_eq!(out[1], Some(Value::UInt(u64::MAX)));
        assert_eq!(out[2], Some(Value::Bits(vec![0xFF; 8])));
        assert_eq!(
            out[3].as_ref().map(|v| v.to_text()),
            Some("-12345678901234567890.0123456789".into())
        );
    }

    #[test]
    fn partial_images_and_extra_columns() {
        let d = def(vec![
            ("a", DataType::Int { unsigned: false }),
            ("b", DataType::Int { unsigned: false }),
        ]);
        let out = convert(&d, &vec![Some(Value::Int(1))], 1).unwrap();
        assert_eq!(out, vec![Some(Value::Int(1)), None]);
        // More columns than the table: refused, never a wrong row.
        let e = convert(&d, &vec![Some(Value::Int(1)); 3], 1).unwrap_err();
        assert_eq!(e.code(), 1235);
        // Out of the column's range: the event's error, not a clipped value.
        let e = convert(&d, &vec![Some(Value::Int(1 << 40))], 1).unwrap_err();
        assert_eq!(e.code(), 1264);
    }

    #[test]
    fn image_matching() {
        let d = def(vec![
            ("c", DataType::Char(5)),
            ("n", DataType::Int { unsigned: false }),
            ("f", DataType::Double { fixed: None }),
        ]);
        let row = vec![
            Value::Bytes(b"ab   ".to_vec()),
            Value::Null,
            Value::Double(0.3),
        ];
        assert!(matches_image(
            &d,
            &row,
            &[Some(Value::Bytes(b"ab".to_vec())), Some(Value::Null), None]
        ));
        assert!(!matches_image(&d, &row, &[None, Some(Value::Int(0)), None]));
        assert!(!matches_image(
            &d,
            &row,
            &[None, None, Some(Value::Double(0.1 + 0.2))]
        ));
        assert!(matches_image(&d, &row, &[None, None, None]));
    }
}
