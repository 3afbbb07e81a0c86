//! SHOW and DESCRIBE statements, recognized from their words rather than through
//! sqlparser (which silently drops arguments of several SHOW forms): DATABASES, TABLES,
//! CREATE TABLE/DATABASE, COLUMNS/FIELDS, INDEX/KEYS, TABLE STATUS, ENGINES, WARNINGS,
//! ERRORS, CHARACTER SET, COLLATION, PROCESSLIST, and DESCRIBE/DESC. Column names and
//! layouts are MySQL's, since GUIs and dump tools read them by position.

use crate::catalog::engines::engine_display;
use crate::context::{ExecCtx, Outcome};
use crate::expr::like;
use strata_types::schema::ColumnDefault;
use strata_types::{
    Collation, ColumnMeta, EndInfo, Error, FieldType, QueryOutput, Result, TableDef, Value,
};

/// Splits a statement into words: quoted strings and identifiers stay whole (without
/// their quotes), `.` `,` `(` `)` `=` `;` are words of their own.
pub fn words(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' || c == '`' {
            let mut s = String::new();
            i += 1;
            while i < b.len() {
                if b[i] == c {
                    if i + 1 < b.len() && b[i + 1] == c {
                        s.push(c);
                        i += 2;
                        continue;
                    }
                    break;
                }
                if b[i] == '\\' && c != '`' && i + 1 < b.len() {
                    i += 1;
                }
                s.push(b[i]);
                i += 1;
            }
            i += 1;
            out.push(if c == '`' { s } else { format!("\u{0}{s}") });
        } else if ".,()=;".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else {
            let mut s = String::new();
            while i < b.len() && !b[i].is_whitespace() && !".,()=;'\"`".contains(b[i]) {
                s.push(b[i]);
                i += 1;
            }
            out.push(s);
        }
    }
    while out.last().is_some_and(|w| w == ";") {
        out.pop();
    }
    out
}

/// A string literal word (marked by a leading NUL by [`words`]).
fn literal(w: &str) -> Option<&str> {
    w.strip_prefix('\u{0}')
}

pub(crate) fn is(w: Option<&String>, kw: &str) -> bool {
    w.is_some_and(|w| w.eq_ignore_ascii_case(kw))
}

pub(crate) fn text_col(name: &str) -> ColumnMeta {
    ColumnMeta::computed(name, FieldType::VarString)
}

fn int_col(name: &str) -> ColumnMeta {
    ColumnMeta::computed(name, FieldType::LongLong)
}

pub(crate) fn send(
    out: &mut dyn QueryOutput,
    cols: Vec<ColumnMeta>,
    rows: Vec<Vec<Value>>,
) -> Result<Outcome> {
    out.columns(&cols)?;
    for r in &rows {
        out.row(r)?;
    }
    out.end(&EndInfo::default())?;
    Ok(Outcome {
        ok: None,
        rows_sent: rows.len() as u64,
        generated_id: None,
    })
}

fn s(v: &str) -> Value {
    Value::str(v)
}

/// Parses `[db.]table` starting at `i`; returns it and the next index.
fn table_name(w: &[String], i: usize) -> Option<(Option<String>, String, usize)> {
    let first = w.get(i)?.clone();
    if w.get(i + 1).is_some_and(|x| x == ".") {
        let t = w.get(i + 2)?.clone();
        return Some((Some(first), t, i + 3));
    }
    Some((None, first, i + 1))
}

/// `LIKE 'pattern'` at `i`, if present.
pub(crate) fn like_filter(w: &[String], i: usize) -> Option<String> {
    if is(w.get(i), "like") {
        w.get(i + 1).and_then(|p| literal(p)).map(|p| p.to_string())
    } else {
        None
    }
}

pub(crate) fn matches(name: &str, pattern: &Option<String>) -> bool {
    match pattern {
        None => true,
        Some(p) => like(name.as_bytes(), p.as_bytes(), b'\\', Collation::GeneralCi),
    }
}

