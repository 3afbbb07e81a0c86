//! ALTER TABLE, CREATE INDEX, DROP INDEX and RENAME TABLE: one code path.
//!
//! The clauses of a statement are applied in order to a working copy of the table's
//! definition ([`Work`]), checked the way MySQL checks them (1054, 1060, 1061, 1068,
//! 1072, 1075, 1090, 1091, 1176), and then carried out in one of two ways:
//! - a change no stored byte depends on (names of columns, indexes and the table,
//!   defaults, the comment, AUTO_INCREMENT of a `btree` table) is one write of the
//!   catalog over the same files ([`Catalog::alter_in_place`]);
//! - ADD COLUMN anywhere and DROP COLUMN of an unindexed column on a `btree` table are
//!   instant too (MySQL 8.0.29's INSTANT, [`instant_change`]): the same one write, with
//!   the table's physical column layout updated (`InstantColumns::after_alter`;
//!   `docs/format/catalog.md`, `tables[].instant`), up to `MAX_ROW_VERSIONS` times
//!   between rebuilds;
//! - anything else rebuilds the table (MySQL's COPY algorithm): the catalog makes new
//!   files under a hidden name, rows stream from the old table into the new one, each
//!   converted to its new column by MySQL's rules (strict mode: a value that does not
//!   fit fails the statement with 1265/1264/1366, NULL into NOT NULL with 1138), the
//!   new table is made durable, and one write of the catalog switches to it
//!   ([`Catalog::commit_rebuild`]; `docs/format/catalog.md`). Any failure before that
//!   drops the new files and leaves the old table untouched.
//!
//! The copy holds the table's write lock (as CREATE INDEX did); memory stays bounded:
//! one row at a time, committed in batches of `catalog::rebuild_fill::COPY_BATCH` rows in the new table
//! (invisible until the switch). Rows are read in the old table's storage order, which
//! for `btree` is primary-key order, so the new clustered index fills in order.
//!
//! `ALGORITHM=` and `LOCK=` are honoured as far as they can be: INSTANT for a change
//! that needs a rebuild gives 1845 (1846 for a DROP of an indexed column, 4092 past the
//! row versions), INPLACE for one MySQL itself can only copy (a column's type, ENGINE=),
//! and LOCK=NONE for any rebuild give 1846.

use crate::catalog::engines::engine_name;
use crate::catalog::Catalog;
use crate::constraints::checks::DefOnly;
use crate::context::{ExecCtx, Outcome, TableLocks};
use crate::expr::convert::coerce_or_warn;
use crate::parse::alter_clauses::{
    internal_options, ALTER_CHECK, ALTER_CONSTRAINT, COLUMN_VISIBILITY, CONVERT_TO, DROP_CHECK,
    INDEX_VISIBILITY, RENAME_INDEX,
};
use crate::statements::column_expr::ColumnExprs;
use crate::statements::ddl::{build_column, column_default, index_columns, single_name};
use crate::statements::dml::implicit_default;
use sqlparser::ast;
use std::sync::Arc;
use strata_engine::{LockMode, Table, Txn};
use strata_types::schema::ColumnDefault;
use strata_types::{
    Collation, ColumnDef, DataType, Error, IndexDef, InstantColumns, Result, TableDef, Value,
};

/// A column of the definition being built: the new definition and the old column its
/// values come from (None: added, filled with its default).
#[derive(Clone, Debug)]
struct WorkCol {
    def: ColumnDef,
    source: Option<usize>,
}

/// An index of the definition being built, its columns by name until the end.
#[derive(Clone, Debug)]
struct WorkIndex {
    name: String,
    cols: Vec<String>,
    unique: bool,
    primary: bool,
    comment: String,
    /// MySQL 8's INVISIBLE: kept up to date, never chosen by the optimizer.
    invisible: bool,
}

/// The LOCK= clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LockClause {
    Default,
    None,
    Shared,
    Exclusive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algorithm {
    Default,
    Instant,
    Inplace,
    Copy,
}

/// The table definition an ALTER statement builds, clause by clause.
#[derive(Debug)]
struct Work {
    table: String,
    cols: Vec<WorkCol>,
    indexes: Vec<WorkIndex>,
    engine: String,
    comment: String,
    /// ROW_FORMAT, KEY_BLOCK_SIZE, STATS_* …: metadata only.
    options: strata_types::TableOptions,
    /// The table's default collation (`[DEFAULT] CHARSET/COLLATE`, `CONVERT TO`).
    default_collation: Collation,
    auto_increment: Option<u64>,
    rename: Option<(String, String)>,
    /// Why the table must be rebuilt (empty: a change of metadata only); the first
    /// reason is the one 1846 gives for ALGORITHM=INSTANT.
    rebuild: Vec<String>,
    /// Why MySQL itself could only copy (ALGORITHM=INPLACE gives 1846).
    copy_only: Option<String>,
    algorithm: Algorithm,
    lock_none: bool,
    lock: LockClause,
    /// DROP PRIMARY KEY (MySQL copies unless a new primary key replaces it).
    dropped_primary: bool,
    /// FOREIGN KEY and CHECK constraints added, dropped or changed.
    cons: crate::constraints::guards::AlterConstraints,
    /// The statement's sql_mode (REAL_AS_FLOAT decides what REAL is).
    sql_mode: strata_types::SqlMode,
    /// Warnings the clauses raised: (code, message).
    warnings: Vec<(u16, String)>,
}

