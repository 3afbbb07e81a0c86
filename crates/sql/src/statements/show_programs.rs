//! SHOW TRIGGERS, SHOW CREATE TRIGGER, SHOW PROCEDURE|FUNCTION STATUS and SHOW CREATE
//! PROCEDURE|FUNCTION, with MySQL 8's columns (mysqldump reads SHOW CREATE TRIGGER's
//! `SQL Original Statement` and SHOW CREATE PROCEDURE's `Create Procedure`).

use crate::catalog::infoschema_programs::created;
use crate::catalog::routines::{RoutineDef, RoutineKind};
use crate::catalog::triggers::TriggerDef;
use crate::context::{ExecCtx, Outcome};
use crate::statements::show::{is, like_filter, matches, send, text_col};
use strata_types::{ColumnMeta, Error, FieldType, QueryOutput, Result, Value};

/// `user@host` as MySQL quotes a definer: `` `user`@`host` ``.
pub fn quoted_definer(d: &str) -> String {
    let (u, h) = d.rsplit_once('@').unwrap_or((d, "%"));
    format!("`{}`@`{}`", u.replace('`', "``"), h.replace('`', "``"))
}

/// The CREATE TRIGGER statement that makes `t` again.
pub fn create_statement(t: &TriggerDef) -> String {
    format!(
        "CREATE DEFINER={} TRIGGER `{}` {} {} ON `{}` FOR EACH ROW {}",
        quoted_definer(&t.definer),
        t.name.replace('`', "``"),
        t.timing.word(),
        t.event.word(),
        t.table.replace('`', "``"),
        t.body
    )
}

fn timestamp_col(name: &str) -> ColumnMeta {
    ColumnMeta::computed(name, FieldType::Timestamp)
}

/// SHOW TRIGGERS [FROM db] [LIKE 'table pattern'] (`i` is past TRIGGERS).
pub fn show_triggers(
    w: &[String],
    i: usize,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let (db, j) = if is(w.get(i), "from") || is(w.get(i), "in") {
        let d = w
            .get(i + 1)
            .cloned()
            .ok_or_else(|| Error::Syntax("SHOW TRIGGERS".into()))?;
        (d, i + 2)
    } else {
        (cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?, i)
    };
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    if is(w.get(j), "where") {
        return Err(Error::NotSupported("SHOW TRIGGERS WHERE".into()));
    }
    let pat = like_filter(w, j);
    let cols = vec![
        text_col("Trigger"),
        text_col("Event"),
        text_col("Table"),
        text_col("Statement"),
        text_col("Timing"),
        timestamp_col("Created"),
        text_col("sql_mode"),
        text_col("Definer"),
        text_col("character_set_client"),
        text_col("collation_connection"),
        text_col("Database Collation"),
    ];
    let rows = cx
        .catalog
        .triggers(Some(&db))
        .into_iter()
        .filter(|t| matches(&t.table, &pat))
        .map(|t| {
            vec![
                Value::str(&t.name),
                Value::str(t.event.word()),
                Value::str(&t.table),
                Value::str(&t.body),
                Value::str(t.timing.word()),
                Value::str(&created(&t.created)),
                Value::str(&t.sql_mode),
                Value::str(&t.definer),
                Value::str("utf8mb4"),
                Value::str("utf8mb4_general_ci"),
                Value::str("utf8mb4_general_ci"),
            ]
        })
        .collect();
    send(out, cols, rows)
}

/// SHOW CREATE TRIGGER [db.]name (`i` at the name).
pub fn show_create_trigger(
    w: &[String],
    i: usize,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let first = w
        .get(i)
        .cloned()
        .ok_or_else(|| Error::Syntax("SHOW CREATE TRIGGER".into()))?;
    let (db, name) = if w.get(i + 1).is_some_and(|x| x == ".") {
        let n = w
            .get(i + 2)
            .cloned()
            .ok_or_else(|| Error::Syntax("SHOW CREATE TRIGGER".into()))?;
        (first, n)
    } else {
        (
            cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
            first,
        )
    };
    let t = cx
        .catalog
        .triggers(Some(&db))
        .into_iter()
        .find(|t| t.name.eq_ignore_ascii_case(&name))
        .ok_or(Error::TriggerDoesNotExist)?;
    let cols = vec![
        text_col("Trigger"),
        text_col("sql_mode"),
        text_col("SQL Original Statement"),
        text_col("character_set_client"),
        text_col("collation_connection"),
        text_col("Database Collation"),
        timestamp_col("Created"),
    ];
    let row = vec![
        Value::str(&t.name),
        Value::str(&t.sql_mode),
        Value::str(&create_statement(&t)),
        Value::str("utf8mb4"),
        Value::str("utf8mb4_general_ci"),
        Value::str("utf8mb4_general_ci"),
        Value::str(&created(&t.created)),
    ];
    send(out, cols, vec![row])
}