/// Runs a SHOW/DESCRIBE statement if `sql` is one; None when it is not (or is a form the
/// session handles: VARIABLES, STATUS).
pub fn execute_show(sql: &str, cx: &ExecCtx, out: &mut dyn QueryOutput) -> Result<Option<Outcome>> {
    let w = words(sql);
    let first = w
        .first()
        .map(|s| s.to_ascii_uppercase())
        .unwrap_or_default();
    if first == "DESCRIBE"
        || first == "DESC"
        || (first == "EXPLAIN" && w.len() <= 4 && !is(w.get(1), "select"))
    {
        let Some((db, t, _)) = table_name(&w, 1) else {
            return Err(Error::Syntax(sql.into()));
        };
        return describe(cx, db, &t, out).map(Some);
    }
    if first != "SHOW" {
        return Ok(None);
    }
    let mut i = 1;
    let full = is(w.get(i), "full");
    if full {
        i += 1;
    }
    let what = w.get(i).map(|s| s.to_ascii_uppercase()).unwrap_or_default();
    i += 1;
    let db_arg = |i: usize| -> Result<(String, usize)> {
        if is(w.get(i), "from") || is(w.get(i), "in") {
            let d = w
                .get(i + 1)
                .cloned()
                .ok_or_else(|| Error::Syntax(sql.into()))?;
            Ok((d, i + 2))
        } else {
            Ok((cx.current_db.clone().ok_or(Error::NoDatabaseSelected)?, i))
        }
    };
    match what.as_str() {
        "DATABASES" | "SCHEMAS" => {
            let pat = like_filter(&w, i);
            let mut names = vec!["information_schema".to_string()];
            names.extend(cx.catalog.databases());
            names.push("performance_schema".into());
            names.push(crate::catalog::systables::SCHEMA.into());
            names.sort();
            names.dedup();
            let rows = names
                .into_iter()
                .filter(|n| matches(n, &pat))
                .filter(|n| crate::catalog::is_open_schema(n) || cx.env.sees_database(n))
                .map(|n| vec![s(&n)])
                .collect();
            let title = match &pat {
                Some(p) => format!("Database ({p})"),
                None => "Database".into(),
            };
            send(out, vec![text_col(&title)], rows).map(Some)
        }
        "TABLES" => {
            let (db, i) = db_arg(i)?;
            if !cx.catalog.database_exists(&db) {
                return Err(Error::UnknownDatabase(db));
            }
            if !crate::catalog::is_open_schema(&db) && !cx.env.sees_database(&db) {
                return Err(Error::DbAccessDenied {
                    user: cx.env.user(),
                    host: "localhost".into(),
                    db,
                });
            }
            let pat = like_filter(&w, i);
            let title = match &pat {
                Some(p) => format!("Tables_in_{db} ({p})"),
                None => format!("Tables_in_{db}"),
            };
            let mut rows = Vec::new();
            let mut names: Vec<(String, &str)> = if db.eq_ignore_ascii_case("information_schema") {
                crate::catalog::infoschema::table_names()
                    .into_iter()
                    .chain(crate::catalog::systables::infoschema_table_names())
                    .map(|n| (n.to_string(), "SYSTEM VIEW"))
                    .collect()
            } else {
                // `mysql`: its account tables, then its own.
                let accounts = if db == crate::catalog::systables::SCHEMA {
                    crate::catalog::systables::mysql_table_names()
                } else {
                    Vec::new()
                };
                accounts
                    .into_iter()
                    .map(|n| (n.to_string(), "BASE TABLE"))
                    .chain(
                        cx.catalog
                            .tables(&db)?
                            .iter()
                            .map(|t| (t.def().name.clone(), "BASE TABLE")),
                    )
                    .chain(
                        cx.catalog
                            .views(&db)
                            .iter()
                            .map(|v| (v.name.clone(), "VIEW")),
                    )
                    .collect()
            };
            names.sort();
            for (name, kind) in names {
                if matches(&name, &pat) && cx.env.sees_table(&db, &name) {
                    let mut r = vec![s(&name)];
                    if full {
                        r.push(s(kind));
                    }
                    rows.push(r);
                }
            }
            let mut cols = vec![text_col(&title)];
            if full {
                cols.push(text_col("Table_type"));
            }
            send(out, cols, rows).map(Some)
        }
        "CREATE" => {
            let kind = what_next(&w, i - 1);
            if kind == "DATABASE" || kind == "SCHEMA" {
                let d = w
                    .get(i + 1)
                    .cloned()
                    .ok_or_else(|| Error::Syntax(sql.into()))?;
                if !cx.catalog.database_exists(&d) {
                    return Err(Error::UnknownDatabase(d));
                }
                let c = cx.catalog.database_collation(&d).unwrap_or_default();
                let text = format!(
                    "CREATE DATABASE {} /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */",
                    quote_ident(&d),
                    c.charset_name(),
                    c.name()
                );
                return send(
                    out,
                    vec![text_col("Database"), text_col("Create Database")],
                    vec![vec![s(&d), s(&text)]],
                )
                .map(Some);
            }
            if kind == "PROCEDURE" || kind == "FUNCTION" {
                let k = if kind == "PROCEDURE" {
                    crate::catalog::routines::RoutineKind::Procedure
                } else {
                    crate::catalog::routines::RoutineKind::Function
                };
                return crate::statements::show_programs::show_create_routine(
                    k,
                    &w,
                    i + 1,
                    cx,
                    out,
                )
                .map(Some);
            }
            if kind == "TRIGGER" {
                return crate::statements::show_programs::show_create_trigger(&w, i + 1, cx, out)
                    .map(Some);
            }
            if kind != "TABLE" && kind != "VIEW" {
                return Err(Error::NotSupported(format!("SHOW CREATE {kind}")));
            }
            let (db, t, _) = table_name(&w, i + 1).ok_or_else(|| Error::Syntax(sql.into()))?;
            let db = db
                .or(cx.current_db.clone())
                .ok_or(Error::NoDatabaseSelected)?;
            if let Some(v) = cx
                .catalog
                .view(&db, &t)
                .filter(|_| cx.temp_table(&db, &t).is_none())
            {
                // SHOW CREATE TABLE of a view shows the view, as MySQL does.
                return send(
                    out,
                    vec![
                        text_col("View"),
                        text_col("Create View"),
                        text_col("character_set_client"),
                        text_col("collation_connection"),
                    ],
                    vec![vec![
                        s(&t),
                        s(&crate::statements::views::show_create(&v)),
                        s(&v.character_set_client),
                        s(&v.collation_connection),
                    ]],
                )
                .map(Some);
            }
            let table = cx.table(&db, &t)?;
            if kind == "VIEW" {
                return Err(Error::WrongObject {
                    name: format!("{db}.{t}"),
                    expected: "VIEW",
                });
            }
            let mut text = show_create_table(table.def(), table.status().auto_increment);
            if cx.temp.holds(&table) {
                // MySQL prints a temporary table's statement with its keyword.
                text = text.replacen("CREATE TABLE", "CREATE TEMPORARY TABLE", 1);
            }
            send(
                out,
                vec![text_col("Table"), text_col("Create Table")],
                vec![vec![s(&t), s(&text)]],
            )
            .map(Some)
        }
        "COLUMNS" | "FIELDS" => {
            if !(is(w.get(i), "from") || is(w.get(i), "in")) {
                return Err(Error::Syntax(sql.into()));
            }
            let (db, t, j) = table_name(&w, i + 1).ok_or_else(|| Error::Syntax(sql.into()))?;
            let (db2, j) = if is(w.get(j), "from") || is(w.get(j), "in") {
                (w.get(j + 1).cloned(), j + 2)
            } else {
                (None, j)
            };
            let db = db
                .or(db2)
                .or(cx.current_db.clone())
                .ok_or(Error::NoDatabaseSelected)?;
            let pat = like_filter(&w, j);
            show_columns(cx, &db, &t, full, &pat, out).map(Some)
        }
        "INDEX" | "INDEXES" | "KEYS" => {
            if !(is(w.get(i), "from") || is(w.get(i), "in")) {
                return Err(Error::Syntax(sql.into()));
            }
            let (db, t, j) = table_name(&w, i + 1).ok_or_else(|| Error::Syntax(sql.into()))?;
            let db2 = if is(w.get(j), "from") || is(w.get(j), "in") {
                w.get(j + 1).cloned()
            } else {
                None
            };
            let db = db
                .or(db2)
                .or(cx.current_db.clone())
                .ok_or(Error::NoDatabaseSelected)?;
            show_index(cx, &db, &t, out).map(Some)
        }
        "TABLE" if is(w.get(i), "status") => {
            let (db, j) = db_arg(i + 1)?;
            let pat = like_filter(&w, j);
            show_table_status(cx, &db, &pat, out).map(Some)
        }
        "ENGINES" => {
            let mut rows = Vec::new();
            for e in cx.catalog.engines() {
                let name = engine_display(e.name());
                let support = if e.name() == cx.default_engine {
                    "DEFAULT"
                } else {
                    "YES"
                };
                let comment = if e.name() == "heap" {
                    "Strata heap: MyISAM-style data file, B-tree index file, key cache"
                } else {
                    "Strata btree: clustered B+tree, buffer pool, transactions"
                };
                // A transactional engine has savepoints (the session keeps them over the
                // engine's undo); XA where the engine implements its prepare.
                let tx = if e.transactional() { "YES" } else { "NO" };
                let xa = if e.supports_xa() { "YES" } else { "NO" };
                rows.push(vec![s(name), s(support), s(comment), s(tx), s(xa), s(tx)]);
            }
            let cols = [
                "Engine",
                "Support",
                "Comment",
                "Transactions",
                "XA",
                "Savepoints",
            ]
            .iter()
            .map(|c| text_col(c))
            .collect();
            send(out, cols, rows).map(Some)
        }
        "WARNINGS" | "ERRORS" => {
            let errors_only = what == "ERRORS";
            let rows = cx
                .env
                .warnings()
                .into_iter()
                .filter(|w| !errors_only || w.level == crate::expr::WarnLevel::Error)
                .map(|w| vec![s(w.level.name()), Value::Int(w.code as i64), s(&w.message)])
                .collect();
            send(
                out,
                vec![text_col("Level"), int_col("Code"), text_col("Message")],
                rows,
            )
            .map(Some)
        }
        "COUNT" => Err(Error::NotSupported("SHOW COUNT(*) WARNINGS".into())),
        "CHARACTER" | "CHARSET" => {
            let pat = like_filter(&w, if what == "CHARACTER" { i + 1 } else { i });
            let rows: Vec<Vec<Value>> = vec![
                vec![
                    s("binary"),
                    s("Binary pseudo charset"),
                    s("binary"),
                    Value::Int(1),
                ],
                vec![
                    s("utf8mb4"),
                    s("UTF-8 Unicode"),
                    s("utf8mb4_general_ci"),
                    Value::Int(4),
                ],
            ]
            .into_iter()
            .filter(|r| matches(&r[0].to_text(), &pat))
            .collect();
            let cols = vec![
                text_col("Charset"),
                text_col("Description"),
                text_col("Default collation"),
                int_col("Maxlen"),
            ];
            send(out, cols, rows).map(Some)
        }
        "COLLATION" => {
            let pat = like_filter(&w, i);
            let rows = [Collation::GeneralCi, Collation::Utf8Bin, Collation::Binary]
                .iter()
                .filter(|c| matches(c.name(), &pat))
                .map(|c| {
                    let cs = if *c == Collation::Binary {
                        "binary"
                    } else {
                        "utf8mb4"
                    };
                    let dflt = if *c == Collation::GeneralCi || *c == Collation::Binary {
                        "Yes"
                    } else {
                        ""
                    };
                    vec![
                        s(c.name()),
                        s(cs),
                        Value::Int(c.id() as i64),
                        s(dflt),
                        s("Yes"),
                        Value::Int(1),
                    ]
                })
                .collect();
            let cols = [
                "Collation",
                "Charset",
                "Id",
                "Default",
                "Compiled",
                "Sortlen",
            ]
            .iter()
            .map(|c| {
                if *c == "Id" || *c == "Sortlen" {
                    int_col(c)
                } else {
                    text_col(c)
                }
            })
            .collect();
            send(out, cols, rows).map(Some)
        }
        "TRIGGERS" => crate::statements::show_programs::show_triggers(&w, i, cx, out).map(Some),
        "PROCEDURE" | "FUNCTION" if is(w.get(i), "status") => {
            let k = if what == "PROCEDURE" {
                crate::catalog::routines::RoutineKind::Procedure
            } else {
                crate::catalog::routines::RoutineKind::Function
            };
            crate::statements::show_programs::show_routine_status(k, &w, i + 1, cx, out).map(Some)
        }
        "PROCESSLIST" => {
            let cols = [
                "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
            ]
            .iter()
            .map(|c| {
                if *c == "Id" || *c == "Time" {
                    int_col(c)
                } else {
                    text_col(c)
                }
            })
            .collect();
            let rows = cx
                .catalog
                .processes
                .rows()
                .into_iter()
                .map(|mut p| {
                    // Without FULL, MySQL shows the first 100 characters of a statement.
                    if !full {
                        if let Some(info) = &mut p.info {
                            if let Some((cut, _)) = info.char_indices().nth(100) {
                                info.truncate(cut);
                            }
                        }
                    }
                    crate::catalog::infoschema::process_row(p)
                })
                .collect();
            send(out, cols, rows).map(Some)
        }
        "VARIABLES" | "STATUS" | "SESSION" | "GLOBAL" => Ok(None),
        "MASTER" | "SLAVE" | "REPLICA" | "BINARY" => Err(Error::NotSupported(format!(
            "SHOW {what} (replication is not implemented)"
        ))),
        _ => Err(Error::NotSupported(format!("SHOW {what}"))),
    }
}