impl Work {
    fn new(def: &TableDef, sql_mode: strata_types::SqlMode) -> Work {
        let name_of = |i: &usize| def.columns[*i].name.clone();
        Work {
            table: def.name.clone(),
            cols: def
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| WorkCol {
                    def: c.clone(),
                    source: Some(i),
                })
                .collect(),
            indexes: def
                .indexes
                .iter()
                .map(|ix| WorkIndex {
                    name: ix.name.clone(),
                    cols: ix.columns.iter().map(name_of).collect(),
                    unique: ix.unique,
                    primary: ix.primary,
                    comment: ix.comment.clone(),
                    invisible: ix.invisible,
                })
                .collect(),
            engine: def.engine.clone(),
            comment: def.comment.clone(),
            options: def.options.clone(),
            default_collation: def.default_collation,
            auto_increment: None,
            sql_mode,
            warnings: Vec::new(),
            rename: None,
            rebuild: Vec::new(),
            copy_only: None,
            algorithm: Algorithm::Default,
            lock_none: false,
            lock: LockClause::Default,
            dropped_primary: false,
            cons: Default::default(),
        }
    }

    /// MySQL 8's warning 1681 for a column declared DECIMAL/FLOAT/DOUBLE UNSIGNED.
    fn deprecated_unsigned(&mut self, c: &ColumnDef) {
        if c.real_unsigned {
            self.warnings.push((
                1681,
                crate::statements::ddl::UNSIGNED_REAL_DEPRECATED.into(),
            ));
        }
    }

    fn needs(&mut self, why: &str) {
        self.rebuild.push(why.to_string());
    }

    fn unknown_column(&self, c: &str) -> Error {
        Error::UnknownColumn {
            column: c.to_string(),
            context: self.table.clone(),
        }
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.cols
            .iter()
            .position(|c| c.def.name.eq_ignore_ascii_case(name))
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(name))
    }

    /// Where a column goes: FIRST, AFTER c, or (None) at the end.
    fn position(&self, pos: &Option<ast::MySQLColumnPosition>) -> Result<usize> {
        Ok(match pos {
            None => self.cols.len(),
            Some(ast::MySQLColumnPosition::First) => 0,
            Some(ast::MySQLColumnPosition::After(c)) => {
                self.column(&c.value)
                    .ok_or_else(|| self.unknown_column(&c.value))?
                    + 1
            }
        })
    }

    fn rename_in_indexes(&mut self, from: &str, to: &str) {
        for ix in &mut self.indexes {
            for c in &mut ix.cols {
                if c.eq_ignore_ascii_case(from) {
                    *c = to.to_string();
                }
            }
        }
    }

    fn add_column(
        &mut self,
        c: &ast::ColumnDef,
        pos: &Option<ast::MySQLColumnPosition>,
    ) -> Result<()> {
        if self.column(&c.name.value).is_some() {
            return Err(Error::DuplicateColumn(c.name.value.clone()));
        }
        let built = build_column(c, self.default_collation, self.sql_mode)?;
        self.deprecated_unsigned(&built.col);
        let at = self.position(pos)?;
        let name = built.col.name.clone();
        self.cols.insert(
            at,
            WorkCol {
                def: built.col,
                source: None,
            },
        );
        if built.primary {
            self.add_index(Some("PRIMARY".into()), vec![name.clone()], true, true)?;
        }
        if built.unique {
            self.add_index(None, vec![name], true, false)?;
        }
        self.cons.add_checks.extend(built.checks);
        self.needs("ADD COLUMN");
        Ok(())
    }

    fn drop_column(&mut self, name: &str, if_exists: bool) -> Result<()> {
        let Some(i) = self.column(name) else {
            return if if_exists {
                Ok(())
            } else {
                Err(Error::CantDropKey(name.to_string()))
            };
        };
        let defs: Vec<ColumnDef> = self.cols.iter().map(|c| c.def.clone()).collect();
        super::column_expr::check_unused(&defs, name, &self.table)?;
        self.cols.remove(i);
        // MySQL takes the column out of every index; an index left empty goes.
        for ix in &mut self.indexes {
            ix.cols.retain(|c| !c.eq_ignore_ascii_case(name));
        }
        self.indexes.retain(|ix| !ix.cols.is_empty());
        self.needs("DROP COLUMN");
        Ok(())
    }

    /// MODIFY (`new_name` None) and CHANGE.
    fn change_column(
        &mut self,
        old: &str,
        new_name: Option<&ast::Ident>,
        data_type: &ast::DataType,
        options: &[ast::ColumnOption],
        pos: &Option<ast::MySQLColumnPosition>,
    ) -> Result<()> {
        let i = self.column(old).ok_or_else(|| self.unknown_column(old))?;
        let name = new_name
            .cloned()
            .unwrap_or_else(|| ast::Ident::new(&self.cols[i].def.name));
        if let Some(j) = self.column(&name.value) {
            if j != i {
                return Err(Error::DuplicateColumn(name.value.clone()));
            }
        }
        let c = ast::ColumnDef {
            name: name.clone(),
            data_type: data_type.clone(),
            options: options
                .iter()
                .map(|o| ast::ColumnOptionDef {
                    name: None,
                    option: o.clone(),
                })
                .collect(),
        };
        let built = build_column(&c, self.default_collation, self.sql_mode)?;
        self.deprecated_unsigned(&built.col);
        if !name.value.eq_ignore_ascii_case(old) {
            let defs: Vec<ColumnDef> = self.cols.iter().map(|c| c.def.clone()).collect();
            super::column_expr::check_unused(&defs, old, &self.table)?;
        }
        let mut moved = self.cols.remove(i);
        let before = moved.def.clone();
        moved.def = built.col;
        let at = match pos {
            None => i,
            Some(_) => self.position(pos)?,
        };
        let same_storage = before.data_type == moved.def.data_type
            && before.nullable == moved.def.nullable
            && before.auto_increment == moved.def.auto_increment
            && before.collation == moved.def.collation
            && before.on_update_now == moved.def.on_update_now
            && before.generated == moved.def.generated
            && before.real_unsigned == moved.def.real_unsigned
            && at == i;
        self.cols.insert(at, moved);
        self.rename_in_indexes(old, &name.value);
        if built.primary {
            self.add_index(Some("PRIMARY".into()), vec![name.value.clone()], true, true)?;
        }
        if built.unique {
            self.add_index(None, vec![name.value.clone()], true, false)?;
        }
        self.cons.add_checks.extend(built.checks);
        if !same_storage {
            let after = &self.cols[at].def;
            if before.data_type != after.data_type
                || before.collation != after.collation
                || before.real_unsigned != after.real_unsigned
            {
                self.copy_only
                    .get_or_insert("Cannot change column type INPLACE".into());
            }
            self.needs("Need to rebuild the table to change column type");
        }
        Ok(())
    }

    fn rename_column(&mut self, from: &str, to: &str) -> Result<()> {
        let i = self.column(from).ok_or_else(|| self.unknown_column(from))?;
        if let Some(j) = self.column(to) {
            if j != i {
                return Err(Error::DuplicateColumn(to.to_string()));
            }
        }
        if !from.eq_ignore_ascii_case(to) {
            let defs: Vec<ColumnDef> = self.cols.iter().map(|c| c.def.clone()).collect();
            super::column_expr::check_unused(&defs, from, &self.table)?;
        }
        self.cols[i].def.name = to.to_string();
        self.rename_in_indexes(from, to);
        Ok(())
    }

    fn alter_column(&mut self, name: &str, op: &ast::AlterColumnOperation) -> Result<()> {
        let i = self.column(name).ok_or_else(|| self.unknown_column(name))?;
        match op {
            ast::AlterColumnOperation::SetDefault { value } => {
                let d = column_default(value, &self.cols[i].def)?;
                self.cols[i].def.default = Some(d);
            }
            ast::AlterColumnOperation::DropDefault => self.cols[i].def.default = None,
            other => return Err(Error::NotSupported(format!("ALTER COLUMN … {other}"))),
        }
        Ok(())
    }

    fn add_index(
        &mut self,
        name: Option<String>,
        cols: Vec<String>,
        unique: bool,
        primary: bool,
    ) -> Result<()> {
        let name = if primary {
            if self.indexes.iter().any(|i| i.primary) {
                return Err(Error::MultiplePrimaryKey);
            }
            "PRIMARY".to_string()
        } else {
            match name {
                Some(n) => {
                    if n.eq_ignore_ascii_case("PRIMARY") || self.index(&n).is_some() {
                        return Err(Error::DuplicateKeyName(n));
                    }
                    n
                }
                None => {
                    // MySQL names an unnamed index after its first column, then _2, _3.
                    let base = cols.first().cloned().unwrap_or_default();
                    let mut n = base.clone();
                    let mut k = 2;
                    while n.eq_ignore_ascii_case("PRIMARY") || self.index(&n).is_some() {
                        n = format!("{base}_{k}");
                        k += 1;
                    }
                    n
                }
            }
        };
        let ix = WorkIndex {
            name,
            cols,
            unique,
            primary,
            comment: String::new(),
            invisible: false,
        };
        if primary {
            self.indexes.insert(0, ix);
            self.needs("ADD PRIMARY KEY");
        } else {
            self.indexes.push(ix);
            self.needs("ADD INDEX");
        }
        Ok(())
    }

    /// The COMMENT and visibility of the index [`Work::add_index`] just added (the
    /// primary key is first, any other last).
    fn comment_added(&mut self, primary: bool, opts: &[ast::IndexOption]) -> Result<()> {
        let at = if primary {
            0
        } else {
            self.indexes.len().saturating_sub(1)
        };
        if let Some(ix) = self.indexes.get_mut(at) {
            ix.comment = crate::statements::ddl::index_comment(opts, &ix.name)?;
            ix.invisible = crate::statements::ddl::index_invisible(opts);
        }
        Ok(())
    }

    /// `ALTER INDEX i VISIBLE|INVISIBLE`: metadata only, the index stays as built.
    fn index_visibility(&mut self, name: &str, invisible: bool) -> Result<()> {
        let i = self.index(name).ok_or_else(|| Error::NoSuchIndex {
            index: name.to_string(),
            table: self.table.clone(),
        })?;
        self.indexes[i].invisible = invisible;
        Ok(())
    }

    fn drop_index(&mut self, name: &str) -> Result<()> {
        let i = self
            .index(name)
            .ok_or_else(|| Error::CantDropKey(name.to_string()))?;
        if self.indexes[i].primary {
            self.dropped_primary = true;
        }
        self.indexes.remove(i);
        self.needs("DROP INDEX");
        Ok(())
    }

    fn rename_index(&mut self, from: &str, to: &str) -> Result<()> {
        let i = self.index(from).ok_or_else(|| Error::NoSuchIndex {
            index: from.to_string(),
            table: self.table.clone(),
        })?;
        if to.eq_ignore_ascii_case("PRIMARY") || from.eq_ignore_ascii_case("PRIMARY") {
            return Err(Error::NotSupported("RENAME INDEX of PRIMARY".into()));
        }
        if let Some(j) = self.index(to) {
            if j != i {
                return Err(Error::DuplicateKeyName(to.to_string()));
            }
        }
        self.indexes[i].name = to.to_string();
        Ok(())
    }

    fn constraint(&mut self, c: &ast::TableConstraint) -> Result<()> {
        match c {
            ast::TableConstraint::PrimaryKey(pk) => {
                self.add_index(None, index_columns(&pk.columns)?, true, true)?;
                self.comment_added(true, &pk.index_options)
            }
            ast::TableConstraint::Unique(u) => {
                let name = u
                    .index_name
                    .as_ref()
                    .or(u.name.as_ref())
                    .map(|i| i.value.clone());
                self.add_index(name, index_columns(&u.columns)?, true, false)?;
                self.comment_added(false, &u.index_options)
            }
            ast::TableConstraint::Index(ix) => {
                let name = ix.name.as_ref().map(|i| i.value.clone());
                self.add_index(name, index_columns(&ix.columns)?, false, false)?;
                self.comment_added(false, &ix.index_options)
            }
            // FOREIGN KEY is read by `alter_table`, which has the session's context.
            ast::TableConstraint::ForeignKey(_) => {
                Err(Error::Internal("FOREIGN KEY clause not read".into()))
            }
            ast::TableConstraint::Check(c) => {
                self.cons
                    .add_checks
                    .push(crate::constraints::checks::CheckClause::table_level(c));
                Ok(())
            }
            other => Err(Error::NotSupported(format!("ADD {other}"))),
        }
    }

    /// `CONVERT TO CHARACTER SET x [COLLATE y]`: every text column and the table's
    /// default take the collation; the rows are copied (keys may order differently).
    fn convert_to(&mut self, charset: &str, collation: &str, database: Collation) -> Result<()> {
        let c = if charset.eq_ignore_ascii_case("DEFAULT") {
            match collation {
                "" => database,
                n => super::charsets::resolve(None, Some(n))?.unwrap_or(database),
            }
        } else {
            let collation = (!collation.is_empty()).then_some(collation);
            super::charsets::resolve(Some(charset), collation)?.unwrap_or_default()
        };
        self.default_collation = c;
        let mut changed = false;
        for col in &mut self.cols {
            if col.def.data_type.is_text() && col.def.collation != c {
                col.def.collation = c;
                changed = true;
            }
            if c == Collation::Binary {
                // MySQL makes CHAR/VARCHAR/TEXT the binary types of as many bytes as
                // they had characters (a longer value is 1406 in strict mode); ENUM
                // and SET keep their type under the binary collation.
                let binary = match col.def.data_type {
                    DataType::Char(n) => Some(DataType::Binary(n)),
                    DataType::VarChar(n) => Some(DataType::VarBinary(n)),
                    DataType::Text(limit) => Some(DataType::Blob(limit)),
                    _ => None,
                };
                if let Some(t) = binary {
                    col.def.data_type = t;
                    changed = true;
                }
            }
        }
        if changed {
            self.needs("CONVERT TO CHARACTER SET");
            self.copy_only
                .get_or_insert("Cannot change column type INPLACE".into());
        }
        Ok(())
    }

    /// The `SET TBLPROPERTIES` clause [`crate::parse::alter_clauses`] made of table
    /// options and RENAME INDEX; a client's own is refused.
    fn options(
        &mut self,
        opts: &[ast::SqlOption],
        available: &[&str],
        database: Collation,
        old: &TableDef,
    ) -> Result<()> {
        for (key, text) in internal_options(opts, "SET TBLPROPERTIES")? {
            match key.as_str() {
                RENAME_INDEX => {
                    let (from, to) = text
                        .split_once('\u{0}')
                        .ok_or_else(|| Error::Syntax("RENAME INDEX".into()))?;
                    self.rename_index(from, to)?;
                }
                "ENGINE" => {
                    match engine_name(&text, available) {
                        // Without NO_ENGINE_SUBSTITUTION MySQL warns and keeps the engine.
                        Err(Error::UnknownEngine(_))
                            if !self
                                .sql_mode
                                .has(strata_types::SqlMode::NO_ENGINE_SUBSTITUTION) =>
                        {
                            self.warnings
                                .push((1286, format!("Unknown storage engine '{text}'")));
                            continue;
                        }
                        r => self.engine = r?,
                    }
                    self.needs("ENGINE");
                    self.copy_only.get_or_insert("ENGINE".into());
                }
                "COMMENT" => {
                    crate::statements::ddl::check_table_comment(&self.table, &text)?;
                    self.comment = text
                }
                "FORCE" => self.needs("FORCE"),
                // Kept and shown; no stored byte depends on them.
                name if strata_types::table_options::TABLE_OPTION_NAMES.contains(&name) => {
                    self.options.set(name, &text).map_err(Error::Syntax)?;
                }
                // Read before every other clause (`default_charset`).
                "CHARSET" | "COLLATE" => {}
                CONVERT_TO => {
                    let (cs, coll) = text.split_once('\u{0}').unwrap_or((&text, ""));
                    self.convert_to(cs, coll, database)?;
                }
                DROP_CHECK => self.cons.drop_checks.push(text),
                COLUMN_VISIBILITY => {
                    // Metadata only: no stored byte depends on it.
                    let (name, state) = text
                        .split_once('\u{0}')
                        .ok_or_else(|| Error::Syntax(key.clone()))?;
                    let i = self.column(name).ok_or_else(|| self.unknown_column(name))?;
                    self.cols[i].def.invisible = state == "INVISIBLE";
                }
                INDEX_VISIBILITY => {
                    let (name, state) = text
                        .split_once('\u{0}')
                        .ok_or_else(|| Error::Syntax(key.clone()))?;
                    self.index_visibility(name, state == "INVISIBLE")?;
                }
                ALTER_CHECK | ALTER_CONSTRAINT => {
                    let (name, state) = text
                        .split_once('\u{0}')
                        .ok_or_else(|| Error::Syntax(key.clone()))?;
                    let is_check = old.checks.iter().any(|c| c.name.eq_ignore_ascii_case(name));
                    if key == ALTER_CONSTRAINT && !is_check {
                        let other = old
                            .foreign_keys
                            .iter()
                            .any(|f| f.name.eq_ignore_ascii_case(name))
                            || old
                                .indexes
                                .iter()
                                .any(|i| i.unique && i.name.eq_ignore_ascii_case(name));
                        return Err(if other {
                            Error::NotSupported(format!(
                                "ALTER CONSTRAINT … ENFORCED of the key '{name}' (MySQL refuses it too)"
                            ))
                        } else {
                            Error::ConstraintNotFound(name.to_string())
                        });
                    }
                    self.cons
                        .enforce
                        .push((name.to_string(), state == "ENFORCED"));
                }
                other => {
                    return Err(Error::NotSupported(format!(
                        "ALTER TABLE … {other} (table option)"
                    )))
                }
            }
        }
        Ok(())
    }

    /// `[DEFAULT] CHARSET x [COLLATE y]` among the table options: the default of the
    /// columns defined from now on, those of this statement included (MySQL reads it
    /// before the column clauses); the table's columns keep theirs, so no row changes.
    fn default_charset(&mut self, opts: &[ast::SqlOption]) -> Result<()> {
        let (mut charset, mut collate) = (None::<String>, None::<String>);
        for (key, text) in internal_options(opts, "SET TBLPROPERTIES")? {
            match key.as_str() {
                "CHARSET" => charset = Some(text),
                "COLLATE" => collate = Some(text),
                _ => {}
            }
        }
        if let Some(c) = super::charsets::resolve(charset.as_deref(), collate.as_deref())? {
            if c == Collation::Binary {
                return Err(Error::NotSupported("ALTER TABLE … CHARSET=binary".into()));
            }
            self.default_collation = c;
        }
        Ok(())
    }

    /// The finished definition, checked as CREATE TABLE checks one.
    fn finish(mut self, old: &TableDef) -> Result<(TableDef, Vec<Option<usize>>, Work)> {
        if self.cols.is_empty() {
            return Err(Error::CantRemoveAllFields);
        }
        let mut indexes = Vec::new();
        for ix in &self.indexes {
            let mut columns = Vec::new();
            for c in &ix.cols {
                let p = self
                    .column(c)
                    .ok_or_else(|| Error::KeyColumnMissing(c.clone()))?;
                columns.push(p);
            }
            indexes.push(IndexDef {
                invisible: ix.invisible,
                name: ix.name.clone(),
                columns,
                unique: ix.unique,
                primary: ix.primary,
                comment: ix.comment.clone(),
            });
        }
        if let Some(pk) = indexes.iter().find(|i| i.primary) {
            for &c in &pk.columns {
                if self.cols[c].def.nullable {
                    self.cols[c].def.nullable = false;
                }
            }
        }
        let defs: Vec<ColumnDef> = self.cols.iter().map(|c| c.def.clone()).collect();
        super::ddl::check_key_types(&defs, &indexes)?;
        let autos: Vec<usize> = (0..self.cols.len())
            .filter(|&i| self.cols[i].def.auto_increment)
            .collect();
        if autos.len() > 1
            || autos
                .first()
                .is_some_and(|a| !indexes.iter().any(|ix| ix.columns.first() == Some(a)))
        {
            return Err(Error::WrongAutoKey);
        }
        let (db, name) = self
            .rename
            .clone()
            .unwrap_or_else(|| (old.db.clone(), old.name.clone()));
        let def = TableDef {
            db,
            name,
            engine: self.engine.clone(),
            columns: self.cols.iter().map(|c| c.def.clone()).collect(),
            indexes,
            auto_increment_start: self.auto_increment.unwrap_or(old.auto_increment_start),
            comment: self.comment.clone(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            // Kept by a change of metadata (the rows stay); a rebuild drops it (`run`).
            instant: old.instant.clone(),
            default_collation: self.default_collation,
            options: self.options.clone(),
        };
        super::column_expr::validate_table(&def)?;
        super::ddl::check_table_options(&def)?;
        let sources = self.cols.iter().map(|c| c.source).collect();
        Ok((def, sources, self))
    }
}

