//! One WRITE/UPDATE/DELETE_ROWS event (v1 or v2, full or partial images) applied on a
//! session with its TABLE_MAP: the values decoded exactly (`decode`) against this
//! server's table, then handed to [`Session::apply_row_event`] (engine API, no SQL
//! text, no triggers). Shared by the replica's applier (`apply.rs`) and the BINLOG
//! statements of a `mysqlbinlog` replay (`binlog_statement.rs`), so both apply rows
//! the same way.

use super::decode;
use mysql::binlog::events::{RowsEventData, TableMapEvent};
use std::sync::Arc;
use strata_session::Session;
use strata_sql::{RowEvent, RowEventKind, RowImage};
use strata_types::{Error, TableDef, Value};

/// Why a rows event was not applied.
#[derive(Debug)]
pub enum RowsError {
    /// The statement-level error of this server (1032, 1062, 1146, a value, …).
    Sql(Error),
    /// The event itself: MySQL's number and the reason (1677 columns, 1594 unreadable).
    Event(u16, String),
}

impl RowsError {
    pub fn code(&self) -> u16 {
        match self {
            RowsError::Sql(e) => e.code(),
            RowsError::Event(c, _) => *c,
        }
    }

    pub fn why(&self) -> String {
        match self {
            RowsError::Sql(e) => e.to_string(),
            RowsError::Event(_, w) => w.clone(),
        }
    }
}

/// The event's kind; None for MySQL's partial JSON update events (not applied).
pub fn kind_of(r: &RowsEventData<'_>) -> Option<RowEventKind> {
    Some(match r {
        RowsEventData::WriteRowsEvent(_) | RowsEventData::WriteRowsEventV1(_) => {
            RowEventKind::Write
        }
        RowsEventData::UpdateRowsEvent(_) | RowsEventData::UpdateRowsEventV1(_) => {
            RowEventKind::Update
        }
        RowsEventData::DeleteRowsEvent(_) | RowsEventData::DeleteRowsEventV1(_) => {
            RowEventKind::Delete
        }
        _ => return None,
    })
}

/// MySQL's name of the event kind in its messages.
pub fn kind_name(kind: RowEventKind) -> &'static str {
    match kind {
        RowEventKind::Write => "Write_rows",
        RowEventKind::Update => "Update_rows",
        RowEventKind::Delete => "Delete_rows",
    }
}

/// The event's flags (STMT_END_F 0x0001, NO_FOREIGN_KEY_CHECKS 0x0002, …).
pub fn flags_of(r: &RowsEventData<'_>) -> u16 {
    match r {
        RowsEventData::WriteRowsEvent(e) => e.flags_raw(),
        RowsEventData::UpdateRowsEvent(e) => e.flags_raw(),
        RowsEventData::DeleteRowsEvent(e) => e.flags_raw(),
        RowsEventData::WriteRowsEventV1(e) => e.flags_raw(),
        RowsEventData::UpdateRowsEventV1(e) => e.flags_raw(),
        RowsEventData::DeleteRowsEventV1(e) => e.flags_raw(),
        RowsEventData::PartialUpdateRowsEvent(e) => e.flags_raw(),
    }
}

/// Applies the rows event `r` of the table `map` describes on `session`, in its open
/// transaction (or one of its own under autocommit).
pub fn apply(
    session: &mut Session,
    map: &TableMapEvent<'_>,
    r: &RowsEventData<'_>,
) -> Result<(), RowsError> {
    let db = map.database_name().into_owned();
    let name = map.table_name().into_owned();
    let kind = kind_of(r).ok_or_else(|| {
        RowsError::Sql(Error::NotSupported("partial JSON update row events".into()))
    })?;
    let def: Arc<TableDef> = session
        .server()
        .catalog
        .table(&db, &name)
        .map_err(RowsError::Sql)?
        .def()
        .clone();
    let n = map.columns_count() as usize;
    if n > def.columns.len() {
        return Err(RowsError::Event(
            1677,
            format!(
                "the source's table has {n} columns, this server's {}",
                def.columns.len()
            ),
        ));
    }
    // The source's column types, and which columns each image holds (all, or with
    // binlog_row_image=MINIMAL/NOBLOB some): a row's values are those columns', in
    // order.
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        types.push(
            map.get_column_type(i)
                .ok()
                .flatten()
                .ok_or_else(|| RowsError::Event(1235, "an unknown column type".into()))?,
        );
    }
    let before_cols: Vec<usize> = match r.columns_before_image() {
        Some(b) => (0..n).filter(|i| b.get(*i).is_some_and(|x| *x)).collect(),
        None => (0..n).collect(),
    };
    let after_cols: Vec<usize> = match r.columns_after_image() {
        Some(b) => (0..n).filter(|i| b.get(*i).is_some_and(|x| *x)).collect(),
        None => (0..n).collect(),
    };
    let image = |row: &Option<mysql::binlog::row::BinlogRow>,
                 cols: &[usize]|
     -> Result<Option<RowImage>, RowsError> {
        let Some(row) = row else { return Ok(None) };
        let mut out: RowImage = vec![None; n];
        for (k, &i) in cols.iter().enumerate() {
            let v = match row.as_ref(k) {
                Some(v) => decode::value(v, types[i], def.columns[i].data_type.is_unsigned())
                    .map_err(RowsError::Sql)?,
                None => Value::Null,
            };
            out[i] = Some(v);
        }
        Ok(Some(out))
    };
    let mut rows = Vec::new();
    for row in r.rows(map) {
        let (before, after) =
            row.map_err(|e| RowsError::Event(1594, format!("unreadable row: {e}")))?;
        rows.push((image(&before, &before_cols)?, image(&after, &after_cols)?));
    }
    let ev = RowEvent {
        db: &db,
        table: &name,
        kind,
        rows: &rows,
        // NO_FOREIGN_KEY_CHECKS: the source ran with foreign_key_checks=0.
        foreign_key_checks: flags_of(r) & 0x0002 == 0,
    };
    session.apply_row_event(&ev).map_err(RowsError::Sql)?;
    Ok(())
}
