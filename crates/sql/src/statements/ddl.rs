//! Data definition: CREATE/DROP DATABASE, CREATE TABLE (types, NULL/NOT NULL, DEFAULT,
//! AUTO_INCREMENT, ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY, UNIQUE, KEY/INDEX,
//! ENGINE=, CHARSET/COLLATE), DROP TABLE, TRUNCATE; ALTER TABLE, CREATE/DROP INDEX and
//! RENAME TABLE are dispatched from here to [`crate::statements::alter`]. A table
//! definition is checked here the way MySQL checks it (one primary key, one
//! AUTO_INCREMENT column that leads a key, known columns in keys) before the catalog
//! asks the engine to create files.
//!
//! [`execute_other`] is the one entry point of DDL: before anything else it takes the
//! statement's exclusive metadata locks (`ddl_locks::lock_for_ddl`), so no transaction
//! that used a table is still open when its definition or files change. Every DDL
//! statement added here (ALTER TABLE, RENAME TABLE) gets them by going through it.

use crate::bind::literal;
use crate::catalog::engines::engine_name;
use crate::context::{ExecCtx, Outcome, TableLocks};
use crate::expr::convert::coerce;
use crate::parse::object_name_parts;
use sqlparser::ast;
use strata_engine::LockMode;
use strata_types::schema::ColumnDefault;
use strata_types::{
    Collation, ColumnDef, DataType, Error, IndexDef, QueryOutput, Result, TableDef, Value,
};

/// `done`, after refreshing the views' column descriptions when it succeeded
/// (`views::refresh_columns`).
fn with_view_columns(done: Result<Outcome>, cx: &ExecCtx) -> Result<Outcome> {
    let outcome = done?;
    crate::statements::views::refresh_columns(cx)?;
    Ok(outcome)
}

pub fn execute_other(
    stmt: &ast::Statement,
    cx: &mut ExecCtx,
    _out: &mut dyn QueryOutput,
) -> Result<Outcome> {
    use ast::Statement as S;
    // A session's temporary tables: no metadata locks, no base table touched.
    if let Some(done) = crate::statements::temporary::execute(stmt, cx) {
        return done;
    }
    crate::statements::ddl_locks::lock_for_ddl(stmt, cx)?;
    match stmt {
        S::CreateDatabase {
            db_name,
            if_not_exists,
            default_charset,
            default_collation,
            ..
        } => {
            let name = single_name(db_name)?;
            let collation =
                super::charsets::resolve(default_charset.as_deref(), default_collation.as_deref())?
                    .unwrap_or_default();
            let created = cx
                .catalog
                .create_database(&name, *if_not_exists, collation)?;
            Ok(Outcome::ok(created as u64))
        }
        S::AlterSchema(a) => alter_database(a, cx),
        S::CreateSchema {
            schema_name,
            if_not_exists,
            ..
        } => {
            let name = schema_name.to_string().trim_matches('`').to_string();
            let created = cx
                .catalog
                .create_database(&name, *if_not_exists, Default::default())?;
            Ok(Outcome::ok(created as u64))
        }
        // DDL that can change the columns views read describes the views afresh.
        S::CreateTable(ct) => with_view_columns(create_table(ct, cx), cx),
        S::CreateIndex(ci) => crate::statements::alter::create_index(ci, cx),
        S::AlterTable(at) => with_view_columns(crate::statements::alter::alter_table(at, cx), cx),
        S::RenameTable(r) => with_view_columns(crate::statements::alter::rename_tables(r, cx), cx),
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            ..
        } => match object_type {
            ast::ObjectType::Table => {
                let mut missing = Vec::new();
                let all = names
                    .iter()
                    .map(|n| crate::context::resolve_table(cx, n))
                    .collect::<Result<Vec<_>>>()?;
                // A temporary table of the name goes first, as in MySQL.
                let all = crate::statements::temporary::drop_shadowing(all, cx)?;
                for (db, t) in &all {
                    crate::constraints::guards::check_drop(cx, db, t, &all)?;
                }
                for (db, t) in all {
                    match cx.catalog.drop_table(&db, &t) {
                        Ok(()) => {}
                        Err(Error::UnknownTable(_)) if *if_exists => {}
                        Err(Error::UnknownTable(name)) => missing.push(name),
                        Err(e) => return Err(e),
                    }
                }
                if !missing.is_empty() {
                    return Err(Error::UnknownTable(missing.join(",")));
                }
                Ok(Outcome::ok(0))
            }
            ast::ObjectType::View => crate::statements::views::drop_views(names, *if_exists, cx),
            ast::ObjectType::Database | ast::ObjectType::Schema => {
                let name = single_name(
                    names
                        .first()
                        .ok_or_else(|| Error::Syntax("DROP DATABASE".into()))?,
                )?;
                match cx.catalog.drop_database(&name, *if_exists)? {
                    Some(n) => {
                        if cx.current_db.as_deref() == Some(name.as_str()) {
                            cx.current_db = None;
                        }
                        Ok(Outcome::ok(n as u64))
                    }
                    None => Ok(Outcome::ok(0)),
                }
            }
            ast::ObjectType::Index => {
                let table = table
                    .as_ref()
                    .ok_or_else(|| Error::Syntax("DROP INDEX needs ON table".into()))?;
                let index = names
                    .first()
                    .ok_or_else(|| Error::Syntax("DROP INDEX".into()))?;
                crate::statements::alter::drop_index(index, table, cx)
            }
            other => Err(Error::NotSupported(format!("DROP {other}"))),
        },
        S::Truncate(t) => {
            for target in &t.table_names {
                let (db, name) = crate::context::resolve_table(cx, &target.name)?;
                if let Some(t) = cx.temp_table(&db, &name) {
                    crate::statements::temporary::truncate(cx, &t)?;
                    continue;
                }
                let mut table = cx.table(&db, &name)?;
                crate::constraints::guards::check_truncate(cx, &db, &name)?;
                // TRUNCATE starts AUTO_INCREMENT again at 1, as MySQL, whatever the table
                // was created or last rebuilt with (an ALTER copy carries its counter in
                // the definition): the catalog first, so a restart agrees.
                if table.def().auto_increment_start > 1 {
                    let mut def = TableDef::clone(table.def());
                    def.auto_increment_start = 1;
                    cx.catalog.alter_in_place(&table, def, Vec::new())?;
                    table = cx.table(&db, &name)?;
                }
                let mut locks = TableLocks::default();
                cx.lock_table(&mut locks, &db, &name, &table, LockMode::Write)?;
                table.truncate()?;
            }
            Ok(Outcome::ok(0))
        }
        other => {
            let text = other.to_string();
            let head: String = text
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            Err(Error::NotSupported(head))
        }
    }
}