/// ALTER TABLE.
pub fn alter_table(at: &ast::AlterTable, cx: &mut ExecCtx) -> Result<Outcome> {
    let (db, name) = crate::context::resolve_table(cx, &at.name)?;
    // The catalog's own tables only: information_schema is not altered.
    let handle = cx.catalog.table(&db, &name)?;
    let old = handle.def().clone();
    let mut w = Work::new(&old, cx.sql_mode);
    read_clauses(at, cx, &mut w, &old)?;
    if w.algorithm == Algorithm::Copy && w.rebuild.is_empty() {
        // ALGORITHM=COPY asks for the copy even of a change of metadata.
        w.needs("ALGORITHM=COPY");
    }
    for (code, message) in std::mem::take(&mut w.warnings) {
        cx.env.warn(crate::expr::WarnLevel::Warning, code, message);
    }
    run(cx, &handle, w, &old)
}

/// ALTER TABLE (and CREATE/DROP INDEX) of one of the session's temporary tables, every
/// form but RENAME alone (`statements::temporary`): the same clauses, carried out by
/// copying the rows into new files of the new definition, which then take the old
/// table's place. No other session sees the table, so nothing is locked or built online.
pub fn alter_temporary(
    at: &ast::AlterTable,
    cx: &mut ExecCtx,
    handle: &Arc<dyn Table>,
) -> Result<Outcome> {
    let old = handle.def().clone();
    let mut w = Work::new(&old, cx.sql_mode);
    read_clauses(at, cx, &mut w, &old)?;
    if w.rename.is_some() {
        return Err(Error::NotSupported(
            "RENAME together with other changes of a TEMPORARY table".into(),
        ));
    }
    rebuild_temporary(cx, handle, w, &old)
}