fn what_next(w: &[String], i: usize) -> String {
    w.get(i + 1)
        .map(|s| s.to_ascii_uppercase())
        .unwrap_or_default()
}

/// The column type as DESCRIBE and SHOW CREATE TABLE print it.
fn type_text(c: &strata_types::ColumnDef) -> String {
    c.type_text()
}

pub(crate) fn default_text(c: &strata_types::ColumnDef) -> Value {
    match &c.default {
        None => Value::Null,
        Some(ColumnDefault::CurrentTimestamp) => s(&c.current_timestamp_text()),
        Some(ColumnDefault::Value(v)) if v.is_null() => Value::Null,
        Some(ColumnDefault::Value(Value::Bits(b))) => s(&strata_types::value::bits_literal(b)),
        Some(ColumnDefault::Value(v)) => s(&v.to_text()),
        Some(ColumnDefault::Expr(t)) => s(t),
    }
}

fn key_text(def: &TableDef, col: usize) -> &'static str {
    for ix in def.indexes_in_shown_order() {
        if ix.columns.first() == Some(&col) {
            if ix.primary {
                return "PRI";
            }
            if ix.unique && ix.columns.len() == 1 {
                return "UNI";
            }
            return "MUL";
        }
    }
    ""
}

fn describe(
    cx: &ExecCtx,
    db: Option<String>,
    t: &str,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let db = db
        .or(cx.current_db.clone())
        .ok_or(Error::NoDatabaseSelected)?;
    show_columns(cx, &db, t, false, &None, out)
}