pub(crate) fn single_name(n: &ast::ObjectName) -> Result<String> {
    let parts = object_name_parts(n);
    match parts.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::Syntax(n.to_string())),
    }
}

pub(crate) fn index_columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(id) => Ok(id.value.clone()),
            ast::Expr::Function(f) => {
                // KEY (c(10)): a prefix index; indexed here on the whole column.
                Ok(object_name_parts(&f.name).join("."))
            }
            other => Err(Error::NotSupported(format!("index on expression {other}"))),
        })
        .collect()
}

/// `ALTER DATABASE|SCHEMA [name] [DEFAULT] CHARACTER SET x [DEFAULT] COLLATE y`, as
/// `parse::alter_clauses` rewrote it: the database's default collation, which tables
/// created from now on take (its tables keep theirs, as in MySQL).
fn alter_database(a: &ast::AlterSchema, cx: &mut ExecCtx) -> Result<Outcome> {
    let [ast::AlterSchemaOperation::SetOptionsParens { options }] = a.operations.as_slice() else {
        return Err(Error::NotSupported("this ALTER SCHEMA form".into()));
    };
    let db = crate::parse::alter_clauses::altered_database(a, cx.current_db.as_deref())
        .ok_or(Error::NoDatabaseSelected)?;
    let (mut charset, mut collation) = (None, None);
    let options =
        crate::parse::alter_clauses::internal_options(options, "ALTER SCHEMA … SET OPTIONS")?;
    for (key, text) in options {
        match key.as_str() {
            "CHARSET" => charset = Some(text),
            _ => collation = Some(text),
        }
    }
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    let c = super::charsets::resolve(charset.as_deref(), collation.as_deref())?.unwrap_or_default();
    cx.catalog.alter_database_collation(&db, c)?;
    Ok(Outcome::ok(1))
}

fn create_table(ct: &ast::CreateTable, cx: &mut ExecCtx) -> Result<Outcome> {
    if let Some(q) = &ct.query {
        return crate::statements::create_select::create_table_select(ct, q, cx);
    }
    if let Some(like) = &ct.like {
        let (ast::CreateTableLikeKind::Parenthesized(l) | ast::CreateTableLikeKind::Plain(l)) =
            like;
        return create_table_like(ct, &l.name, cx);
    }
    let def = table_def(ct, cx, Vec::new())?;
    let name = def.name.clone();
    if !cx.catalog.create_table(def, ct.if_not_exists)? {
        return name_in_use(&name, true, cx);
    }
    Ok(Outcome::ok(0))
}

/// CREATE TABLE of a name in use: with IF NOT EXISTS a note 1050 and nothing done
/// (MySQL 8), otherwise error 1050.
pub(crate) fn name_in_use(name: &str, if_not_exists: bool, cx: &ExecCtx) -> Result<Outcome> {
    if !if_not_exists {
        return Err(Error::TableExists(name.to_string()));
    }
    cx.env.warn(
        crate::expr::WarnLevel::Note,
        1050,
        format!("Table '{name}' already exists"),
    );
    Ok(Outcome::ok(0))
}