/// Carries out `w` on a temporary table by copying its rows (see [`alter_temporary`]).
fn rebuild_temporary(
    cx: &mut ExecCtx,
    handle: &Arc<dyn Table>,
    mut w: Work,
    old: &TableDef,
) -> Result<Outcome> {
    for (code, message) in std::mem::take(&mut w.warnings) {
        cx.env.warn(crate::expr::WarnLevel::Warning, code, message);
    }
    let auto_increment = w.auto_increment;
    let (mut def, sources, mut w) = w.finish(old)?;
    let cons = std::mem::take(&mut w.cons);
    // A temporary table has no foreign keys and none refers to it: no followers.
    crate::constraints::guards::reconcile_alter(cx, handle, old, &mut def, &sources, &cons)?;
    crate::statements::temporary::check_def(&def)?;
    def.instant = None;
    if auto_increment.is_none() {
        def.auto_increment_start = handle.status().auto_increment.max(1);
    }
    let engine = cx.catalog.engine(&def.engine)?;
    let made = cx.temp.make(engine, def)?;
    let new = made.handle.clone();
    let def = new.def().clone();
    let own = Txn::new(cx.txn.isolation(), cx.txn.lock_wait_timeout());
    let copied = copy_temporary(cx, &own, handle, &new, &def, &sources, old);
    let done = match copied {
        Ok(n) => own.commit().map(|()| n),
        Err(e) => {
            let _ = own.rollback();
            Err(e)
        }
    };
    match done {
        Ok(n) => {
            drop(new);
            cx.temp.add(made, Some(handle))?;
            cx.catalog.invalidate_plans();
            Ok(Outcome::ok(n))
        }
        Err(e) => {
            drop(new);
            let _ = cx.temp.discard(made);
            Err(e)
        }
    }
}

