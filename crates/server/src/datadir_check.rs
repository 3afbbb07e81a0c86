//! Startup checks that the data directory's catalog and its table files agree, so the
//! server never comes up silently empty over tables it cannot see.
//!
//! The catalog (`catalog.json`) is the only list of databases and tables; without it
//! the catalog opens empty. So before anything is opened ([`before_open`]): a data
//! directory that holds table files but no `catalog.json` is refused, with what to do. A catalog that names a table whose files are missing or
//! damaged already fails to open (the engine's error names the table); [`open_hint`]
//! adds what to do. Table files no catalog entry owns (a crash between creating a
//! table's files and recording it, or files copied in) do not stop the server — a
//! crash must not make it unstartable — but are logged ([`after_open`]), and CREATE
//! TABLE of such a name is refused with 1050 by the engines instead of overwriting them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use strata_sql::Catalog;

const CATALOG: &str = "catalog.json";

/// Files under the database directories of `datadir` (one level deep). An empty
/// database directory is not counted: a crash between CREATE DATABASE making it and
/// writing the first catalog leaves one, and refusing to start over it would make a
/// crash need a human; nothing in it is lost.
fn table_files(datadir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(datadir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        // The default secure_file_priv directory holds users' files, not tables; `#tmp`
        // holds temporary tables, which the catalog never lists (removed at startup).
        if !path.is_dir() || e.file_name() == "mysql-files" || e.file_name() == "#tmp" {
            continue;
        }
        if let Ok(files) = std::fs::read_dir(&path) {
            out.extend(files.flatten().map(|f| f.path()));
        }
    }
    out.sort();
    out
}

fn shown(datadir: &Path, paths: &[PathBuf]) -> String {
    let mut names: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| p.strip_prefix(datadir).unwrap_or(p).display().to_string())
        .collect();
    if paths.len() > 5 {
        names.push(format!("and {} more", paths.len() - 5));
    }
    names.join(", ")
}

/// Refuses a data directory with table files but no catalog.
pub fn before_open(datadir: &Path) -> Result<(), String> {
    if datadir.join(CATALOG).exists() {
        return Ok(());
    }
    let found = table_files(datadir);
    if found.is_empty() {
        return Ok(());
    }
    let tmp = datadir.join(format!("{CATALOG}.tmp"));
    let tmp_note = if tmp.exists() {
        format!(
            " ({} is the catalog a DDL statement was writing when the server stopped: if it is complete, rename it to {CATALOG})",
            tmp.display()
        )
    } else {
        String::new()
    };
    Err(format!(
        "data directory {} has table files ({}) but no {CATALOG}, the list of \
         its databases and tables; started without it, the server would show none of them. \
         Restore {CATALOG} from a backup{tmp_note}, or move the database directories out \
         of the data directory to start empty.",
        datadir.display(),
        shown(datadir, &found)
    ))
}

/// Adds what to do to an error opening the catalog or the tables it names.
pub fn open_hint(err: String) -> String {
    format!(
        "{err}. The catalog ({CATALOG}) or a table it names could not be opened (a table's \
         files missing or damaged): restore them, or the whole data directory, from a \
         backup; the server does not start without them rather than lose the table."
    )
}

/// Logs table files that no table of the catalog owns.
pub fn after_open(catalog: &Catalog) {
    // Each table's own stem: after ALTER TABLE or RENAME TABLE it is not the one its
    // name gives (`docs/format/catalog.md`).
    let stems: BTreeSet<PathBuf> = catalog.table_files().into_iter().collect();
    let datadir = catalog.datadir();
    let orphans: Vec<PathBuf> = table_files(datadir)
        .into_iter()
        .filter(|p| p.is_file() && !stems.contains(&p.with_extension("")))
        .collect();
    if !orphans.is_empty() {
        strata_types::log_warning!(
            "{} file(s) in {} belong to no table of {CATALOG}: {}. They are left alone; \
             CREATE TABLE of such a name fails with 1050 until they are moved away.",
            orphans.len(),
            datadir.display(),
            shown(datadir, &orphans)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_catalog_is_refused_only_when_tables_are_there() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(
            before_open(&d.join("absent")).is_ok(),
            "a new data directory"
        );
        std::fs::write(d.join("ib_logfile0"), b"").unwrap();
        assert!(before_open(d).is_ok(), "engine files alone: no table yet");
        std::fs::create_dir(d.join("shop")).unwrap();
        assert!(
            before_open(d).is_ok(),
            "an empty database directory (a crash in CREATE DATABASE)"
        );
        std::fs::write(d.join("shop").join("orders.ibd"), b"x").unwrap();
        let e = before_open(d).unwrap_err();
        assert!(
            e.contains("shop/orders.ibd") && e.contains("no catalog.json"),
            "{e}"
        );
        std::fs::write(d.join(CATALOG), b"{}").unwrap();
        assert!(before_open(d).is_ok());
    }
}
