//! The regression gate: `tests/corpus-baseline.txt` holds one line `engine file passed` per
//! engine and corpus file. A run whose passed count for a file falls below its line is a
//! regression; a count above it is reported with the line to write instead.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

/// (engine, file) → records passed.
pub type Baseline = BTreeMap<(String, String), usize>;

const HEADER: &str = "\
# Records of the external sqllogictest corpus (../shared/sqllogictest) that pass on Strata,
# one line per engine and file: `engine file passed`. crates/server/tests/corpus.rs fails when
# a file passes fewer records than its line says. Rewrite after an improvement with
#   STRATA_CORPUS_UPDATE=1 cargo test --release -p strata --test corpus
";

/// Reads the baseline; a missing file is an empty baseline.
pub fn load(path: &Path) -> Result<Baseline, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Baseline::new()),
        Err(e) => return Err(format!("read {}: {e}", path.display())),
    };
    let mut b = Baseline::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [engine, file, passed] = parts.as_slice() else {
            return Err(format!(
                "{}:{}: expected `engine file passed`",
                path.display(),
                i + 1
            ));
        };
        let passed = passed
            .parse::<usize>()
            .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        b.insert((engine.to_string(), file.to_string()), passed);
    }
    Ok(b)
}

/// Writes the baseline (header and sorted lines).
pub fn save(path: &Path, b: &Baseline) -> io::Result<()> {
    let mut text = String::from(HEADER);
    for ((engine, file), passed) in b {
        text.push_str(&format!("{engine} {file} {passed}\n"));
    }
    std::fs::write(path, text)
}

/// One file whose count moved away from the baseline.
#[derive(Debug, PartialEq, Eq)]
pub struct Change {
    pub engine: String,
    pub file: String,
    pub baseline: Option<usize>,
    pub passed: usize,
}

/// Splits the measured counts into regressions (below the baseline) and improvements (above
/// it, or not in the baseline yet).
pub fn compare(b: &Baseline, measured: &Baseline) -> (Vec<Change>, Vec<Change>) {
    let mut worse = Vec::new();
    let mut better = Vec::new();
    for ((engine, file), &passed) in measured {
        let base = b.get(&(engine.clone(), file.clone())).copied();
        let change = Change {
            engine: engine.clone(),
            file: file.clone(),
            baseline: base,
            passed,
        };
        match base {
            Some(n) if passed < n => worse.push(change),
            Some(n) if passed == n => {}
            _ => better.push(change),
        }
    }
    (worse, better)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(e: &str, f: &str) -> (String, String) {
        (e.into(), f.into())
    }

    #[test]
    fn round_trip_and_compare() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("baseline.txt");
        assert!(load(&path).expect("missing is empty").is_empty());
        let mut b = Baseline::new();
        b.insert(key("innodb", "select1.test"), 10);
        b.insert(key("myisam", "evidence/in1.test"), 3);
        save(&path, &b).expect("save");
        assert_eq!(load(&path).expect("load"), b);

        let mut m = Baseline::new();
        m.insert(key("innodb", "select1.test"), 9);
        m.insert(key("myisam", "evidence/in1.test"), 4);
        m.insert(key("myisam", "select1.test"), 1);
        let (worse, better) = compare(&b, &m);
        assert_eq!(worse.len(), 1);
        assert_eq!((worse[0].baseline, worse[0].passed), (Some(10), 9));
        assert_eq!(better.len(), 2);

        std::fs::write(&path, "innodb select1.test\n").expect("write");
        assert!(load(&path).is_err());
    }
}