/// The rows of temporary table `from`, converted, inserted into `to` in `own`.
fn copy_temporary(
    cx: &ExecCtx,
    own: &Txn,
    from: &Arc<dyn Table>,
    to: &Arc<dyn Table>,
    def: &TableDef,
    sources: &[Option<usize>],
    old: &TableDef,
) -> Result<u64> {
    let convert = RowConverter::new(cx, def, sources, old)?;
    let renumbered = renumbered_column(def, sources, old);
    let mut n = 0u64;
    let mut failure = None;
    from.scan(cx.txn, &mut |_, row| {
        n += 1;
        let step = convert.row(row, n).and_then(|mut out| {
            if let Some(a) = renumbered {
                crate::statements::dml::zero_asks_for_next_value(&mut out[a], cx.sql_mode);
            }
            to.insert(own, &mut out).map(|_| ())
        });
        match step {
            Ok(()) => Ok(strata_engine::Flow::Continue),
            Err(e) => {
                failure = Some(e);
                Ok(strata_engine::Flow::Stop)
            }
        }
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

/// A column that becomes AUTO_INCREMENT numbers its NULLs and, unless sql_mode has
/// NO_AUTO_VALUE_ON_ZERO, its zeros (as MySQL); one that already was keeps its 0s.
fn renumbered_column(def: &TableDef, sources: &[Option<usize>], old: &TableDef) -> Option<usize> {
    def.auto_increment_column().filter(|&a| {
        !sources
            .get(a)
            .copied()
            .flatten()
            .is_some_and(|s| old.columns[s].auto_increment)
    })
}

/// Reads the clauses of an ALTER TABLE statement into `w`.
fn read_clauses(
    at: &ast::AlterTable,
    cx: &mut ExecCtx,
    w: &mut Work,
    old: &TableDef,
) -> Result<()> {
    let db = old.db.clone();
    let available: Vec<&str> = cx.catalog.engines().iter().map(|e| e.name()).collect();
    use ast::AlterTableOperation as Op;
    for op in &at.operations {
        if let Op::SetTblProperties { table_properties } = op {
            w.default_charset(table_properties)?;
        }
    }
    for op in &at.operations {
        match op {
            Op::AddColumn {
                column_def,
                column_position,
                ..
            } => w.add_column(column_def, column_position)?,
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    w.drop_column(&c.value, *if_exists)?;
                }
            }
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => w.change_column(&col_name.value, None, data_type, options, column_position)?,
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => w.change_column(
                &old_name.value,
                Some(new_name),
                data_type,
                options,
                column_position,
            )?,
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => w.rename_column(&old_column_name.value, &new_column_name.value)?,
            Op::AlterColumn { column_name, op } => w.alter_column(&column_name.value, op)?,
            Op::AddConstraint {
                constraint: ast::TableConstraint::ForeignKey(fk),
                ..
            } => w
                .cons
                .add_fks
                .push(crate::constraints::definition::clause(cx, fk, None)?),
            Op::AddConstraint { constraint, .. } => w.constraint(constraint)?,
            Op::DropPrimaryKey { .. } => {
                let i = w
                    .indexes
                    .iter()
                    .position(|i| i.primary)
                    .ok_or_else(|| Error::CantDropKey("PRIMARY".into()))?;
                let n = w.indexes[i].name.clone();
                w.drop_index(&n)?;
            }
            Op::DropIndex { name } => w.drop_index(&name.value)?,
            Op::DropForeignKey { name, .. } => w.cons.drop_fks.push(name.value.clone()),
            Op::DropConstraint {
                name, if_exists, ..
            } => match w.index(&name.value) {
                Some(i) if w.indexes[i].unique && !w.indexes[i].primary => {
                    w.drop_index(&name.value)?
                }
                _ if old
                    .foreign_keys
                    .iter()
                    .map(|f| &f.name)
                    .chain(old.checks.iter().map(|c| &c.name))
                    .any(|n| n.eq_ignore_ascii_case(&name.value)) =>
                {
                    w.cons.drop_any.push(name.value.clone())
                }
                _ if *if_exists => {}
                _ => return Err(Error::ConstraintNotFound(name.value.clone())),
            },
            Op::RenameTable { table_name } => {
                let n = match table_name {
                    ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n) => n,
                };
                w.rename = Some(crate::context::resolve_table(cx, n)?);
            }
            Op::AutoIncrement { value, .. } => {
                let n = match &value.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().ok(),
                    _ => None,
                }
                .ok_or_else(|| Error::Syntax(format!("AUTO_INCREMENT = {value}")))?;
                w.auto_increment = Some(n.max(1));
                if old.engine != "btree" {
                    // MyISAM keeps the counter in its data file: a rebuild writes it.
                    w.needs("AUTO_INCREMENT");
                }
            }
            Op::Algorithm { algorithm, .. } => {
                w.algorithm = match algorithm {
                    ast::AlterTableAlgorithm::Default => Algorithm::Default,
                    ast::AlterTableAlgorithm::Instant => Algorithm::Instant,
                    ast::AlterTableAlgorithm::Inplace => Algorithm::Inplace,
                    ast::AlterTableAlgorithm::Copy => Algorithm::Copy,
                }
            }
            Op::Lock { lock, .. } => {
                w.lock_none = matches!(lock, ast::AlterTableLock::None);
                w.lock = match lock {
                    ast::AlterTableLock::Default => LockClause::Default,
                    ast::AlterTableLock::None => LockClause::None,
                    ast::AlterTableLock::Shared => LockClause::Shared,
                    ast::AlterTableLock::Exclusive => LockClause::Exclusive,
                };
            }
            Op::SetTblProperties { table_properties } => {
                let database = cx.catalog.database_collation(&db).unwrap_or_default();
                w.options(table_properties, &available, database, old)?
            }
            other => {
                let text = other.to_string();
                let head: String = text
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                return Err(Error::NotSupported(format!("ALTER TABLE … {head}")));
            }
        }
    }
    Ok(())
}

/// The table CREATE/DROP INDEX names: the session's temporary table of the name when
/// there is one (true), else the base table.
fn indexed_table(cx: &ExecCtx, name: &ast::ObjectName) -> Result<(Arc<dyn Table>, bool)> {
    let (db, t) = crate::context::resolve_table(cx, name)?;
    match cx.temp_table(&db, &t) {
        Some(h) => Ok((h, true)),
        None => Ok((cx.catalog.table(&db, &t)?, false)),
    }
}

/// CREATE [UNIQUE] INDEX name ON t (cols).
pub fn create_index(ci: &ast::CreateIndex, cx: &mut ExecCtx) -> Result<Outcome> {
    let (handle, temporary) = indexed_table(cx, &ci.table_name)?;
    let old = handle.def().clone();
    let mut w = Work::new(&old, cx.sql_mode);
    let name = ci.name.as_ref().map(single_name).transpose()?;
    let cols = index_columns(&ci.columns)?;
    let primary = name
        .as_deref()
        .is_some_and(|n| n.eq_ignore_ascii_case("PRIMARY"));
    if primary {
        w.add_index(None, cols, true, true)?;
    } else {
        w.add_index(name, cols, ci.unique, false)?;
    }
    w.comment_added(primary, &ci.index_options)?;
    if temporary {
        return rebuild_temporary(cx, &handle, w, &old);
    }
    run(cx, &handle, w, &old)
}

/// DROP INDEX name ON t.
pub fn drop_index(
    index: &ast::ObjectName,
    table: &ast::ObjectName,
    cx: &mut ExecCtx,
) -> Result<Outcome> {
    let (handle, temporary) = indexed_table(cx, table)?;
    let old = handle.def().clone();
    let mut w = Work::new(&old, cx.sql_mode);
    w.drop_index(&single_name(index)?)?;
    if temporary {
        return rebuild_temporary(cx, &handle, w, &old);
    }
    run(cx, &handle, w, &old)
}

/// RENAME TABLE a TO b, c TO d: all or none, in one write of the catalog.
pub fn rename_tables(renames: &[ast::RenameTable], cx: &mut ExecCtx) -> Result<Outcome> {
    let mut pairs = Vec::new();
    for r in renames {
        let from = crate::context::resolve_table(cx, &r.old_name)?;
        let to = crate::context::resolve_table(cx, &r.new_name)?;
        pairs.push((from, to));
    }
    // Views are renamed in the catalog only; within their database, as MySQL allows.
    let views = pairs
        .iter()
        .filter(|(f, _)| cx.catalog.view(&f.0, &f.1).is_some())
        .count();
    if views > 0 {
        if views < pairs.len() {
            return Err(Error::NotSupported(
                "RENAME TABLE of views and tables in one statement".into(),
            ));
        }
        if let Some((f, t)) = pairs.iter().find(|(f, t)| f.0 != t.0) {
            return Err(Error::ForbidSchemaChange {
                from: f.0.clone(),
                to: t.0.clone(),
            });
        }
        cx.catalog.rename_views(&pairs)?;
        return Ok(Outcome::ok(0));
    }
    // Drain the statements of every table that exists now (their handles retire).
    let mut locks = TableLocks::default();
    let mut handles = Vec::new();
    for (from, _) in &pairs {
        if let Ok(h) = cx.catalog.table(&from.0, &from.1) {
            handles.push((from.0.clone(), from.1.clone(), h));
        }
    }
    let want: Vec<(&str, &str, &Arc<dyn Table>, LockMode)> = handles
        .iter()
        .map(|(d, n, h)| (d.as_str(), n.as_str(), h, LockMode::Write))
        .collect();
    cx.lock_tables(&mut locks, &want)?;
    cx.catalog.rename_tables(&pairs)?;
    Ok(Outcome::ok(0))
}

fn not_supported(what: &str, reason: &str, try_instead: &str) -> Error {
    Error::AlterNotSupported {
        what: what.into(),
        reason: reason.into(),
        try_instead: try_instead.into(),
    }
}

