//! Engine names: what users write in `ENGINE=` and see in SHOW/information_schema
//! (`InnoDB`, `MyISAM`) against the names tables are stored under (`btree`, `heap`).

use strata_types::{Error, Result};

/// Maps an ENGINE= name to the stored engine name.
pub fn engine_name(name: &str, available: &[&str]) -> Result<String> {
    let stored = match name.to_ascii_lowercase().as_str() {
        "myisam" | "heap" => "heap",
        "innodb" | "btree" => "btree",
        _ => return Err(Error::UnknownEngine(name.to_string())),
    };
    if available.contains(&stored) {
        Ok(stored.to_string())
    } else {
        Err(Error::UnknownEngine(name.to_string()))
    }
}

/// The MySQL name users see for a stored engine name.
pub fn engine_display(stored: &str) -> &'static str {
    match stored {
        "heap" => "MyISAM",
        _ => "InnoDB",
    }
}
