//! Persisted system variables: the `mysqld-auto.cnf` file in the data directory that
//! `SET PERSIST`, `SET PERSIST_ONLY` and `RESET PERSIST` maintain and the server applies
//! at startup. The format is written down in `docs/format/persisted-variables.md`; this
//! module only reads and writes it (checking values is `Session::set_variable`'s job).

use parking_lot::Mutex;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use strata_types::{Error, Result};

pub const FILE_NAME: &str = "mysqld-auto.cnf";
const VERSION: u64 = 1;

/// One persisted variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub value: String,
    /// Microseconds since 1970-01-01 UTC.
    pub timestamp: u64,
    pub user: String,
    pub host: String,
}

/// The file and its contents; one lock serializes writers.
pub struct Persisted {
    path: PathBuf,
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl Persisted {
    /// Reads `datadir/mysqld-auto.cnf` (none: no entries). A file that does not parse
    /// is an error: the server must not start with half its settings.
    pub fn open(datadir: &Path) -> Result<Persisted> {
        let path = datadir.join(FILE_NAME);
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        Ok(Persisted {
            path,
            entries: Mutex::new(entries),
        })
    }

    /// Every entry, by name.
    pub fn entries(&self) -> Vec<(String, Entry)> {
        self.entries
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Records `name = value` and rewrites the file.
    pub fn set(&self, name: &str, value: String, user: &str) -> Result<()> {
        let mut entries = self.entries.lock();
        let mut next = entries.clone();
        next.insert(
            name.to_string(),
            Entry {
                value,
                timestamp: now_micros(),
                user: user.to_string(),
                host: "localhost".into(),
            },
        );
        self.write(&next)?;
        *entries = next;
        Ok(())
    }

    /// RESET PERSIST [name]: removes one entry (false when there is none) or all.
    pub fn remove(&self, name: Option<&str>) -> Result<bool> {
        let mut entries = self.entries.lock();
        let mut next = entries.clone();
        let found = match name {
            Some(n) => next.remove(n).is_some(),
            None => {
                next.clear();
                true
            }
        };
        if found {
            self.write(&next)?;
            *entries = next;
        }
        Ok(found)
    }

    /// Writes the whole file through a temporary file and a rename, so a crash leaves
    /// the old contents or the new ones.
    fn write(&self, entries: &BTreeMap<String, Entry>) -> Result<()> {
        use std::io::Write;
        let tmp = self.path.with_extension("cnf.tmp");
        let text = render(entries);
        let io = |e| Error::io(self.path.display(), e);
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            if let Ok(d) = std::fs::File::open(dir) {
                d.sync_all().map_err(io)?;
            }
        }
        Ok(())
    }
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The file's text for `entries`.
pub fn render(entries: &BTreeMap<String, Entry>) -> String {
    let mut server = Map::new();
    for (name, e) in entries {
        server.insert(
            name.clone(),
            json!({
                "Value": e.value,
                "Metadata": { "Timestamp": e.timestamp, "User": e.user, "Host": e.host },
            }),
        );
    }
    let doc = json!({ "Version": VERSION, "mysql_server": Json::Object(server) });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Parses the file's text; the error says what is wrong with it.
pub fn parse(text: &str) -> std::result::Result<BTreeMap<String, Entry>, String> {
    let doc: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let version = doc.get("Version").and_then(Json::as_u64);
    if version != Some(VERSION) {
        return Err(format!(
            "unsupported Version {:?} (expected 1)",
            doc.get("Version")
        ));
    }
    let Some(server) = doc.get("mysql_server").and_then(Json::as_object) else {
        return Err("no \"mysql_server\" object".into());
    };
    let mut out = BTreeMap::new();
    for (name, v) in server {
        let value = v
            .get("Value")
            .and_then(Json::as_str)
            .ok_or_else(|| format!("{name}: no string \"Value\""))?;
        let meta = v.get("Metadata");
        let text = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        out.insert(
            name.to_ascii_lowercase(),
            Entry {
                value: value.to_string(),
                timestamp: meta
                    .and_then(|m| m.get("Timestamp"))
                    .and_then(Json::as_u64)
                    .unwrap_or(0),
                user: text("User"),
                host: text("Host"),
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_bad_files() {
        let mut m = BTreeMap::new();
        m.insert(
            "wait_timeout".to_string(),
            Entry {
                value: "100".into(),
                timestamp: 1_764_140_000_123_456,
                user: "root".into(),
                host: "localhost".into(),
            },
        );
        let text = render(&m);
        assert!(text.contains("\"Version\": 1"), "{text}");
        assert_eq!(parse(&text).unwrap(), m);
        assert!(parse("{").is_err());
        assert!(parse(r#"{"Version": 2, "mysql_server": {}}"#).is_err());
        assert!(parse(r#"{"Version": 1, "mysql_server": {"x": {"Value": 5}}}"#).is_err());
        assert!(parse(r#"{"Version": 1, "mysql_server": {}}"#)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn set_and_reset_rewrite_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = Persisted::open(dir.path()).unwrap();
        p.set("sql_mode", "ANSI_QUOTES".into(), "root").unwrap();
        p.set("wait_timeout", "99".into(), "root").unwrap();
        let again = Persisted::open(dir.path()).unwrap();
        let names: Vec<String> = again.entries().into_iter().map(|e| e.0).collect();
        assert_eq!(names, ["sql_mode", "wait_timeout"]);
        assert!(again.remove(Some("sql_mode")).unwrap());
        assert!(!again.remove(Some("sql_mode")).unwrap());
        assert_eq!(Persisted::open(dir.path()).unwrap().entries().len(), 1);
        again.remove(None).unwrap();
        assert!(Persisted::open(dir.path()).unwrap().entries().is_empty());
        std::fs::write(dir.path().join(FILE_NAME), "not json").unwrap();
        assert!(Persisted::open(dir.path()).is_err());
    }
}