/// Carries out a built change: in place, or by a rebuild.
fn run(cx: &mut ExecCtx, handle: &Arc<dyn Table>, w: Work, old: &TableDef) -> Result<Outcome> {
    let (mut def, sources, mut w) = w.finish(old)?;
    let cons = std::mem::take(&mut w.cons);
    let reconciled =
        crate::constraints::guards::reconcile_alter(cx, handle, old, &mut def, &sources, &cons)?;
    if reconciled.added_index {
        // An index for a new foreign key's columns.
        w.needs("ADD INDEX");
    }
    let followers = reconciled.followers;
    if online_candidate(&w, old, &def) {
        if let Some(done) = add_indexes_online(cx, handle, &def, old, w.lock, &followers)? {
            return Ok(done);
        }
    }
    // Columns added anywhere or dropped on a `btree` table: no row is touched (MySQL 8's
    // INSTANT, its default for such a change); the table's physical layout maps the
    // stored rows to the new definition (docs/format/catalog.md, `tables[].instant`).
    let instant_engine = def.engine == old.engine
        && cx
            .catalog
            .engine(&old.engine)
            .is_ok_and(|e| e.reads_instant_columns());
    let check = instant_change(&w, old, &def, &sources, instant_engine);
    let instant = match &check {
        InstantCheck::Yes(inst) => {
            def.instant = Some(inst.clone());
            true
        }
        _ => false,
    };
    if let (false, Some(_)) = (instant, w.rebuild.first()) {
        // Anything else is a rebuild: on MyISAM every change, and on `btree` a column
        // MySQL must compute for every row (AUTO_INCREMENT, a generated or an expression
        // default), one an index uses dropped, and any other change of stored bytes.
        match (w.algorithm, &check) {
            (Algorithm::Instant, InstantCheck::TooManyVersions) => {
                return Err(Error::MaxRowVersions(format!("{}/{}", old.db, old.name)));
            }
            (Algorithm::Instant, InstantCheck::IndexedDrop) => {
                return Err(not_supported(
                    "ALGORITHM=INSTANT",
                    "Dropping a column that is part of an index needs the index rebuilt",
                    "ALGORITHM=COPY/INPLACE",
                ));
            }
            (Algorithm::Instant, _) => {
                return Err(Error::AlterOperationNotSupported {
                    what: "ALGORITHM=INSTANT".into(),
                    try_instead: "ALGORITHM=COPY/INPLACE".into(),
                })
            }
            _ => {}
        }
        let primary_gone = w.dropped_primary && !def.indexes.iter().any(|i| i.primary);
        match w.algorithm {
            Algorithm::Inplace => {
                let why = if primary_gone {
                    Some(
                        "Dropping a primary key is not allowed without also adding a new \
                         primary key",
                    )
                } else {
                    w.copy_only.as_deref()
                };
                if let Some(why) = why {
                    return Err(not_supported("ALGORITHM=INPLACE", why, "ALGORITHM=COPY"));
                }
            }
            Algorithm::Instant | Algorithm::Default | Algorithm::Copy => {}
        }
        if w.lock_none {
            return Err(not_supported(
                "LOCK=NONE",
                "COPY algorithm requires a lock",
                "LOCK=SHARED",
            ));
        }
    }
    let mut locks = TableLocks::default();
    cx.lock_table(&mut locks, &old.db, &old.name, handle, LockMode::Write)?;
    if w.rename.is_some() && (def.db != old.db || def.name != old.name) {
        if !cx.catalog.database_exists(&def.db) {
            return Err(Error::UnknownDatabase(def.db.clone()));
        }
        if cx.catalog.table(&def.db, &def.name).is_ok() {
            return Err(Error::TableExists(def.name.clone()));
        }
    }
    if w.rebuild.is_empty() || instant {
        if *old != def {
            cx.catalog.alter_in_place(handle, def, followers)?;
        }
        return Ok(Outcome::ok(0));
    }
    // The copy writes every row with all of the new definition's columns in their
    // order: no row is older than an instant ADD or DROP any more.
    def.instant = None;
    // The counter carries over (a larger explicit value moves it, as inserts do).
    if w.auto_increment.is_none() {
        def.auto_increment_start = handle.status().auto_increment.max(1);
    }
    let copied = copy_rows(cx, handle, cx.catalog, def, &sources, old, followers)?;
    Ok(Outcome::ok(copied))
}

/// Whether a change can be made instantly, and how.
enum InstantCheck {
    /// Yes: the table's new `instant` entry.
    Yes(InstantColumns),
    /// No: the change is more than adding and dropping columns, or the engine or
    /// ALGORITHM= does not allow it.
    No,
    /// No: a dropped column is part of an index.
    IndexedDrop,
    /// No: the table has had `MAX_ROW_VERSIONS` instant changes since its last rebuild.
    TooManyVersions,
}

/// Whether the change can be an instant ADD/DROP COLUMN (MySQL 8.0.29's rules): on a
/// table whose engine reads such rows (`instant_engine`: `Engine::reads_instant_columns`,
/// `btree`), under ALGORITHM=DEFAULT or INSTANT, only columns added (anywhere) or
/// dropped, each added one with a constant default (a literal, or none: NULL, or the
/// implicit default of a NOT NULL column), none AUTO_INCREMENT or generated, no dropped
/// column in an index, no index or constraint added, every kept column stored as before
/// (a rename, default or comment may change with it), fewer than `MAX_ROW_VERSIONS`
/// such changes since the last rebuild. Yes carries the table's new physical layout,
/// with the value of each added column in the rows already there.
fn instant_change(
    w: &Work,
    old: &TableDef,
    def: &TableDef,
    sources: &[Option<usize>],
    instant_engine: bool,
) -> InstantCheck {
    use InstantCheck::No;
    let eligible = matches!(w.algorithm, Algorithm::Default | Algorithm::Instant)
        && instant_engine
        && !w.rebuild.is_empty()
        && w.rebuild
            .iter()
            .all(|r| r == "ADD COLUMN" || r == "DROP COLUMN")
        && sources.len() == def.columns.len()
        && def.columns.iter().zip(sources).all(|(c, s)| match s {
            Some(j) => old.columns.get(*j).is_some_and(|o| {
                c.data_type == o.data_type
                    && c.members == o.members
                    && c.nullable == o.nullable
                    && c.generated == o.generated
                    && c.collation == o.collation
            }),
            None => true,
        })
        && def.foreign_keys == old.foreign_keys
        && def.checks == old.checks;
    if !eligible {
        return No;
    }
    // Old column -> new column.
    let mut new_pos = vec![None; old.columns.len()];
    for (i, s) in sources.iter().enumerate() {
        match s.and_then(|j| new_pos.get_mut(j)) {
            Some(slot @ None) => *slot = Some(i),
            _ if s.is_none() => {}
            _ => return No,
        }
    }
    let dropped_indexed = old
        .indexes
        .iter()
        .any(|ix| ix.columns.iter().any(|&c| new_pos.get(c) == Some(&None)));
    // The same indexes over the same columns, renumbered.
    let same_indexes = def.indexes.len() == old.indexes.len()
        && def.indexes.iter().zip(&old.indexes).all(|(n, o)| {
            n.name == o.name
                && n.unique == o.unique
                && n.primary == o.primary
                && n.comment == o.comment
                && n.columns.len() == o.columns.len()
                && n.columns
                    .iter()
                    .zip(&o.columns)
                    .all(|(&nc, &oc)| sources.get(nc) == Some(&Some(oc)))
        });
    if dropped_indexed {
        return InstantCheck::IndexedDrop;
    }
    if !same_indexes {
        return No;
    }
    let mut added = Vec::new();
    for (c, s) in def.columns.iter().zip(sources) {
        if s.is_some() {
            continue;
        }
        if c.auto_increment || c.generated.is_some() {
            return No;
        }
        // The value the copy would have filled in (`RowConverter`).
        added.push(match &c.default {
            Some(ColumnDefault::Value(v)) => v.clone(),
            Some(ColumnDefault::CurrentTimestamp | ColumnDefault::Expr(_)) => return No,
            None if c.nullable => Value::Null,
            None => implicit_default(c),
        });
    }
    if old
        .instant
        .as_ref()
        .is_some_and(|i| i.row_versions() >= strata_types::schema::MAX_ROW_VERSIONS)
    {
        return InstantCheck::TooManyVersions;
    }
    InstantCheck::Yes(InstantColumns::after_alter(old, sources, &added))
}

/// Whether a change only adds secondary indexes to a table, and the statement lets it be
/// done in place (ALGORITHM=DEFAULT or INPLACE): InnoDB's online ADD INDEX.
fn online_candidate(w: &Work, old: &TableDef, def: &TableDef) -> bool {
    let n = old.indexes.len();
    matches!(w.algorithm, Algorithm::Default | Algorithm::Inplace)
        && !w.rebuild.is_empty()
        && w.rebuild.iter().all(|r| r == "ADD INDEX")
        && def.indexes.len() > n
        && def.indexes[..n] == old.indexes[..]
        && def.indexes[n..].iter().all(|ix| !ix.primary)
        && def.columns == old.columns
        && def.engine == old.engine
        && def.db == old.db
        && def.name == old.name
        && def.comment == old.comment
        && def.options == old.options
        && def.auto_increment_start == old.auto_increment_start
        && def.foreign_keys == old.foreign_keys
        && def.checks == old.checks
}