/// The definition CREATE TABLE gives: its column definitions, then `selected` (the
/// columns of CREATE TABLE … SELECT that the column definitions do not name, as MySQL
/// appends them), its keys, constraints and options, checked as MySQL checks them.
pub(crate) fn table_def(
    ct: &ast::CreateTable,
    cx: &mut ExecCtx,
    selected: Vec<ColumnDef>,
) -> Result<TableDef> {
    let (db, name) = crate::context::resolve_table(cx, &ct.name)?;
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    let available: Vec<&str> = cx.catalog.engines().iter().map(|e| e.name()).collect();
    let mut engine = cx.default_engine.to_string();
    let mut substituted = false;
    let (mut table_charset, mut table_collate) = (None::<String>, None::<String>);
    let mut auto_start = 1u64;
    let mut comment = String::new();
    let mut table_options = strata_types::TableOptions::default();
    let opts: &[ast::SqlOption] = match &ct.table_options {
        ast::CreateTableOptions::None => &[],
        ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o)
        | ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::TableProperties(o) => o,
    };
    for o in opts {
        match o {
            ast::SqlOption::KeyValue { key, value } => {
                let v = match value {
                    ast::Expr::Identifier(i) => i.value.clone(),
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                            s.clone()
                        }
                        other => other.to_string(),
                    },
                    ast::Expr::Function(f) => object_name_parts(&f.name).join("."),
                    other => other.to_string(),
                };
                match key.value.to_ascii_uppercase().replace(' ', "_").as_str() {
                    "ENGINE" => {
                        engine = engine_or_substitute(&v, &available, cx, &mut substituted)?
                    }
                    "COLLATE" | "DEFAULT_COLLATE" => table_collate = Some(v),
                    "AUTO_INCREMENT" => auto_start = v.parse().unwrap_or(1),
                    "COMMENT" => comment = v,
                    "CHARSET" | "DEFAULT_CHARSET" | "CHARACTER_SET" | "DEFAULT_CHARACTER_SET" => {
                        table_charset = Some(v)
                    }
                    other => {
                        table_options.set(other, &v).map_err(Error::Syntax)?;
                    }
                }
            }
            ast::SqlOption::Comment(c) => {
                comment = match c {
                    ast::CommentDef::WithEq(s) | ast::CommentDef::WithoutEq(s) => s.clone(),
                }
            }
            // sqlparser gives `ENGINE = name` its own shape.
            ast::SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("ENGINE") =>
            {
                if let Some(n) = &l.name {
                    engine = engine_or_substitute(&n.value, &available, cx, &mut substituted)?;
                }
            }
            _ => {}
        }
    }
    // The table's default collation: its own options', else its database's (MySQL).
    let table_coll = super::charsets::resolve(table_charset.as_deref(), table_collate.as_deref())?
        .unwrap_or_else(|| cx.catalog.database_collation(&db).unwrap_or_default());
    if substituted {
        cx.env.warn(
            crate::expr::WarnLevel::Warning,
            1266,
            format!(
                "Using storage engine {} for table '{name}'",
                crate::catalog::engines::engine_display(&engine)
            ),
        );
    }
    let mut columns = Vec::new();
    let mut indexes: Vec<IndexDef> = Vec::new();
    let mut inline_pk = None;
    let mut fks = Vec::new();
    let mut checks = Vec::new();
    for c in &ct.columns {
        if columns
            .iter()
            .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&c.name.value))
        {
            return Err(Error::DuplicateColumn(c.name.value.clone()));
        }
        let built = build_column(c, table_coll, cx.sql_mode)?;
        if built.col.real_unsigned {
            cx.env.warn(
                crate::expr::WarnLevel::Warning,
                1681,
                UNSIGNED_REAL_DEPRECATED.into(),
            );
        }
        if built.primary {
            inline_pk = Some(columns.len());
        }
        if built.unique {
            indexes.push(IndexDef {
                invisible: false,
                name: c.name.value.clone(),
                columns: vec![columns.len()],
                unique: true,
                primary: false,
                comment: String::new(),
            });
        }
        checks.extend(built.checks);
        columns.push(built.col);
    }
    if !selected.is_empty() {
        // MySQL's order: the declared columns the query does not name, then the query's
        // columns, one of a declared name taking the declared definition (and its
        // inline keys) at the query's place.
        let mut seen: Vec<String> = Vec::new();
        for c in &selected {
            if seen.iter().any(|s| s.eq_ignore_ascii_case(&c.name)) {
                return Err(Error::DuplicateColumn(c.name.clone()));
            }
            seen.push(c.name.clone());
        }
        let named = |n: &str| seen.iter().any(|s| s.eq_ignore_ascii_case(n));
        let mut declared: Vec<Option<ColumnDef>> = columns.drain(..).map(Some).collect();
        let mut moved = vec![0usize; declared.len()];
        for (i, d) in declared.iter_mut().enumerate() {
            if d.as_ref().is_some_and(|c| !named(&c.name)) {
                moved[i] = columns.len();
                columns.extend(d.take());
            }
        }
        for c in selected {
            let at = declared.iter().position(|d| {
                d.as_ref()
                    .is_some_and(|d| d.name.eq_ignore_ascii_case(&c.name))
            });
            match at {
                Some(i) => {
                    moved[i] = columns.len();
                    columns.extend(declared[i].take());
                }
                None => columns.push(c),
            }
        }
        inline_pk = inline_pk.map(|i| moved[i]);
        for ix in &mut indexes {
            for c in &mut ix.columns {
                *c = moved[*c];
            }
        }
    }
    if columns.is_empty() {
        return Err(Error::Syntax(
            "a table must have at least one column".into(),
        ));
    }
    let mut primary: Option<Vec<usize>> = inline_pk.map(|c| vec![c]);
    let find = |name: &str, cols: &[ColumnDef]| {
        cols.iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::KeyColumnMissing(name.to_string()))
    };
    let mut primary_comment = String::new();
    let mut primary_invisible = false;
    for con in &ct.constraints {
        match con {
            ast::TableConstraint::PrimaryKey(pk) => {
                if primary.is_some() {
                    return Err(Error::MultiplePrimaryKey);
                }
                let cols = index_columns(&pk.columns)?
                    .iter()
                    .map(|c| find(c, &columns))
                    .collect::<Result<Vec<_>>>()?;
                primary = Some(cols);
                primary_comment = index_comment(&pk.index_options, "PRIMARY")?;
                primary_invisible = index_invisible(&pk.index_options);
            }
            ast::TableConstraint::Unique(u) => {
                let names = index_columns(&u.columns)?;
                let cols = names
                    .iter()
                    .map(|c| find(c, &columns))
                    .collect::<Result<Vec<_>>>()?;
                let name = u
                    .index_name
                    .as_ref()
                    .or(u.name.as_ref())
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| names[0].clone());
                let comment = index_comment(&u.index_options, &name)?;
                indexes.push(IndexDef {
                    invisible: index_invisible(&u.index_options),
                    name,
                    columns: cols,
                    unique: true,
                    primary: false,
                    comment,
                });
            }
            ast::TableConstraint::Index(ix) => {
                let names = index_columns(&ix.columns)?;
                let cols = names
                    .iter()
                    .map(|c| find(c, &columns))
                    .collect::<Result<Vec<_>>>()?;
                let name = ix
                    .name
                    .as_ref()
                    .map(|i| i.value.clone())
                    .unwrap_or_else(|| names[0].clone());
                let comment = index_comment(&ix.index_options, &name)?;
                indexes.push(IndexDef {
                    invisible: index_invisible(&ix.index_options),
                    name,
                    columns: cols,
                    unique: false,
                    primary: false,
                    comment,
                });
            }
            ast::TableConstraint::ForeignKey(fk) => {
                fks.push(crate::constraints::definition::clause(cx, fk, None)?)
            }
            ast::TableConstraint::Check(c) => {
                checks.push(crate::constraints::checks::CheckClause::table_level(c))
            }
            other => return Err(Error::NotSupported(other.to_string())),
        }
    }
    // Unnamed keys that collide get MySQL's _2, _3 suffixes.
    let mut seen: Vec<String> = Vec::new();
    for ix in &mut indexes {
        if seen.iter().any(|s| s.eq_ignore_ascii_case(&ix.name)) {
            let base = ix.name.clone();
            let mut n = 2;
            while seen
                .iter()
                .any(|s| s.eq_ignore_ascii_case(&format!("{base}_{n}")))
            {
                n += 1;
            }
            ix.name = format!("{base}_{n}");
        }
        if ix.name.eq_ignore_ascii_case("PRIMARY") {
            return Err(Error::DuplicateKeyName(ix.name.clone()));
        }
        seen.push(ix.name.clone());
    }
    if let Some(pk) = primary {
        for &c in &pk {
            columns[c].nullable = false;
        }
        indexes.insert(
            0,
            IndexDef {
                invisible: primary_invisible,
                name: "PRIMARY".into(),
                columns: pk,
                unique: true,
                primary: true,
                comment: primary_comment,
            },
        );
    }
    check_key_types(&columns, &indexes)?;
    let autos: Vec<usize> = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.auto_increment)
        .map(|(i, _)| i)
        .collect();
    if autos.len() > 1
        || autos
            .first()
            .is_some_and(|a| !indexes.iter().any(|ix| ix.columns[0] == *a))
    {
        return Err(Error::WrongAutoKey);
    }
    if let Some(&a) = autos.first() {
        if !columns[a].data_type.is_integer()
            && !matches!(
                columns[a].data_type,
                DataType::Double { .. } | DataType::Float { .. }
            )
        {
            return Err(Error::WrongAutoKey);
        }
    }
    check_table_comment(&name, &comment)?;
    let mut def = TableDef {
        db,
        name,
        engine,
        columns,
        indexes,
        auto_increment_start: auto_start.max(1),
        comment,
        foreign_keys: Vec::new(),
        checks: Vec::new(),
        instant: None,
        default_collation: table_coll,
        options: table_options,
    };
    super::column_expr::validate_table(&def)?;
    check_table_options(&def)?;
    crate::constraints::definition::add_foreign_keys(cx, &mut def, &fks)?;
    crate::constraints::checks::add_checks(cx, &mut def, &checks)?;
    crate::constraints::checks::recheck_fk_columns(&def)?;
    Ok(def)
}