/// The CREATE statement that makes routine `r` again, laid out as MySQL shows it.
pub fn create_routine_statement(r: &RoutineDef) -> String {
    let params: Vec<String> = r
        .params
        .iter()
        .map(|p| {
            if r.kind == RoutineKind::Procedure {
                format!("{} {} {}", p.mode.word(), p.name, p.data_type)
            } else {
                format!("{} {}", p.name, p.data_type)
            }
        })
        .collect();
    let mut out = format!(
        "CREATE DEFINER={} {} `{}`({})",
        quoted_definer(&r.definer),
        r.kind.word(),
        r.name.replace('`', "``"),
        params.join(", ")
    );
    if let Some(t) = &r.returns {
        out.push_str(&format!(" RETURNS {t}"));
    }
    out.push('\n');
    if r.deterministic {
        out.push_str("    DETERMINISTIC\n");
    }
    if r.data_access != "CONTAINS SQL" {
        out.push_str(&format!("    {}\n", r.data_access));
    }
    if r.security != "DEFINER" {
        out.push_str(&format!("    SQL SECURITY {}\n", r.security));
    }
    if !r.comment.is_empty() {
        out.push_str(&format!(
            "    COMMENT '{}'\n",
            r.comment.replace('\\', "\\\\").replace('\'', "''")
        ));
    }
    out.push_str(&r.body);
    out
}

/// SHOW {PROCEDURE|FUNCTION} STATUS [LIKE 'name pattern'] (`i` past STATUS).
pub fn show_routine_status(
    kind: RoutineKind,
    w: &[String],
    i: usize,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    if is(w.get(i), "where") {
        return Err(Error::NotSupported(format!(
            "SHOW {} STATUS WHERE",
            kind.word()
        )));
    }
    let pat = like_filter(w, i);
    let cols = vec![
        text_col("Db"),
        text_col("Name"),
        text_col("Type"),
        text_col("Definer"),
        timestamp_col("Modified"),
        timestamp_col("Created"),
        text_col("Security_type"),
        text_col("Comment"),
        text_col("character_set_client"),
        text_col("collation_connection"),
        text_col("Database Collation"),
    ];
    let secs = |t: &str| Value::str(t.split('.').next().unwrap_or(t));
    let rows = cx
        .catalog
        .routines(None)
        .into_iter()
        .filter(|r| r.kind == kind && matches(&r.name, &pat))
        .map(|r| {
            vec![
                Value::str(&r.db),
                Value::str(&r.name),
                Value::str(kind.word()),
                Value::str(&r.definer),
                secs(&r.modified),
                secs(&r.created),
                Value::str(&r.security),
                Value::str(&r.comment),
                Value::str("utf8mb4"),
                Value::str("utf8mb4_general_ci"),
                Value::str("utf8mb4_general_ci"),
            ]
        })
        .collect();
    send(out, cols, rows)
}

/// SHOW CREATE {PROCEDURE|FUNCTION} [db.]name (`i` at the name).
pub fn show_create_routine(
    kind: RoutineKind,
    w: &[String],
    i: usize,
    cx: &ExecCtx,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let syntax = || Error::Syntax(format!("SHOW CREATE {}", kind.word()));
    let first = w.get(i).cloned().ok_or_else(syntax)?;
    let (db, name) = if w.get(i + 1).is_some_and(|x| x == ".") {
        (first, w.get(i + 2).cloned().ok_or_else(syntax)?)
    } else {
        (
            cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
            first,
        )
    };
    let r = cx
        .catalog
        .routine(&db, &name, kind)
        .ok_or_else(|| Error::RoutineDoesNotExist {
            kind: kind.word(),
            name: name.clone(),
        })?;
    let (title, create) = match kind {
        RoutineKind::Procedure => ("Procedure", "Create Procedure"),
        RoutineKind::Function => ("Function", "Create Function"),
    };
    let cols = vec![
        text_col(title),
        text_col("sql_mode"),
        text_col(create),
        text_col("character_set_client"),
        text_col("collation_connection"),
        text_col("Database Collation"),
    ];
    let row = vec![
        Value::str(&r.name),
        Value::str(&r.sql_mode),
        Value::str(&create_routine_statement(&r)),
        Value::str("utf8mb4"),
        Value::str("utf8mb4_general_ci"),
        Value::str("utf8mb4_general_ci"),
    ];
    send(out, cols, vec![row])
}