/// ADD INDEX in place, online, when the engine can (`Table::begin_index_build`): the
/// exclusive metadata lock taken for the statement is held only while the build starts
/// and while it finishes; in between it is downgraded to SU (LOCK=DEFAULT/NONE: reads
/// and writes go on) or SNW (LOCK=SHARED: reads only), or kept (LOCK=EXCLUSIVE, or
/// under LOCK TABLES). Then one write of the catalog commits the new definition over
/// the same files. None: the engine cannot, and the caller copies the table.
fn add_indexes_online(
    cx: &mut ExecCtx,
    handle: &Arc<dyn Table>,
    def: &TableDef,
    old: &TableDef,
    lock: LockClause,
    followers: &[(Arc<dyn Table>, TableDef)],
) -> Result<Option<Outcome>> {
    use crate::mdl::{MdlDuration, MdlKey, MdlMode, MdlRequest};
    let opts = strata_engine::IndexBuildOptions {
        tmpdir: cx.tmpdir.to_path_buf(),
        interrupt: cx.txn.interrupt(),
    };
    let Some(build) = handle.begin_index_build(def, &opts) else {
        return Ok(None);
    };
    let mut build = build?;
    let key = MdlKey::table(&old.db, &old.name);
    let weaker = match lock {
        _ if cx.locked_tables.is_some() => None,
        LockClause::Exclusive => None,
        LockClause::Shared => Some(MdlMode::SharedNoWrite),
        LockClause::Default | LockClause::None => Some(MdlMode::SharedUpgradable),
    };
    if let Some(m) = weaker {
        cx.mdl.downgrade(&key, m);
    }
    // A failed load (1062, KILL) drops the build: the table is as it was.
    build.load()?;
    // The swap: exclusive again, waiting for the statements that started meanwhile.
    if weaker.is_some() {
        cx.mdl.acquire(
            &[MdlRequest::new(key, MdlMode::Exclusive)],
            MdlDuration::Transaction,
        )?;
    }
    build.finish()?;
    drop(build);
    cx.catalog
        .alter_in_place(handle, def.clone(), followers.to_vec())?;
    Ok(Some(Outcome::ok(0)))
}

/// Rebuilds `old` as `def` and switches the table to it; returns the rows copied.
fn copy_rows(
    cx: &ExecCtx,
    handle: &Arc<dyn Table>,
    catalog: &Arc<Catalog>,
    def: TableDef,
    sources: &[Option<usize>],
    old: &TableDef,
    followers: Vec<(Arc<dyn Table>, TableDef)>,
) -> Result<u64> {
    let mut rebuild = catalog.begin_rebuild(&def)?;
    rebuild.follow(followers);
    let convert = RowConverter::new(cx, &def, sources, old)?;
    let renumbered = renumbered_column(&def, sources, old);
    let own_txn = || Txn::new(cx.txn.isolation(), cx.txn.lock_wait_timeout());
    catalog.fill_rebuild(handle, cx.txn, rebuild, &own_txn, &mut |row, n| {
        let mut out = convert.row(row, n)?;
        if let Some(a) = renumbered {
            crate::statements::dml::zero_asks_for_next_value(&mut out[a], cx.sql_mode);
        }
        Ok(out)
    })
}

/// Turns an old row into a new one: columns picked by source, values converted to a
/// changed type, added columns filled with their defaults.
struct RowConverter<'a> {
    def: &'a TableDef,
    sources: &'a [Option<usize>],
    /// For each new column: convert the value (its type or NULL-ness changed).
    convert: Vec<bool>,
    /// For each added column: its value.
    added: Vec<Value>,
    /// For each new column: a string going to another character set (CONVERT TO
    /// CHARACTER SET binary): a value cut short is then MySQL's 1406, as its
    /// character-set copy stores it, not the 1265 of a copy within one set.
    recoded: Vec<bool>,
    /// For each new column: a TIME becoming a date type (read on today's date).
    from_time: Vec<bool>,
    now: strata_types::DateTime,
    strict: bool,
    /// The new definition's expression defaults and generated columns, bound over its
    /// row: an added column's expression default is evaluated per row, as MySQL does.
    exprs: Option<Arc<ColumnExprs>>,
    /// For each new column: an added column whose expression default is due.
    pending: Vec<bool>,
    env: &'a dyn crate::expr::Env,
}

impl<'a> RowConverter<'a> {
    fn new(
        cx: &ExecCtx<'a>,
        def: &'a TableDef,
        sources: &'a [Option<usize>],
        old: &TableDef,
    ) -> Result<Self> {
        let convert = sources
            .iter()
            .zip(&def.columns)
            .map(|(s, c)| {
                s.is_some_and(|i| {
                    let o = &old.columns[i];
                    o.data_type != c.data_type || (o.nullable && !c.nullable)
                })
            })
            .collect();
        let added = def
            .columns
            .iter()
            .map(|c| match &c.default {
                Some(ColumnDefault::Value(v)) => v.clone(),
                Some(ColumnDefault::CurrentTimestamp) => {
                    crate::expr::convert_temporal::current_timestamp(c, cx.env.now())
                }
                Some(ColumnDefault::Expr(_)) => Value::Null,
                None if c.nullable || c.auto_increment => Value::Null,
                // ADD COLUMN … NOT NULL without a default fills the implicit default,
                // in strict mode too.
                None => implicit_default(c),
            })
            .collect();
        let string_charset = |c: &ColumnDef| {
            let binary = matches!(
                c.data_type,
                DataType::Binary(_) | DataType::VarBinary(_) | DataType::Blob(_)
            );
            (c.data_type.is_text() || binary).then(|| c.collation.charset_name())
        };
        let recoded = sources
            .iter()
            .zip(&def.columns)
            .map(|(s, c)| {
                s.is_some_and(|i| {
                    let (from, to) = (string_charset(&old.columns[i]), string_charset(c));
                    from.is_some() && to.is_some() && from != to
                })
            })
            .collect();
        let from_time = sources
            .iter()
            .zip(&def.columns)
            .map(|(s, c)| {
                s.is_some_and(|i| {
                    matches!(old.columns[i].data_type, DataType::Time { .. })
                        && c.data_type.is_temporal()
                })
            })
            .collect();
        let shadow: Arc<dyn Table> = Arc::new(DefOnly::new(def.clone()));
        let exprs = ColumnExprs::bind(def, &def.db, &shadow)?;
        let pending = sources
            .iter()
            .zip(&def.columns)
            .map(|(s, c)| s.is_none() && matches!(c.default, Some(ColumnDefault::Expr(_))))
            .collect();
        Ok(RowConverter {
            recoded,
            def,
            sources,
            convert,
            added,
            from_time,
            now: cx.env.now(),
            strict: cx.strict,
            exprs,
            pending,
            env: cx.env,
        })
    }

