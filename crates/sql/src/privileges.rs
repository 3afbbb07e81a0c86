//! Which privileges a bound statement needs, on what: the sql layer's half of access
//! control. It sees the bound plan (every table a query reads, through subqueries and
//! views; the table a DML statement changes) and the DDL statement's names, and says
//! what MySQL would check; the session's account store (`strata_session::acl`) says
//! whether the account has it and answers 1142 / 1044 / 1227.
//!
//! Rules (MySQL's, at table granularity): a table read needs SELECT; INSERT needs
//! INSERT (REPLACE also DELETE, ON DUPLICATE KEY UPDATE also UPDATE); UPDATE / DELETE
//! need UPDATE / DELETE on each target (multi-table ones SELECT on the tables they
//! only read); a view read needs SELECT on the view. DDL: CREATE
//! / DROP / ALTER / INDEX on the table, CREATE / DROP on the database, CREATE VIEW,
//! TRUNCATE needs DROP, RENAME needs ALTER and DROP on the old name and CREATE and
//! INSERT on the new one. Tables read through a view are also checked for the invoker
//! (as SQL SECURITY INVOKER does; a DEFINER view is therefore stricter than MySQL,
//! refusing rather than answering differently).

use crate::statement::{Plan, Prepared};
use sqlparser::ast;
use strata_types::privilege::Privs;

/// One requirement: `privs` on `db` (table None: the database itself) or `db.table`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    pub db: String,
    pub table: Option<String>,
    pub privs: Privs,
}

fn table(db: &str, t: &str, privs: Privs) -> Need {
    Need {
        db: db.to_string(),
        table: Some(t.to_string()),
        privs,
    }
}

/// What running `p` requires. Statements this does not describe need nothing here
/// (the session checks the statements it owns itself).
pub fn required(p: &Prepared) -> Vec<Need> {
    let mut out = Vec::new();
    let reads = |out: &mut Vec<Need>, tables: &[crate::plan::query::ReadTable]| {
        for (db, name, _) in tables {
            if !crate::catalog::is_open_schema(db) {
                out.push(table(db, name, Privs::SELECT));
            }
        }
    };
    let views = |out: &mut Vec<Need>, views: &[(String, String)]| {
        for (db, name) in views {
            out.push(table(db, name, Privs::SELECT));
        }
    };
    match &p.plan {
        Plan::Select(s) | Plan::Explain(crate::statement::ExplainPlan { statement: s, .. }) => {
            reads(&mut out, &s.tables);
            views(&mut out, &s.views);
        }
        Plan::Insert(i) => {
            let mut privs = Privs::INSERT;
            if i.replace {
                privs = privs.union(Privs::DELETE);
            }
            if i.on_duplicate.is_some() {
                privs = privs.union(Privs::UPDATE);
            }
            out.push(table(&i.target.db, &i.target.def.name, privs));
            if let Some(sel) = &i.select {
                reads(&mut out, &sel.tables);
                views(&mut out, &sel.views);
            }
            reads(&mut out, &i.subqueries.tables);
            views(&mut out, &i.subqueries.views);
        }
        Plan::Update(u) => {
            // A multi-table UPDATE: UPDATE on each changed table, SELECT on the tables
            // it only reads (in `subqueries.tables`).
            for t in u.targets() {
                out.push(table(&t.db, &t.def.name, Privs::UPDATE));
            }
            reads(&mut out, &u.subqueries.tables);
            views(&mut out, &u.subqueries.views);
        }
        Plan::Delete(d) => {
            for t in d.targets() {
                out.push(table(&t.db, &t.def.name, Privs::DELETE));
            }
            reads(&mut out, &d.subqueries.tables);
            views(&mut out, &d.subqueries.views);
        }
        Plan::Other(stmt) => ddl(stmt, p.db.as_deref(), &mut out),
    }
    out
}

/// The (db, table) a DDL name means; None when it names no database and none is in use
/// (the statement then fails with 1046 anyway).
fn name_of(name: &ast::ObjectName, current: Option<&str>) -> Option<(String, String)> {
    match crate::parse::object_name_parts(name).as_slice() {
        [t] => Some((current?.to_string(), t.clone())),
        [d, t] => Some((d.clone(), t.clone())),
        _ => None,
    }
}

