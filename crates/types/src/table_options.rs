//! The table options MySQL keeps in its dictionary and shows, though none of them changes
//! a stored byte here: `ROW_FORMAT`, `KEY_BLOCK_SIZE`, `STATS_PERSISTENT`,
//! `STATS_AUTO_RECALC`, `STATS_SAMPLE_PAGES`, `PACK_KEYS`, `CHECKSUM`, `DELAY_KEY_WRITE`,
//! `MAX_ROWS`, `MIN_ROWS`, `AVG_ROW_LENGTH` and `COMPRESSION`.
//!
//! They are kept so that what a client declared is what it reads back: `SHOW CREATE
//! TABLE` (and so every dump) repeats them, `information_schema.TABLES.CREATE_OPTIONS`
//! and `ROW_FORMAT` report them, as MySQL 8 does. Dropping them silently would make a
//! dump of a MySQL table come back different. Their validation follows MySQL's grammar:
//! a value it would not parse is a syntax error. `docs/format/catalog.md` describes how
//! they are stored.

use serde::{Deserialize, Serialize};

/// The options a table was created or altered with; a field is None (or false) when the
/// table does not set it, which is how MySQL's `=DEFAULT` and `=0` forms unset them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableOptions {
    /// `DYNAMIC`, `FIXED`, `COMPRESSED`, `REDUNDANT` or `COMPACT`, upper case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_block_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats_persistent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats_auto_recalc: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats_sample_pages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_keys: Option<bool>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub checksum: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub delay_key_write: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rows: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_row_length: Option<u64>,
    /// As written (`'zlib'`, `'lz4'`, `'none'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The row formats MySQL's grammar accepts after `ROW_FORMAT=` (besides DEFAULT).
const ROW_FORMATS: [&str; 5] = ["DYNAMIC", "FIXED", "COMPRESSED", "REDUNDANT", "COMPACT"];

/// The option names this module owns, as MySQL spells them.
pub const TABLE_OPTION_NAMES: [&str; 12] = [
    "ROW_FORMAT",
    "KEY_BLOCK_SIZE",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
    "PACK_KEYS",
    "CHECKSUM",
    "DELAY_KEY_WRITE",
    "MAX_ROWS",
    "MIN_ROWS",
    "AVG_ROW_LENGTH",
    "COMPRESSION",
];

impl TableOptions {
    pub fn is_default(&self) -> bool {
        *self == TableOptions::default()
    }