    fn row(&self, old: &[Value], row_no: u64) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.sources.len());
        for (j, s) in self.sources.iter().enumerate() {
            let col = &self.def.columns[j];
            let v = match s {
                None => self.added[j].clone(),
                Some(i) if !self.convert[j] => old[*i].clone(),
                Some(i) if self.from_time[j] => {
                    let v = crate::expr::convert_temporal::time_on_date(&old[*i], self.now)
                        .unwrap_or(Value::Null);
                    self.value(v, col, row_no)?
                }
                Some(i) => self
                    .value(old[*i].clone(), col, row_no)
                    .map_err(|e| match e {
                        Error::DataTruncated { column, row } if self.recoded[j] => {
                            Error::DataTooLong { column, row }
                        }
                        other => other,
                    })?,
            };
            out.push(v);
        }
        if let Some(x) = &self.exprs {
            let ecx = crate::expr::EvalCtx::new(&[], self.env);
            x.fill_defaults(&mut out, &self.pending, &ecx)?;
            for (j, due) in self.pending.iter().enumerate() {
                if *due {
                    let v = std::mem::take(&mut out[j]);
                    out[j] = self.value(v, &self.def.columns[j], row_no)?;
                }
            }
            // Generated columns are computed anew for every row (one may be new, or
            // its expression or a column it reads may have changed).
            x.compute_generated(&mut out, &ecx, |v, c| {
                self.value(v, &self.def.columns[c], row_no)
            })?;
        }
        Ok(out)
    }

    fn value(&self, v: Value, col: &ColumnDef, row_no: u64) -> Result<Value> {
        if v.is_null() {
            if col.nullable || col.auto_increment {
                return Ok(Value::Null);
            }
            if self.strict {
                return Err(Error::InvalidUseOfNull);
            }
            // MySQL outside strict mode: the implicit default, with this warning.
            self.env.warn(
                crate::expr::WarnLevel::Warning,
                1265,
                format!("Data truncated for column '{}' at row {row_no}", col.name),
            );
            return Ok(implicit_default(col));
        }
        // Outside strict mode a clipped or cut value is stored with INSERT's warnings.
        coerce_or_warn(v, col, row_no, self.strict, self.env).map_err(|e| match e {
            // ALTER reports a value cut short as truncated (1265), where INSERT says
            // too long (1406).
            Error::DataTooLong { column, row } => Error::DataTruncated { column, row },
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::DataType;

    fn col(name: &str, data_type: DataType, nullable: bool) -> ColumnDef {
        ColumnDef::plain(name, data_type, nullable, Collation::Binary)
    }

    fn table() -> TableDef {
        TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("id", DataType::Int { unsigned: false }, false),
                col("a", DataType::Int { unsigned: false }, true),
                col("b", DataType::VarChar(10), true),
            ],
            indexes: vec![
                IndexDef {
                    invisible: false,
                    name: "PRIMARY".into(),
                    columns: vec![0],
                    unique: true,
                    primary: true,
                    comment: String::new(),
                },
                IndexDef {
                    invisible: false,
                    name: "ab".into(),
                    columns: vec![1, 2],
                    unique: false,
                    primary: false,
                    comment: String::new(),
                },
            ],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        }
    }

    #[test]
    fn dropping_a_column_takes_it_out_of_indexes_and_keeps_sources() {
        let old = table();
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.drop_column("a", false).unwrap();
        let (def, sources, w) = w.finish(&old).unwrap();
        assert_eq!(sources, vec![Some(0), Some(2)]);
        assert_eq!(def.indexes[1].columns, vec![1]);
        assert!(!w.rebuild.is_empty());
    }

    #[test]
    fn renames_and_defaults_change_metadata_only() {
        let old = table();
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.rename_column("b", "c").unwrap();
        w.rename_index("ab", "ac").unwrap();
        w.alter_column("a", &ast::AlterColumnOperation::DropDefault)
            .unwrap();
        let (def, _, w) = w.finish(&old).unwrap();
        assert!(w.rebuild.is_empty());
        assert_eq!(def.columns[2].name, "c");
        assert_eq!(def.indexes[1].name, "ac");
    }

    #[test]
    fn convert_to_changes_every_text_column_and_rebuilds() {
        let mut old = table();
        old.columns[2].collation = Collation::GeneralCi;
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.convert_to("utf8mb4", "utf8mb4_bin", Collation::GeneralCi)
            .unwrap();
        let (def, _, w) = w.finish(&old).unwrap();
        assert_eq!(w.rebuild, vec!["CONVERT TO CHARACTER SET".to_string()]);
        assert_eq!(def.default_collation, Collation::Utf8Bin);
        assert_eq!(def.columns[2].collation, Collation::Utf8Bin);
        assert_eq!(def.columns[1].collation, old.columns[1].collation);
        // To the collation the columns have: only the default changes, no copy.
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.convert_to("DEFAULT", "", Collation::GeneralCi).unwrap();
        assert!(w.rebuild.is_empty());
        // To binary: the string types become binary ones of the same length.
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.convert_to("binary", "", Collation::GeneralCi).unwrap();
        let (def, _, w) = w.finish(&old).unwrap();
        assert_eq!(w.rebuild, vec!["CONVERT TO CHARACTER SET".to_string()]);
        assert_eq!(def.default_collation, Collation::Binary);
        let binary = |t: &DataType| match t {
            DataType::Char(n) => DataType::Binary(*n),
            DataType::VarChar(n) => DataType::VarBinary(*n),
            DataType::Text(n) => DataType::Blob(*n),
            other => *other,
        };
        for (new, was) in def.columns.iter().zip(&old.columns) {
            assert_eq!(new.data_type, binary(&was.data_type), "{}", new.name);
        }
    }

    #[test]
    fn mysql_errors_for_bad_clauses() {
        let old = table();
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        assert_eq!(w.drop_column("zz", false).unwrap_err().code(), 1091);
        assert_eq!(w.rename_column("zz", "y").unwrap_err().code(), 1054);
        assert_eq!(w.rename_column("a", "b").unwrap_err().code(), 1060);
        assert_eq!(
            w.add_index(None, vec!["a".into()], false, true)
                .unwrap_err()
                .code(),
            1068
        );
        assert_eq!(
            w.add_index(Some("ab".into()), vec!["a".into()], false, false)
                .unwrap_err()
                .code(),
            1061
        );
        assert_eq!(w.drop_index("nope").unwrap_err().code(), 1091);
        assert_eq!(w.rename_index("nope", "x").unwrap_err().code(), 1176);
        // An unnamed index is named after its first column, suffixed when taken.
        w.add_index(None, vec!["a".into()], false, false).unwrap();
        w.add_index(None, vec!["a".into()], false, false).unwrap();
        assert_eq!(w.indexes[3].name, "a_2");
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        w.add_index(None, vec!["zz".into()], false, false).unwrap();
        assert_eq!(w.finish(&old).unwrap_err().code(), 1072);
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        for c in ["id", "a", "b"] {
            w.drop_column(c, false).unwrap();
        }
        assert_eq!(w.finish(&old).unwrap_err().code(), 1090);
    }

    #[test]
    fn auto_increment_column_must_lead_a_key() {
        let mut old = table();
        old.columns[0].auto_increment = true;
        let mut w = Work::new(&old, strata_types::SqlMode::default());
        let i = w.index("PRIMARY").unwrap();
        let n = w.indexes[i].name.clone();
        w.drop_index(&n).unwrap();
        assert_eq!(w.finish(&old).unwrap_err().code(), 1075);
    }

    #[test]
    fn converter_applies_strict_rules() {
        let mut new = table();
        new.columns[1] = col("a", DataType::TinyInt { unsigned: false }, false);
        new.columns[2] = col("b", DataType::VarChar(2), true);
        let sources = vec![Some(0), Some(1), Some(2)];
        let env = crate::expr::test_env::TestEnv::default();
        let conv = RowConverter {
            def: &new,
            sources: &sources,
            convert: vec![false, true, true],
            recoded: vec![false; 3],
            added: vec![Value::Null; 3],
            from_time: vec![false; 3],
            now: strata_types::DateTime::default(),
            strict: true,
            exprs: None,
            pending: vec![false; 3],
            env: &env,
        };
        let ok = conv
            .row(
                &[Value::Int(1), Value::Int(5), Value::Bytes(b"ab".to_vec())],
                1,
            )
            .unwrap();
        assert_eq!(ok[1], Value::Int(5));
        let e = |row: &[Value]| conv.row(row, 3).unwrap_err().code();
        assert_eq!(e(&[Value::Int(1), Value::Int(500), Value::Null]), 1264);
        assert_eq!(e(&[Value::Int(1), Value::Null, Value::Null]), 1138);
        assert_eq!(
            e(&[Value::Int(1), Value::Int(1), Value::Bytes(b"abc".to_vec())]),
            1265
        );
        // Into another character set (CONVERT TO … binary): too long is 1406.
        let recoding = RowConverter {
            recoded: vec![false, false, true],
            convert: vec![false, true, true],
            added: vec![Value::Null; 3],
            from_time: vec![false; 3],
            pending: vec![false; 3],
            ..conv
        };
        assert_eq!(
            recoding
                .row(
                    &[Value::Int(1), Value::Int(1), Value::Bytes(b"abc".to_vec())],
                    3
                )
                .unwrap_err()
                .code(),
            1406
        );
        let conv = RowConverter {
            recoded: vec![false; 3],
            ..recoding
        };
        let loose = RowConverter {
            strict: false,
            ..conv
        };
        let r = loose
            .row(&[Value::Int(1), Value::Null, Value::Null], 1)
            .unwrap();
        assert_eq!(r[1], Value::Int(0));
    }
}
