//! How constraints are printed: the `CONSTRAINT … FOREIGN KEY … REFERENCES …` and
//! `CONSTRAINT … CHECK (…)` lines of SHOW CREATE TABLE in MySQL 8's form (in name order,
//! after the keys), and the constraint text of errors 1451/1452.

use strata_types::{FkAction, ForeignKeyDef, TableDef};

fn quote(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

fn cols(c: &[String]) -> String {
    c.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ")
}

/// `` CONSTRAINT `fk` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE CASCADE ``: the
/// parent is qualified by its database when that is not `db`. `for_error` gives the form
/// of InnoDB's error messages (1451/1452), which never name RESTRICT (InnoDB keeps no flag
/// for it).
pub fn fk_clause(fk: &ForeignKeyDef, db: &str, for_error: bool) -> String {
    let parent = if fk.parent_db == db {
        quote(&fk.parent_table)
    } else {
        format!("{}.{}", quote(&fk.parent_db), quote(&fk.parent_table))
    };
    let mut s = format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        quote(&fk.name),
        cols(&fk.columns),
        parent,
        cols(&fk.parent_columns)
    );
    // NO ACTION is the default and is not printed, as MySQL 8 does not.
    let shown = |a: FkAction| a != FkAction::NoAction && !(for_error && a == FkAction::Restrict);
    if shown(fk.on_delete) {
        s.push_str(&format!(" ON DELETE {}", fk.on_delete.sql()));
    }
    if shown(fk.on_update) {
        s.push_str(&format!(" ON UPDATE {}", fk.on_update.sql()));
    }
    s
}

/// The constraint lines SHOW CREATE TABLE adds after the keys.
pub fn create_lines(def: &TableDef) -> Vec<String> {
    let mut fks: Vec<_> = def.foreign_keys.iter().collect();
    fks.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out: Vec<String> = fks
        .iter()
        .map(|fk| format!("  {}", fk_clause(fk, &def.db, false)))
        .collect();
    let mut checks: Vec<_> = def.checks.iter().collect();
    checks.sort_by(|a, b| a.name.cmp(&b.name));
    for c in checks {
        let mut l = format!("  CONSTRAINT {} CHECK ({})", quote(&c.name), c.expr);
        if !c.enforced {
            l.push_str(" /*!80016 NOT ENFORCED */");
        }
        out.push(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_key_lines_as_mysql_prints_them() {
        let fk = ForeignKeyDef {
            name: "c_ibfk_1".into(),
            columns: vec!["pid".into(), "k".into()],
            parent_db: "d".into(),
            parent_table: "p".into(),
            parent_columns: vec!["id".into(), "k".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::NoAction,
        };
        assert_eq!(
            fk_clause(&fk, "d", false),
            "CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`, `k`) REFERENCES `p` (`id`, `k`) ON DELETE CASCADE"
        );
        assert!(fk_clause(&fk, "other", false).contains("REFERENCES `d`.`p`"));
        let restrict = ForeignKeyDef {
            on_delete: FkAction::Restrict,
            ..fk
        };
        assert!(fk_clause(&restrict, "d", false).ends_with("ON DELETE RESTRICT"));
        assert!(fk_clause(&restrict, "d", true).ends_with("(`id`, `k`)"));
    }
}