/// `CREATE TABLE [IF NOT EXISTS] new LIKE old`: the columns, indexes, CHECK
/// constraints, engine and comment of `old`, as MySQL copies them — not its rows, its
/// foreign keys or its AUTO_INCREMENT counter. The CHECK constraints are named anew
/// (`new_chk_1`, …), since a schema's constraint names are unique. LIKE a view is 1347.
fn create_table_like(
    ct: &ast::CreateTable,
    source: &ast::ObjectName,
    cx: &mut ExecCtx,
) -> Result<Outcome> {
    let def = like_def(ct, source, cx)?;
    cx.catalog.create_table(def, ct.if_not_exists)?;
    Ok(Outcome::ok(0))
}

/// The definition `CREATE [TEMPORARY] TABLE ct LIKE source` gives (the source may be a
/// temporary table of the session, which hides a base table of its name).
pub(crate) fn like_def(
    ct: &ast::CreateTable,
    source: &ast::ObjectName,
    cx: &ExecCtx,
) -> Result<TableDef> {
    let (src_db, src_name) = crate::context::resolve_table(cx, source)?;
    if cx.temp_table(&src_db, &src_name).is_none() && cx.catalog.view(&src_db, &src_name).is_some()
    {
        return Err(Error::WrongObject {
            name: format!("{src_db}.{src_name}"),
            expected: "BASE TABLE",
        });
    }
    let (db, name) = crate::context::resolve_table(cx, &ct.name)?;
    if !cx.catalog.database_exists(&db) {
        return Err(Error::UnknownDatabase(db));
    }
    let old = cx.table(&src_db, &src_name)?.def().clone();
    let checks = old
        .checks
        .iter()
        .enumerate()
        .map(|(i, c)| strata_types::CheckDef {
            name: format!("{name}_chk_{}", i + 1),
            ..c.clone()
        })
        .collect();
    let def = TableDef {
        db,
        name,
        engine: old.engine.clone(),
        columns: old.columns.clone(),
        indexes: old.indexes.clone(),
        auto_increment_start: 1,
        comment: old.comment.clone(),
        foreign_keys: Vec::new(),
        checks,
        instant: None,
        default_collation: old.default_collation,
        // CREATE TABLE … LIKE copies the table options, as MySQL does.
        options: old.options.clone(),
    };
    Ok(def)
}

/// An index's `COMMENT '…'` among its options (empty: none); over 1024 characters is
/// 1688, as MySQL 8 in strict mode (Strata in every mode).
pub(crate) fn index_comment(opts: &[ast::IndexOption], index: &str) -> Result<String> {
    let mut comment = String::new();
    for o in opts {
        if let ast::IndexOption::Comment(c) = o {
            comment = c.clone();
        }
    }
    if comment.chars().count() > 1024 {
        return Err(Error::CommentTooLong {
            what: "index",
            name: index.to_string(),
            max: 1024,
        });
    }
    Ok(comment)
}

/// The table options the table's engine cannot have: ROW_FORMAT=FIXED on the btree
/// engine (InnoDB has no fixed-length rows; MySQL 8's strict InnoDB refuses it), 1031.
pub(crate) fn check_table_options(def: &TableDef) -> Result<()> {
    if def.engine == "btree" && def.options.row_format.as_deref() == Some("FIXED") {
        return Err(Error::IllegalCreateOption(def.name.clone()));
    }
    Ok(())
}