fn ddl(stmt: &ast::Statement, current: Option<&str>, out: &mut Vec<Need>) {
    use ast::Statement as S;
    let on = |name: &ast::ObjectName, privs: Privs, out: &mut Vec<Need>| {
        if let Some((db, t)) = name_of(name, current) {
            out.push(table(&db, &t, privs));
        }
    };
    let db_need = |name: String, privs: Privs| Need {
        db: name.trim_matches('`').to_string(),
        table: None,
        privs,
    };
    match stmt {
        S::CreateDatabase { db_name, .. } => out.push(db_need(db_name.to_string(), Privs::CREATE)),
        // ALTER DATABASE without a name alters the current one.
        S::AlterSchema(a) => out.push(db_need(
            crate::parse::alter_clauses::altered_database(a, current).unwrap_or_default(),
            Privs::ALTER,
        )),
        S::CreateSchema { schema_name, .. } => {
            out.push(db_need(schema_name.to_string(), Privs::CREATE))
        }
        S::CreateTable(ct) => {
            // CREATE TEMPORARY TABLE needs CREATE TEMPORARY TABLES, not CREATE (MySQL).
            let need = if ct.temporary {
                Privs::CREATE_TMP
            } else {
                Privs::CREATE
            };
            on(&ct.name, need, out);
            if let Some(like) = &ct.like {
                let n = match like {
                    ast::CreateTableLikeKind::Parenthesized(l)
                    | ast::CreateTableLikeKind::Plain(l) => &l.name,
                };
                on(n, Privs::SELECT, out);
            }
        }
        S::CreateIndex(ci) => on(&ci.table_name, Privs::INDEX, out),
        S::AlterTable(at) => on(&at.name, Privs::ALTER, out),
        S::CreateView(cv) => on(&cv.name, Privs::CREATE_VIEW, out),
        S::AlterView { name, .. } => on(name, Privs::CREATE_VIEW.union(Privs::DROP), out),
        S::Truncate(t) => {
            for target in &t.table_names {
                on(&target.name, Privs::DROP, out);
            }
        }
        S::RenameTable(r) => {
            for rt in r {
                on(&rt.old_name, Privs::ALTER.union(Privs::DROP), out);
                on(&rt.new_name, Privs::CREATE.union(Privs::INSERT), out);
            }
        }
        // Dropping a session's own temporary table is checked by no privilege (MySQL
        // checks none on a temporary table once it exists).
        S::Drop {
            temporary: true, ..
        } => {}
        S::Drop {
            object_type,
            names,
            table: on_table,
            ..
        } => match object_type {
            ast::ObjectType::Table | ast::ObjectType::View => {
                for n in names {
                    on(n, Privs::DROP, out);
                }
            }
            ast::ObjectType::Database | ast::ObjectType::Schema => {
                for n in names {
                    out.push(db_need(n.to_string(), Privs::DROP));
                }
            }
            ast::ObjectType::Index => {
                if let Some(t) = on_table {
                    on(t, Privs::INDEX, out);
                }
            }
            _ => {}
        },
        _ => {}
    }
}

/// The columns of `db.table` that `p` uses under `privilege` (one of SELECT, INSERT,
/// UPDATE, REFERENCES): the columns it reads (SELECT: select list, WHERE, joins,
/// grouping, subqueries), gives values (INSERT) or assigns (UPDATE); an empty list when
/// it uses the table without naming a column (`COUNT(*)`). None when this layer cannot
/// say, and the table-level privilege is then needed. Column grants are checked with
/// it (`strata_session::acl`) only for an account that lacks the table-level privilege
/// and holds column grants on the table, so the common path never walks the plan.
pub fn columns_used(p: &Prepared, db: &str, table: &str, privilege: Privs) -> Option<ColumnUse> {
    use crate::plan::query::QueryPlan;
    let mut acc = ColumnAcc {
        db,
        table,
        cols: Vec::new(),
        found: false,
        star: false,
    };
    let names = |def: &strata_types::TableDef, positions: &mut dyn Iterator<Item = usize>| {
        let mut v: Vec<String> = positions
            .filter_map(|i| def.columns.get(i).map(|c| c.name.clone()))
            .collect();
        v.dedup();
        v
    };
    let walk_statement =
        |acc: &mut ColumnAcc, root: Option<&QueryPlan>, subs: &[std::sync::Arc<QueryPlan>]| {
            if let Some(r) = root {
                acc.query(r);
            }
            for s in subs {
                acc.query(s);
            }
        };
    match (&p.plan, privilege) {
        (Plan::Select(s), Privs::SELECT)
        | (Plan::Explain(crate::statement::ExplainPlan { statement: s, .. }), Privs::SELECT) => {
            walk_statement(&mut acc, Some(&s.root), &s.subqueries);
        }
        (Plan::Insert(i), Privs::SELECT) => {
            if let Some(sel) = &i.select {
                walk_statement(&mut acc, Some(&sel.root), &sel.subqueries);
            }
            walk_statement(&mut acc, None, &i.subqueries.subqueries);
        }
        (Plan::Insert(i), Privs::INSERT) if i.target.through.is_none() => {
            return Some(ColumnUse::named(names(
                &i.target.def,
                &mut i.columns.iter().copied(),
            )));
        }
        (Plan::Insert(i), Privs::UPDATE) if i.target.through.is_none() => {
            let on = i.on_duplicate.as_deref().unwrap_or_default();
            return Some(ColumnUse::named(names(
                &i.target.def,
                &mut on.iter().map(|(c, _)| *c),
            )));
        }
        (Plan::Update(u), Privs::UPDATE) if u.multi.is_none() && u.target.through.is_none() => {
            return Some(ColumnUse::named(names(
                &u.target.def,
                &mut u.assignments.iter().map(|(c, _)| *c),
            )));
        }
        (Plan::Update(u), Privs::SELECT) if u.multi.is_none() => {
            // WHERE and the SET values read the target's columns; the rows the
            // statement writes back are not a read.
            acc.block(&u.source, false);
            for (_, e) in &u.assignments {
                acc.mark_expr(&u.source, e);
            }
            walk_statement(&mut acc, None, &u.subqueries.subqueries);
        }
        _ => return None,
    }
    acc.found.then_some(ColumnUse {
        columns: acc.cols,
        star: acc.star,
    })
}