fn show_columns(
    cx: &ExecCtx,
    db: &str,
    t: &str,
    full: bool,
    pat: &Option<String>,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    if let Some(v) = cx.catalog.view(db, t) {
        return show_view_columns(cx, &v, full, pat, out);
    }
    let table = cx.table(db, t)?;
    let def = table.def();
    let mut rows = Vec::new();
    for (i, c) in def.columns.iter().enumerate() {
        if !matches(&c.name, pat) {
            continue;
        }
        let mut r = vec![s(&c.name), s(&type_text(c))];
        if full {
            r.push(if c.data_type.is_text() {
                s(c.collation.name())
            } else {
                Value::Null
            });
        }
        r.push(s(if c.nullable { "YES" } else { "NO" }));
        r.push(s(key_text(def, i)));
        r.push(default_text(c));
        r.push(s(&c.extra_text()));
        if full {
            r.push(s("select,insert,update,references"));
            r.push(s(&c.comment));
        }
        rows.push(r);
    }
    let mut names = vec!["Field", "Type"];
    if full {
        names.push("Collation");
    }
    names.extend(["Null", "Key", "Default", "Extra"]);
    if full {
        names.extend(["Privileges", "Comment"]);
    }
    send(out, names.iter().map(|n| text_col(n)).collect(), rows)
}