/// Whether an index's options hold MySQL 8's `INVISIBLE`, which the parser's token
/// rewrite turns into the internal index type `USING [INVISIBLE]`
/// (`parse::token_rewrite::INVISIBLE_INDEX`); `VISIBLE` is the default.
pub(crate) fn index_invisible(opts: &[ast::IndexOption]) -> bool {
    opts.iter().any(|o| {
        matches!(o, ast::IndexOption::Using(ast::IndexType::Custom(id))
            if id.quote_style == Some(crate::parse::token_rewrite::INTERNAL_QUOTE)
                && id.value == crate::parse::token_rewrite::INVISIBLE_INDEX)
    })
}

/// MySQL's limit on a table's COMMENT (2048 characters, 1628); beyond it MySQL
/// truncates with a warning outside strict mode, Strata refuses in every mode.
pub(crate) fn check_table_comment(table: &str, comment: &str) -> Result<()> {
    if comment.chars().count() > 2048 {
        return Err(Error::CommentTooLong {
            what: "table",
            name: table.to_string(),
            max: 2048,
        });
    }
    Ok(())
}

/// MySQL 8's warning 1681 for UNSIGNED on a DECIMAL, FLOAT or DOUBLE column.
pub(crate) const UNSIGNED_REAL_DEPRECATED: &str = "UNSIGNED for decimal and floating point \
     data types is deprecated and support for it will be removed in a future release.";

/// DECIMAL/FLOAT/DOUBLE/REAL … UNSIGNED as the signed type it stores (the column keeps
/// the UNSIGNED in [`ColumnDef::real_unsigned`]); None for any other type.
fn signed_real(t: &ast::DataType) -> Option<ast::DataType> {
    use ast::DataType as D;
    Some(match t {
        D::DecimalUnsigned(i) => D::Decimal(*i),
        D::DecUnsigned(i) => D::Dec(*i),
        D::FloatUnsigned(i) => D::Float(*i),
        D::DoubleUnsigned(i) => D::Double(*i),
        D::DoublePrecisionUnsigned => D::DoublePrecision,
        D::RealUnsigned => D::Real,
        _ => return None,
    })
}

/// FLOAT / DOUBLE with MySQL's forms and checks: FLOAT(p) is a FLOAT for p ≤ 24 and a
/// DOUBLE for p ≤ 53 (past that 1063); DOUBLE(p) is a syntax error; FLOAT(M,D) and
/// DOUBLE(M,D) keep (M, D), with M ≤ 255 (1439), D ≤ 30 (1425) and D ≤ M (1427).
fn real_type(info: &ast::ExactNumberInfo, col: &str, double: bool) -> Result<DataType> {
    let plain = |double: bool| {
        if double {
            DataType::Double { fixed: None }
        } else {
            DataType::Float { fixed: None }
        }
    };
    match *info {
        ast::ExactNumberInfo::None => Ok(plain(double)),
        ast::ExactNumberInfo::Precision(_) if double => Err(Error::Syntax(format!(
            "DOUBLE takes no single precision (column '{col}'): use DOUBLE or DOUBLE(M,D)"
        ))),
        ast::ExactNumberInfo::Precision(p) if p <= 24 => Ok(plain(false)),
        ast::ExactNumberInfo::Precision(p) if p <= 53 => Ok(plain(true)),
        ast::ExactNumberInfo::Precision(_) => Err(Error::WrongFieldSpec(col.to_string())),
        ast::ExactNumberInfo::PrecisionAndScale(m, d) => {
            if m > 255 {
                return Err(Error::TooBigDisplayWidth {
                    column: col.to_string(),
                    max: 255,
                });
            }
            if d > 30 {
                return Err(Error::TooBigScale {
                    scale: d.unsigned_abs(),
                    column: col.to_string(),
                });
            }
            if d < 0 || d as u64 > m {
                return Err(Error::ScaleAbovePrecision(col.to_string()));
            }
            let fixed = Some((m as u8, d as u8));
            Ok(if double {
                DataType::Double { fixed }
            } else {
                DataType::Float { fixed }
            })
        }
    }
}

/// A column of CREATE TABLE or ALTER TABLE, and whether its options made it the
/// primary key or gave it a unique index.
pub(crate) struct BuiltColumn {
    pub col: ColumnDef,
    pub primary: bool,
    pub unique: bool,
    /// Column-level CHECK constraints.
    pub checks: Vec<crate::constraints::checks::CheckClause>,
}