/// The columns of one table a statement uses under one privilege.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnUse {
    pub columns: Vec<String>,
    /// Some select list takes the table's columns through `*` / `t.*` (MySQL then
    /// refuses the table, 1142, rather than a column, 1143).
    pub star: bool,
}

impl ColumnUse {
    fn named(columns: Vec<String>) -> ColumnUse {
        ColumnUse {
            columns,
            star: false,
        }
    }
}

/// Collects the columns of one table that query blocks read.
struct ColumnAcc<'a> {
    db: &'a str,
    table: &'a str,
    cols: Vec<String>,
    /// Whether a block reads the table at all.
    found: bool,
    star: bool,
}

impl ColumnAcc<'_> {
    fn query(&mut self, q: &crate::plan::query::QueryPlan) {
        use crate::plan::query::QueryPlan;
        match q {
            QueryPlan::Block(b) => self.block(b, true),
            QueryPlan::SetOp(s) => {
                self.query(&s.left);
                self.query(&s.right);
            }
            QueryPlan::Ordered(o) => self.query(&o.input),
            QueryPlan::Recursive(r) => {
                self.query(&r.anchor);
                self.query(&r.step);
            }
        }
    }

    /// The block's reads of the table; `projection` false leaves out the select list
    /// (an UPDATE's source, whose rows are written back, not returned).
    fn block(&mut self, b: &crate::plan::block::SelectPlan, projection: bool) {
        for (_, d) in &b.derived {
            if let Some(q) = d {
                self.query(q);
            }
        }
        if !b.scope.tables.iter().any(|t| self.is_mine(t)) {
            return;
        }
        self.found = true;
        if projection
            && b.star_tables
                .iter()
                .any(|&i| b.scope.tables.get(i).is_some_and(|t| self.is_mine(t)))
        {
            self.star = true;
        }
        let used = if projection {
            crate::optimizer::columns::needed_columns(b)
        } else if b.windows.is_some() {
            None
        } else {
            let mut used = vec![false; b.scope.width()];
            let mut mark = |e: &crate::expr::Expr| mark_columns(e, &mut used);
            for level in &b.levels {
                level.filter.iter().chain(&level.on).for_each(&mut mark);
                match &level.access {
                    crate::plan::block::Access::Index {
                        eq, lower, upper, ..
                    } => {
                        eq.iter().for_each(&mut mark);
                        lower.iter().chain(upper).for_each(|(e, _)| mark(e));
                    }
                    crate::plan::block::Access::IndexIn { values, .. } => {
                        values.iter().for_each(&mut mark)
                    }
                    crate::plan::block::Access::JoinBuffer { keys } => {
                        keys.iter().for_each(|k| mark(&k.probe))
                    }
                    _ => {}
                }
            }
            b.const_filter.iter().for_each(&mut mark);
            Some(used)
        };
        // A merged view's or derived table's select list is read as when materialised.
        let used = used.map(|mut u| {
            b.merged_reads.iter().for_each(|e| mark_columns(e, &mut u));
            u
        });
        for t in &b.scope.tables {
            if !self.is_mine(t) {
                continue;
            }
            for (i, c) in t.def.columns.iter().enumerate() {
                let read = used
                    .as_ref()
                    .is_none_or(|u| u.get(t.offset + i).copied().unwrap_or(false));
                if read && !self.cols.iter().any(|x| x.eq_ignore_ascii_case(&c.name)) {
                    self.cols.push(c.name.clone());
                }
            }
        }
    }

    /// Adds the table's columns `e` reads in block `b`.
    fn mark_expr(&mut self, b: &crate::plan::block::SelectPlan, e: &crate::expr::Expr) {
        let mut used = vec![false; b.scope.width()];
        mark_columns(e, &mut used);
        for t in &b.scope.tables {
            if !self.is_mine(t) {
                continue;
            }
            for (i, c) in t.def.columns.iter().enumerate() {
                if used.get(t.offset + i).copied().unwrap_or(false)
                    && !self.cols.iter().any(|x| x.eq_ignore_ascii_case(&c.name))
                {
                    self.cols.push(c.name.clone());
                }
            }
        }
    }

    fn is_mine(&self, t: &crate::bind::ScopeTable) -> bool {
        t.is_base() && t.db == self.db && t.def.name == self.table
    }
}

fn mark_columns(e: &crate::expr::Expr, used: &mut [bool]) {
    e.walk(&mut |x| {
        if let crate::expr::Expr::Column(p) = x {
            if let Some(u) = used.get_mut(*p) {
                *u = true;
            }
        }
    })
}