fn column_names(full: bool) -> Vec<ColumnMeta> {
    let mut names = vec!["Field", "Type"];
    if full {
        names.push("Collation");
    }
    names.extend(["Null", "Key", "Default", "Extra"]);
    if full {
        names.extend(["Privileges", "Comment"]);
    }
    names.iter().map(|n| text_col(n)).collect()
}

/// SHOW COLUMNS of a view: its columns as bound now.
fn show_view_columns(
    cx: &ExecCtx,
    v: &crate::catalog::views::ViewDef,
    full: bool,
    pat: &Option<String>,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    let mut rows = Vec::new();
    for c in crate::statements::views::view_columns(cx, v)? {
        if !matches(&c.name, pat) {
            continue;
        }
        let mut r = vec![s(&c.name), s(&c.type_text)];
        if full {
            r.push(c.collation.map_or(Value::Null, s));
        }
        r.push(s(if c.nullable { "YES" } else { "NO" }));
        r.push(s(""));
        r.push(c.default);
        r.push(s(""));
        if full {
            r.push(s("select,insert,update,references"));
            r.push(s(""));
        }
        rows.push(r);
    }
    send(out, column_names(full), rows)
}

fn show_index(cx: &ExecCtx, db: &str, t: &str, out: &mut dyn QueryOutput) -> Result<Outcome> {
    // A view has no indexes: an empty result, as MySQL gives.
    let view = cx.catalog.view(db, t).is_some();
    let table = if view { None } else { Some(cx.table(db, t)?) };
    let rows_est = table.as_ref().map_or(0, |t| t.status().rows as i64);
    let defs: Vec<_> = table.iter().map(|t| t.def().clone()).collect();
    let mut rows = Vec::new();
    for (ix, def) in defs.iter().flat_map(|d| {
        d.indexes_in_shown_order()
            .into_iter()
            .map(move |ix| (ix, d))
    }) {
        for (seq, &c) in ix.columns.iter().enumerate() {
            let col = &def.columns[c];
            rows.push(vec![
                s(&def.name),
                Value::Int(!ix.unique as i64),
                s(&ix.name),
                Value::Int(seq as i64 + 1),
                s(&col.name),
                s("A"),
                Value::Int(if ix.unique {
                    rows_est
                } else {
                    (rows_est / 2).max(1)
                }),
                Value::Null,
                Value::Null,
                s(if col.nullable { "YES" } else { "" }),
                s("BTREE"),
                s(""),
                s(&ix.comment),
                s(if ix.invisible { "NO" } else { "YES" }),
                Value::Null,
            ]);
        }
    }
    let names = [
        "Table",
        "Non_unique",
        "Key_name",
        "Seq_in_index",
        "Column_name",
        "Collation",
        "Cardinality",
        "Sub_part",
        "Packed",
        "Null",
        "Index_type",
        "Comment",
        "Index_comment",
        "Visible",
        "Expression",
    ];
    let cols = names
        .iter()
        .map(|n| {
            if matches!(
                *n,
                "Non_unique" | "Seq_in_index" | "Cardinality" | "Sub_part"
            ) {
                int_col(n)
            } else {
                text_col(n)
            }
        })
        .collect();
    send(out, cols, rows)
}