/// Builds a column definition from its SQL: type, NULL-ness, default, AUTO_INCREMENT,
/// ON UPDATE, charset and collation (`table_coll` for text columns that name none).
pub(crate) fn build_column(
    c: &ast::ColumnDef,
    table_coll: Collation,
    sql_mode: strata_types::SqlMode,
) -> Result<BuiltColumn> {
    let mut primary = false;
    let mut unique = false;
    let (signed, real_unsigned) = match signed_real(&c.data_type) {
        Some(t) => (t, true),
        None => (c.data_type.clone(), false),
    };
    let (data_type, forced_coll) = column_type(&signed, &c.name.value, sql_mode)?;
    let mut col = ColumnDef {
        name: c.name.value.clone(),
        data_type,
        nullable: true,
        default: None,
        auto_increment: false,
        on_update_now: false,
        collation: if data_type.is_text() {
            table_coll
        } else {
            Collation::Binary
        },
        members: Vec::new(),
        generated: None,
        comment: String::new(),
        real_unsigned,
        invisible: Default::default(),
    };
    if let Some(fc) = forced_coll {
        col.collation = fc;
    }
    let mut explicit_null = false;
    let mut charset: Option<String> = None;
    let mut default_expr = None;
    let mut checks = Vec::new();
    let mut on_update: Option<ast::Expr> = None;
    for o in &c.options {
        match &o.option {
            // Column-level REFERENCES is parsed and ignored, as MySQL does.
            ast::ColumnOption::ForeignKey(_) => {}
            ast::ColumnOption::Check(ch) => checks.push(crate::constraints::checks::CheckClause {
                name: ch
                    .name
                    .as_ref()
                    .or(o.name.as_ref())
                    .map(|n| n.value.clone()),
                expr: (*ch.expr).clone(),
                enforced: ch.enforced.unwrap_or(true),
                column: Some(c.name.value.clone()),
            }),
            ast::ColumnOption::Null => {
                col.nullable = true;
                explicit_null = true;
            }
            ast::ColumnOption::NotNull => col.nullable = false,
            ast::ColumnOption::Default(e) => default_expr = Some(e.clone()),
            ast::ColumnOption::PrimaryKey(_) => primary = true,
            ast::ColumnOption::Unique(_) => unique = true,
            ast::ColumnOption::DialectSpecific(tokens) => {
                let t = tokens
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if t.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    col.auto_increment = true;
                } else {
                    return Err(Error::NotSupported(t));
                }
            }
            ast::ColumnOption::CharacterSet(cs) => {
                let cs = cs.to_string();
                // A character set alone names its default collation, not the table's.
                let c = super::charsets::charset_default(&cs)?;
                if forced_coll.is_none() && (col.data_type.is_text() || c == Collation::Binary) {
                    col.collation = c;
                }
                charset = Some(cs);
            }
            ast::ColumnOption::Collation(n) => {
                let n = n.to_string();
                let c = super::charsets::resolve(charset.as_deref(), Some(&n))?;
                if col.data_type.is_text() {
                    col.collation = c.unwrap_or(col.collation);
                }
            }
            ast::ColumnOption::Comment(t) => {
                // MySQL's limit; beyond it MySQL truncates with a warning outside strict
                // mode, Strata refuses in every mode rather than keep a different text.
                if t.chars().count() > 1024 {
                    return Err(Error::CommentTooLong {
                        what: "field",
                        name: c.name.value.clone(),
                        max: 1024,
                    });
                }
                col.comment = t.clone();
            }
            ast::ColumnOption::Generated {
                generation_expr: Some(e),
                generation_expr_mode,
                sequence_options: None,
                ..
            } => {
                use super::column_expr::{forbidden, stored_text, Kind};
                forbidden(&c.name.value, e, Kind::Generated)?;
                col.generated = Some(strata_types::schema::Generated {
                    expr: stored_text(e),
                    stored: matches!(
                        generation_expr_mode,
                        Some(ast::GeneratedExpressionMode::Stored)
                    ),
                });
            }
            ast::ColumnOption::OnUpdate(e) if is_now(e) => {
                on_update = Some(e.clone());
                col.on_update_now = true;
            }
            // (`VISIBLE`, the default, is dropped by the parser's token rewrite.)
            ast::ColumnOption::Invisible => col.invisible = true,
            other => return Err(Error::NotSupported(format!("column option {other}"))),
        }
    }
    if col.generated.is_some() {
        // MySQL's grammar has no DEFAULT, AUTO_INCREMENT or ON UPDATE for a generated
        // column.
        if default_expr.is_some() {
            return Err(Error::GeneratedUnsupported(
                "Specified a default value for a generated column".into(),
            ));
        }
        if col.auto_increment || on_update.is_some() {
            return Err(Error::GeneratedUnsupported(
                "Generated column with AUTO_INCREMENT or ON UPDATE".into(),
            ));
        }
    }
    if col.auto_increment || primary {
        col.nullable = false;
    }
    // Members are checked for duplicates under the collation the options settled.
    col.members = column_members(&c.data_type, &col)?;
    if let Some(e) = on_update {
        // Checked once the type is known (the clause may precede nothing else).
        if !now_fits(&e, &col) {
            return Err(Error::InvalidOnUpdate(col.name.clone()));
        }
    }
    if matches!(col.data_type, DataType::Timestamp { .. })
        && col.generated.is_none()
        && !explicit_null
        && default_expr.is_none()
    {
        // MariaDB 10.11 defaults (explicit_defaults_for_timestamp=ON): a TIMESTAMP
        // column is NULL-able with no automatic behaviour unless declared NOT NULL;
        // a NOT NULL TIMESTAMP without a default gets CURRENT_TIMESTAMP on insert.
        if !col.nullable {
            col.default = Some(ColumnDefault::CurrentTimestamp);
        }
    }
    if let Some(e) = default_expr {
        col.default = Some(column_default(&e, &col)?);
    }
    if matches!(
        col.data_type,
        DataType::Blob(_) | DataType::Text(_) | DataType::Json
    ) && matches!(col.default, Some(ColumnDefault::Value(ref v)) if !v.is_null())
    {
        return Err(Error::BlobCantHaveDefault(col.name.clone()));
    }
    Ok(BuiltColumn {
        col,
        primary,
        unique,
        checks,
    })
}

/// A column's DEFAULT clause (a literal, a negated literal, or CURRENT_TIMESTAMP for a
/// temporal column), checked against the column (1067 when it does not fit).
pub(crate) fn column_default(e: &ast::Expr, col: &ColumnDef) -> Result<ColumnDefault> {
    if let ast::Expr::Nested(_) = e {
        // `DEFAULT (expr)`: an expression default (MySQL 8.0.13+), checked against the
        // whole table by `column_expr::validate_table` and evaluated per row. BLOB, TEXT
        // and JSON columns may have one (their literal defaults stay refused).
        if col.auto_increment {
            return Err(Error::InvalidDefault(col.name.clone()));
        }
        super::column_expr::forbidden(&col.name, e, super::column_expr::Kind::Default)?;
        return Ok(ColumnDefault::Expr(super::column_expr::stored_text(e)));
    }
    let d = if is_now(e) {
        if !now_fits(e, col) {
            return Err(Error::InvalidDefault(col.name.clone()));
        }
        ColumnDefault::CurrentTimestamp
    } else {
        let v = match e {
            ast::Expr::Value(v) => literal(&v.value)?,
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => match expr.as_ref() {
                ast::Expr::Value(v) => match literal(&v.value)? {
                    Value::Int(i) => Value::Int(-i),
                    Value::Double(d) => Value::Double(-d),
                    Value::Decimal(d) => Value::Decimal(-d),
                    _ => return Err(Error::InvalidDefault(col.name.clone())),
                },
                _ => return Err(Error::InvalidDefault(col.name.clone())),
            },
            _ => return Err(Error::InvalidDefault(col.name.clone())),
        };
        if v.is_null() && !col.nullable {
            return Err(Error::InvalidDefault(col.name.clone()));
        }
        let v = coerce(v, col, 1, true).map_err(|_| Error::InvalidDefault(col.name.clone()))?;
        ColumnDefault::Value(v)
    };
    if matches!(
        col.data_type,
        DataType::Blob(_) | DataType::Text(_) | DataType::Json
    ) && matches!(d, ColumnDefault::Value(ref v) if !v.is_null())
    {
        return Err(Error::BlobCantHaveDefault(col.name.clone()));
    }
    Ok(d)
}