    /// Sets option `name` (any case) to `value` as written (quotes removed). Ok(false):
    /// not one of these options; Err: a value MySQL's grammar refuses, with the text
    /// of the syntax error.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let name = name.trim().to_ascii_uppercase().replace(' ', "_");
        let value = value.trim();
        let upper = value.to_ascii_uppercase();
        let default = upper == "DEFAULT";
        let bad = || format!("{value}' for {name}");
        let number = || -> Result<u64, String> { value.parse::<u64>().map_err(|_| bad()) };
        // MySQL's ternary options: 0, 1 or DEFAULT, nothing else.
        let ternary = || -> Result<Option<bool>, String> {
            match upper.as_str() {
                "DEFAULT" => Ok(None),
                "0" => Ok(Some(false)),
                "1" => Ok(Some(true)),
                _ => Err(bad()),
            }
        };
        let nonzero = |n: u64| (n != 0).then_some(n);
        match name.as_str() {
            "ROW_FORMAT" => {
                self.row_format = match ROW_FORMATS.iter().find(|f| **f == upper) {
                    Some(f) => Some(f.to_string()),
                    None if default => None,
                    None => return Err(bad()),
                }
            }
            "KEY_BLOCK_SIZE" => self.key_block_size = nonzero(number()?),
            "STATS_PERSISTENT" => self.stats_persistent = ternary()?,
            "STATS_AUTO_RECALC" => self.stats_auto_recalc = ternary()?,
            "STATS_SAMPLE_PAGES" => {
                self.stats_sample_pages = if default {
                    None
                } else {
                    // MySQL's grammar: 1 to 65535 pages.
                    match number()? {
                        n @ 1..=65535 => Some(n),
                        _ => return Err(bad()),
                    }
                }
            }
            "PACK_KEYS" => self.pack_keys = ternary()?,
            "CHECKSUM" | "TABLE_CHECKSUM" => self.checksum = number()? != 0,
            "DELAY_KEY_WRITE" => self.delay_key_write = number()? != 0,
            "MAX_ROWS" => self.max_rows = nonzero(number()?),
            "MIN_ROWS" => self.min_rows = nonzero(number()?),
            "AVG_ROW_LENGTH" => self.avg_row_length = nonzero(number()?),
            "COMPRESSION" => self.compression = (!value.is_empty()).then(|| value.to_string()),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `(name, value)` of each option set, in the order MySQL prints them.
    fn shown(&self) -> Vec<(&'static str, String)> {
        let flag = |b: bool| if b { "1" } else { "0" }.to_string();
        let mut out = Vec::new();
        if let Some(n) = self.min_rows {
            out.push(("MIN_ROWS", n.to_string()));
        }
        if let Some(n) = self.max_rows {
            out.push(("MAX_ROWS", n.to_string()));
        }
        if let Some(n) = self.avg_row_length {
            out.push(("AVG_ROW_LENGTH", n.to_string()));
        }
        if let Some(b) = self.pack_keys {
            out.push(("PACK_KEYS", flag(b)));
        }
        if let Some(b) = self.stats_persistent {
            out.push(("STATS_PERSISTENT", flag(b)));
        }
        if let Some(b) = self.stats_auto_recalc {
            out.push(("STATS_AUTO_RECALC", flag(b)));
        }
        if let Some(n) = self.stats_sample_pages {
            out.push(("STATS_SAMPLE_PAGES", n.to_string()));
        }
        if self.checksum {
            out.push(("CHECKSUM", flag(true)));
        }
        if self.delay_key_write {
            out.push(("DELAY_KEY_WRITE", flag(true)));
        }
        if let Some(f) = &self.row_format {
            out.push(("ROW_FORMAT", f.clone()));
        }
        if let Some(n) = self.key_block_size {
            out.push(("KEY_BLOCK_SIZE", n.to_string()));
        }
        if let Some(c) = &self.compression {
            out.push(("COMPRESSION", format!("'{}'", c.replace('\'', "''"))));
        }
        out
    }

    /// What SHOW CREATE TABLE prints after the collation: ` STATS_PERSISTENT=0
    /// ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8`, or nothing.
    pub fn create_clause(&self) -> String {
        self.shown()
            .into_iter()
            .map(|(n, v)| format!(" {n}={v}"))
            .collect()
    }

    /// `information_schema.TABLES.CREATE_OPTIONS`: `row_format=COMPRESSED
    /// KEY_BLOCK_SIZE=8` (MySQL's spelling: lower-case names, but KEY_BLOCK_SIZE).
    pub fn information_schema_text(&self) -> String {
        self.shown()
            .into_iter()
            .map(|(n, v)| {
                let n = if n == "KEY_BLOCK_SIZE" {
                    n.to_string()
                } else {
                    n.to_ascii_lowercase()
                };
                format!("{n}={v}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The `Row_format` / `ROW_FORMAT` of SHOW TABLE STATUS and information_schema: the
    /// declared one when the engine has it, else what the engine stores. The btree
    /// engine's rows are variable-length, as InnoDB's default DYNAMIC; the heap engine's
    /// are fixed when every column is (`all_fixed`), as MyISAM's.
    pub fn row_format_shown(&self, btree: bool, all_fixed: bool) -> &'static str {
        let declared = self.row_format.as_deref();
        match declared {
            Some("COMPRESSED") => "Compressed",
            Some("REDUNDANT") => "Redundant",
            Some("COMPACT") => "Compact",
            Some("DYNAMIC") => "Dynamic",
            _ if btree => "Dynamic",
            _ if all_fixed => "Fixed",
            _ => "Dynamic",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_follows_mysqls_grammar_and_defaults_unset() {
        let mut o = TableOptions::default();
        assert_eq!(o.set("row_format", "compressed"), Ok(true));
        assert_eq!(o.set("KEY_BLOCK_SIZE", "8"), Ok(true));
        assert_eq!(o.set("STATS_PERSISTENT", "0"), Ok(true));
        assert_eq!(o.set("ENGINE", "InnoDB"), Ok(false));
        assert!(o.set("ROW_FORMAT", "PAGE").is_err());
        assert!(o.set("STATS_PERSISTENT", "2").is_err());
        assert!(o.set("STATS_SAMPLE_PAGES", "0").is_err());
        assert!(o.set("KEY_BLOCK_SIZE", "x").is_err());
        assert_eq!(
            o.create_clause(),
            " STATS_PERSISTENT=0 ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8"
        );
        assert_eq!(
            o.information_schema_text(),
            "stats_persistent=0 row_format=COMPRESSED KEY_BLOCK_SIZE=8"
        );
        assert_eq!(o.row_format_shown(true, true), "Compressed");
        o.set("ROW_FORMAT", "DEFAULT").unwrap();
        o.set("KEY_BLOCK_SIZE", "0").unwrap();
        o.set("STATS_PERSISTENT", "default").unwrap();
        assert!(o.is_default());
        assert_eq!(o.create_clause(), "");
        assert_eq!(o.row_format_shown(true, true), "Dynamic");
        assert_eq!(o.row_format_shown(false, true), "Fixed");
        assert_eq!(o.row_format_shown(false, false), "Dynamic");
    }

    #[test]
    fn every_option_prints_in_mysqls_order() {
        let mut o = TableOptions::default();
        for (n, v) in [
            ("COMPRESSION", "zlib"),
            ("KEY_BLOCK_SIZE", "4"),
            ("ROW_FORMAT", "DYNAMIC"),
            ("DELAY_KEY_WRITE", "1"),
            ("CHECKSUM", "1"),
            ("STATS_SAMPLE_PAGES", "20"),
            ("STATS_AUTO_RECALC", "1"),
            ("STATS_PERSISTENT", "1"),
            ("PACK_KEYS", "0"),
            ("AVG_ROW_LENGTH", "50"),
            ("MAX_ROWS", "100"),
            ("MIN_ROWS", "2"),
        ] {
            assert_eq!(o.set(n, v), Ok(true), "{n}");
        }
        assert_eq!(
            o.create_clause(),
            " MIN_ROWS=2 MAX_ROWS=100 AVG_ROW_LENGTH=50 PACK_KEYS=0 STATS_PERSISTENT=1 \
             STATS_AUTO_RECALC=1 STATS_SAMPLE_PAGES=20 CHECKSUM=1 DELAY_KEY_WRITE=1 \
             ROW_FORMAT=DYNAMIC KEY_BLOCK_SIZE=4 COMPRESSION='zlib'"
        );
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(serde_json::from_str::<TableOptions>(&json).unwrap(), o);
        assert_eq!(
            serde_json::to_string(&TableOptions::default()).unwrap(),
            "{}"
        );
    }
}