fn show_table_status(
    cx: &ExecCtx,
    db: &str,
    pat: &Option<String>,
    out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    if !cx.catalog.database_exists(db) {
        return Err(Error::UnknownDatabase(db.into()));
    }
    let mut rows = Vec::new();
    let mut tables = if db == crate::catalog::systables::SCHEMA {
        crate::catalog::systables::mysql_table_names()
            .into_iter()
            .map(|n| cx.table(db, n))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    tables.extend(cx.catalog.tables(db)?);
    for t in tables {
        let def = t.def();
        if !matches(&def.name, pat) {
            continue;
        }
        let st = t.status();
        let avg = st.data_length.checked_div(st.rows).unwrap_or(0);
        rows.push((
            def.name.clone(),
            vec![
                s(&def.name),
                s(engine_display(&def.engine)),
                Value::Int(10),
                s(def.row_format_shown()),
                Value::UInt(st.rows),
                Value::UInt(avg),
                Value::UInt(st.data_length),
                Value::UInt(0),
                Value::UInt(st.index_length),
                Value::UInt(st.data_free),
                if def.auto_increment_column().is_some() {
                    Value::UInt(st.auto_increment)
                } else {
                    Value::Null
                },
                crate::catalog::infoschema::created_time(
                    cx.catalog.table_created(&def.db, &def.name),
                    cx.time_zone_offset(),
                ),
                Value::Null,
                Value::Null,
                s(def.default_collation.name()),
                Value::Null,
                s(&def.options.information_schema_text()),
                s(&def.comment),
            ],
        ));
    }
    // A view: every column NULL but its name and the comment `VIEW`, as MySQL shows.
    for v in cx.catalog.views(db) {
        if !matches(&v.name, pat) {
            continue;
        }
        let mut r = vec![Value::Null; 18];
        r[0] = s(&v.name);
        r[17] = s("VIEW");
        rows.push((v.name.clone(), r));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let rows: Vec<Vec<Value>> = rows.into_iter().map(|(_, r)| r).collect();
    let names = [
        "Name",
        "Engine",
        "Version",
        "Row_format",
        "Rows",
        "Avg_row_length",
        "Data_length",
        "Max_data_length",
        "Index_length",
        "Data_free",
        "Auto_increment",
        "Create_time",
        "Update_time",
        "Check_time",
        "Collation",
        "Checksum",
        "Create_options",
        "Comment",
    ];
    let cols = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if (2..=10).contains(&i) && i != 3 {
                int_col(n)
            } else {
                text_col(n)
            }
        })
        .collect();
    send(out, cols, rows)
}