/// Column types no index may hold: JSON (3152; MySQL indexes a JSON path through a
/// generated column instead).
pub(crate) fn check_key_types(columns: &[ColumnDef], indexes: &[IndexDef]) -> Result<()> {
    // The primary key, or without one the first UNIQUE key on NOT NULL columns (which
    // stands in for it, as in MySQL), stays visible: 3522.
    let effective_primary = indexes.iter().find(|ix| ix.primary).or_else(|| {
        indexes.iter().find(|ix| {
            ix.unique
                && ix
                    .columns
                    .iter()
                    .all(|&c| columns.get(c).is_some_and(|c| !c.nullable))
        })
    });
    if effective_primary.is_some_and(|ix| ix.invisible) {
        return Err(Error::PrimaryKeyInvisible);
    }
    for ix in indexes {
        for &c in &ix.columns {
            if let Some(col) = columns.get(c).filter(|c| c.data_type == DataType::Json) {
                return Err(Error::JsonUsedAsKey(col.name.clone()));
            }
        }
    }
    Ok(())
}

fn is_now(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Function(f) => {
            let n = object_name_parts(&f.name).join(".").to_ascii_lowercase();
            matches!(
                n.as_str(),
                "now" | "current_timestamp" | "localtimestamp" | "localtime"
            )
        }
        ast::Expr::Identifier(i) => i.value.eq_ignore_ascii_case("current_timestamp"),
        _ => false,
    }
}

/// The fraction digits of `DATETIME(p)`, `TIMESTAMP(p)`, `TIME(p)`: 0-6 (1426 above).
fn column_fsp(p: Option<u64>, col: &str) -> Result<u8> {
    match p {
        None => Ok(0),
        Some(p) if p <= 6 => Ok(p as u8),
        Some(p) => Err(Error::TooBigPrecision {
            precision: p,
            func: col.to_string(),
        }),
    }
}

/// The precision written in `NOW(p)` / `CURRENT_TIMESTAMP(p)` (0 without one); None
/// when the argument is not a plain number.
fn now_fsp(e: &ast::Expr) -> Option<u64> {
    let ast::Expr::Function(f) = e else {
        return Some(0);
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Some(0);
    };
    match list.args.as_slice() {
        [] => Some(0),
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))] => {
            match &v.value {
                ast::Value::Number(n, _) => n.parse().ok(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `DEFAULT CURRENT_TIMESTAMP(p)` / `ON UPDATE CURRENT_TIMESTAMP(p)` fit a column only
/// when it is a DATETIME or TIMESTAMP of precision p, as MySQL 8 requires.
fn now_fits(e: &ast::Expr, col: &ColumnDef) -> bool {
    match col.data_type {
        DataType::DateTime { fsp } | DataType::Timestamp { fsp } => now_fsp(e) == Some(fsp as u64),
        _ => false,
    }
}

/// The members of an ENUM or SET type, trailing spaces removed as MySQL stores them;
/// a member listed twice under the column's collation is 1291, a SET member with a
/// comma 1367. Empty for every other type.
fn column_members(t: &ast::DataType, col: &ColumnDef) -> Result<Vec<String>> {
    let (kind, names): (&'static str, Vec<&str>) = match t {
        ast::DataType::Enum(m, _) => (
            "ENUM",
            m.iter()
                .map(|m| match m {
                    ast::EnumMember::Name(n) | ast::EnumMember::NamedValue(n, _) => n.as_str(),
                })
                .collect(),
        ),
        ast::DataType::Set(m) => ("SET", m.iter().map(String::as_str).collect()),
        _ => return Ok(Vec::new()),
    };
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for n in names {
        let n = n.trim_end_matches(' ');
        if kind == "SET" && n.contains(',') {
            return Err(Error::IllegalSetMember(n.to_string()));
        }
        if out
            .iter()
            .any(|m| col.collation.compare(m.as_bytes(), n.as_bytes()).is_eq())
        {
            return Err(Error::DuplicatedTypeValue {
                column: col.name.clone(),
                value: n.to_string(),
                kind,
            });
        }
        out.push(n.to_string());
    }
    Ok(out)
}

/// An ENGINE= name: the stored engine, or — for an engine this server lacks, unless
/// sql_mode has NO_ENGINE_SUBSTITUTION — the default engine with warning 1286 (the
/// caller adds 1266 naming the engine used), as MySQL substitutes.
fn engine_or_substitute(
    name: &str,
    available: &[&str],
    cx: &ExecCtx,
    substituted: &mut bool,
) -> Result<String> {
    match engine_name(name, available) {
        Err(e @ Error::UnknownEngine(_))
            if !cx
                .sql_mode
                .has(strata_types::SqlMode::NO_ENGINE_SUBSTITUTION) =>
        {
            cx.env
                .warn(crate::expr::WarnLevel::Warning, e.code(), e.to_string());
            *substituted = true;
            Ok(cx.default_engine.to_string())
        }
        other => other,
    }
}

/// The column type, and a collation it forces (binary strings).
fn column_type(
    t: &ast::DataType,
    col: &str,
    sql_mode: strata_types::SqlMode,
) -> Result<(DataType, Option<Collation>)> {
    use ast::DataType as D;
    let char_len = |l: &Option<ast::CharacterLength>, default: u64| -> u64 {
        match l {
            Some(ast::CharacterLength::IntegerLength { length, .. }) => *length,
            _ => default,
        }
    };
    let too_long = |max: u64| Error::ColumnTooLong {
        column: col.to_string(),
        max,
    };
    Ok(match t {
        D::TinyInt(_) | D::Bool | D::Boolean => (DataType::TinyInt { unsigned: false }, None),
        D::TinyIntUnsigned(_) => (DataType::TinyInt { unsigned: true }, None),
        D::SmallInt(_) => (DataType::SmallInt { unsigned: false }, None),
        D::SmallIntUnsigned(_) => (DataType::SmallInt { unsigned: true }, None),
        D::MediumInt(_) => (DataType::MediumInt { unsigned: false }, None),
        D::MediumIntUnsigned(_) => (DataType::MediumInt { unsigned: true }, None),
        D::Int(_) | D::Integer(_) => (DataType::Int { unsigned: false }, None),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) => (DataType::Int { unsigned: true }, None),
        D::BigInt(_) => (DataType::BigInt { unsigned: false }, None),
        D::BigIntUnsigned(_) => (DataType::BigInt { unsigned: true }, None),
        D::Float(info) => (real_type(info, col, false)?, None),
        // REAL is DOUBLE, or FLOAT under sql_mode REAL_AS_FLOAT.
        D::Real if sql_mode.has(strata_types::SqlMode::REAL_AS_FLOAT) => {
            (DataType::Float { fixed: None }, None)
        }
        D::Double(info) => (real_type(info, col, true)?, None),
        D::DoublePrecision | D::Real => (DataType::Double { fixed: None }, None),
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (&10, 0),
                ast::ExactNumberInfo::Precision(p) => (p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (p, *s as u64),
            };
            // MySQL's checks and their order. 39 to 65 digits are stored in the wide row
            // and key forms (docs/format/btree.md, heap.md, keys.md).
            if s > 30 {
                return Err(Error::TooBigScale {
                    scale: s,
                    column: col.to_string(),
                });
            }
            if *p > 65 {
                return Err(Error::TooBigDecimalPrecision {
                    precision: *p,
                    column: col.to_string(),
                });
            }
            if s > *p {
                return Err(Error::ScaleAbovePrecision(col.to_string()));
            }
            (
                DataType::Decimal {
                    precision: (*p).max(1) as u8,
                    scale: s as u8,
                },
                None,
            )
        }
        D::Char(l) | D::Character(l) => {
            let n = char_len(l, 1);
            if n > 255 {
                return Err(too_long(255));
            }
            (DataType::Char(n as u32), None)
        }
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            let n = char_len(l, 0);
            if l.is_none() {
                return Err(Error::Syntax("VARCHAR needs a length".into()));
            }
            if n > 16383 {
                return Err(too_long(16383));
            }
            (DataType::VarChar(n as u32), None)
        }
        D::Binary(l) => {
            let n = l.unwrap_or(1);
            if n > 255 {
                return Err(too_long(255));
            }
            (DataType::Binary(n as u32), Some(Collation::Binary))
        }
        D::Varbinary(l) => {
            let n = match l {
                Some(ast::BinaryLength::IntegerLength { length }) => *length,
                _ => return Err(Error::Syntax("VARBINARY needs a length".into())),
            };
            if n > 65535 {
                return Err(too_long(65535));
            }
            (DataType::VarBinary(n as u32), Some(Collation::Binary))
        }
        D::TinyText => (DataType::Text(255), None),
        D::Text => (DataType::Text(65535), None),
        D::MediumText => (DataType::Text(16_777_215), None),
        D::LongText => (DataType::Text(u32::MAX), None),
        D::TinyBlob => (DataType::Blob(255), Some(Collation::Binary)),
        D::Blob(_) => (DataType::Blob(65535), Some(Collation::Binary)),
        D::MediumBlob => (DataType::Blob(16_777_215), Some(Collation::Binary)),
        D::LongBlob => (DataType::Blob(u32::MAX), Some(Collation::Binary)),
        D::Date => (DataType::Date, None),
        D::Datetime(p) => (
            DataType::DateTime {
                fsp: column_fsp(*p, col)?,
            },
            None,
        ),
        D::Timestamp(p, _) => (
            DataType::Timestamp {
                fsp: column_fsp(*p, col)?,
            },
            None,
        ),
        D::Time(p, _) => (
            DataType::Time {
                fsp: column_fsp(*p, col)?,
            },
            None,
        ),
        D::Custom(name, mods)
            if object_name_parts(name)
                .join(".")
                .eq_ignore_ascii_case("year") =>
        {
            match mods.as_slice() {
                [] => (DataType::Year, None),
                [w] if w.trim() == "4" => (DataType::Year, None),
                _ => return Err(Error::InvalidYearWidth),
            }
        }
        D::JSON => (DataType::Json, Some(Collation::Binary)),
        D::Enum(members, None) => {
            if members.len() > strata_types::member::MAX_ENUM_MEMBERS {
                return Err(Error::TooManyTypeValues(col.to_string()));
            }
            (DataType::Enum(members.len() as u16), None)
        }
        D::Set(members) => {
            if members.len() > strata_types::member::MAX_SET_MEMBERS {
                return Err(Error::TooManyTypeValues(col.to_string()));
            }
            (DataType::Set(members.len() as u8), None)
        }
        D::Bit(n) => {
            let n = n.unwrap_or(1);
            if n > 64 {
                return Err(Error::TooBigDisplayWidth {
                    column: col.to_string(),
                    max: 64,
                });
            }
            // MySQL takes BIT(0) as BIT(1).
            (DataType::Bit(n.max(1) as u8), Some(Collation::Binary))
        }
        other => return Err(Error::NotSupported(format!("column type {other}"))),
    })
}