pub(crate) fn quote_ident(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

fn quote_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bits(b) => strata_types::value::bits_literal(b),
        other => format!(
            "'{}'",
            other.to_text().replace('\\', "\\\\").replace('\'', "''")
        ),
    }
}

/// The CREATE TABLE statement that recreates a table (SHOW CREATE TABLE, mysqldump).
/// MySQL 8.0.23's INVISIBLE, in the versioned comment mysqldump output carries (older
/// servers read the column as visible); after the default, before the COMMENT.
fn push_invisible(l: &mut String, c: &strata_types::ColumnDef) {
    if c.invisible {
        l.push_str(" /*!80023 INVISIBLE */");
    }
}

pub fn show_create_table(def: &TableDef, next_auto: u64) -> String {
    let mut lines = Vec::new();
    for c in &def.columns {
        let mut l = format!("  {} {}", quote_ident(&c.name), type_text(c));
        if c.data_type.is_text() {
            // MySQL 8: the character set when the collation is not the table's, the
            // collation when it is not its character set's default.
            if c.collation != def.default_collation {
                l.push_str(&format!(" CHARACTER SET {}", c.collation.charset_name()));
            }
            if !c.collation.is_primary() {
                l.push_str(&format!(" COLLATE {}", c.collation.name()));
            }
        }
        if let Some(g) = &c.generated {
            // MySQL 8: `c int GENERATED ALWAYS AS ((`a` + 1)) VIRTUAL NOT NULL`, and no
            // DEFAULT clause.
            let kind = if g.stored { "STORED" } else { "VIRTUAL" };
            l.push_str(&format!(" GENERATED ALWAYS AS ({}) {kind}", g.expr));
            if !c.nullable {
                l.push_str(" NOT NULL");
            }
            push_invisible(&mut l, c);
            push_comment(&mut l, &c.comment);
            lines.push(l);
            continue;
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        } else if matches!(c.data_type, strata_types::DataType::Timestamp { .. }) {
            l.push_str(" NULL");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        match &c.default {
            Some(ColumnDefault::CurrentTimestamp) => {
                l.push_str(&format!(" DEFAULT {}", c.current_timestamp_text()))
            }
            Some(ColumnDefault::Value(v)) => l.push_str(&format!(" DEFAULT {}", quote_value(v))),
            Some(ColumnDefault::Expr(t)) => l.push_str(&format!(" DEFAULT ({t})")),
            None if c.nullable
                && !matches!(
                    c.data_type,
                    strata_types::DataType::Blob(_) | strata_types::DataType::Text(_)
                ) =>
            {
                l.push_str(" DEFAULT NULL")
            }
            None => {}
        }
        if c.on_update_now {
            l.push_str(&format!(" ON UPDATE {}", c.current_timestamp_text()));
        }
        push_invisible(&mut l, c);
        push_comment(&mut l, &c.comment);
        lines.push(l);
    }
    for ix in def.indexes_in_shown_order() {
        let cols = ix
            .columns
            .iter()
            .map(|&c| quote_ident(&def.columns[c].name))
            .collect::<Vec<_>>()
            .join(",");
        let mut l = if ix.primary {
            format!("  PRIMARY KEY ({cols})")
        } else if ix.unique {
            format!("  UNIQUE KEY {} ({cols})", quote_ident(&ix.name))
        } else {
            format!("  KEY {} ({cols})", quote_ident(&ix.name))
        };
        push_comment(&mut l, &ix.comment);
        if ix.invisible {
            // MySQL 8's form: a server before 8.0 reads the key as visible.
            l.push_str(" /*!80000 INVISIBLE */");
        }
        lines.push(l);
    }
    lines.extend(crate::constraints::show::create_lines(def));
    let mut text = format!(
        "CREATE TABLE {} (\n{}\n) ENGINE={}",
        quote_ident(&def.name),
        lines.join(",\n"),
        engine_display(&def.engine)
    );
    if def.auto_increment_column().is_some() && next_auto > 1 {
        text.push_str(&format!(" AUTO_INCREMENT={next_auto}"));
    }
    text.push_str(&table_charset_clause(def.default_collation));
    text.push_str(&def.options.create_clause());
    if !def.comment.is_empty() {
        text.push_str(&format!(" COMMENT={}", comment_literal(&def.comment)));
    }
    text
}

/// ` DEFAULT CHARSET=… COLLATE=…` of SHOW CREATE TABLE (MySQL 8 names the collation of
/// every character set but binary).
fn table_charset_clause(c: Collation) -> String {
    match c {
        Collation::Binary => " DEFAULT CHARSET=binary".into(),
        c => format!(" DEFAULT CHARSET={} COLLATE={}", c.charset_name(), c.name()),
    }
}

/// ` COMMENT '…'` after a column or index definition, when it has one.
fn push_comment(l: &mut String, comment: &str) {
    if !comment.is_empty() {
        l.push_str(" COMMENT ");
        l.push_str(&comment_literal(comment));
    }
}

/// A comment as SHOW CREATE TABLE quotes it (MySQL's `append_unescaped`): `'` doubled,
/// backslash, NUL, newline and carriage return escaped, everything else as written,
/// so the text reads back as the same comment.
pub(crate) fn comment_literal(text: &str) -> String {
    let mut o = String::with_capacity(text.len() + 2);
    o.push('\'');
    for ch in text.chars() {
        match ch {
            '\0' => o.push_str("\\0"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("''"),
            c => o.push(c),
        }
    }
    o.push('\'');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_quotes_and_punctuation() {
        let w = words("SHOW TABLES FROM `my db` LIKE 'a%';");
        assert_eq!(
            w,
            vec!["SHOW", "TABLES", "FROM", "my db", "LIKE", "\u{0}a%"]
        );
        assert_eq!(words("DESC d.t"), vec!["DESC", "d", ".", "t"]);
    }

    #[test]
    fn comments_quote_as_mysql_appends_them() {
        assert_eq!(comment_literal("it's"), "'it''s'");
        assert_eq!(comment_literal("a\\b\nc\r\0"), "'a\\\\b\\nc\\r\\0'");
        assert_eq!(comment_literal("naïve \"x\""), "'naïve \"x\"'");
    }
}
