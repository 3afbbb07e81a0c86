//! `<basename>.gtid_purged` (docs/format/binlog.md, "Files"): the GTIDs added with
//! `SET @@GLOBAL.gtid_purged`, which are executed and purged but in no log file, so
//! neither PREVIOUS_GTIDS nor a GTID event would bring them back after a restart.

use crate::file::{sync_dir, Naming};
use crate::gtid::GtidSet;
use std::io::Write;
use std::path::PathBuf;
use strata_types::{Error, Result};

fn path(naming: &Naming) -> PathBuf {
    naming.dir.join(format!("{}.gtid_purged", naming.stem))
}

/// The set the file holds; empty when there is none.
pub fn read(naming: &Naming) -> Result<GtidSet> {
    let p = path(naming);
    match std::fs::read_to_string(&p) {
        Ok(text) => GtidSet::parse(text.trim())
            .ok_or_else(|| Error::corrupt(p.display().to_string(), "not a GTID set")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(GtidSet::default()),
        Err(e) => Err(Error::io(p.display(), e)),
    }
}

/// Replaces the file's set with `set`, durably (temporary file, fsync, rename).
pub fn write(naming: &Naming, set: &GtidSet) -> Result<()> {
    let p = path(naming);
    let tmp = naming.dir.join(format!("{}.gtid_purged.tmp", naming.stem));
    let io = |e| Error::io(tmp.display(), e);
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(format!("{}\n", set.to_text()).as_bytes())
        .map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, &p).map_err(|e| Error::io(p.display(), e))?;
    sync_dir(&naming.dir)
}

/// RESET MASTER: the file goes with the GTIDs it held.
pub fn remove(naming: &Naming) -> Result<()> {
    let p = path(naming);
    match std::fs::remove_file(&p) {
        Ok(()) => sync_dir(&naming.dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(p.display(), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_remove() {
        let dir = std::env::temp_dir().join(format!("strata-purged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let naming = Naming::new(&dir, "binlog");
        assert!(read(&naming).unwrap().is_empty());
        let set = GtidSet::parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9").unwrap();
        write(&naming, &set).unwrap();
        assert_eq!(read(&naming).unwrap(), set);
        remove(&naming).unwrap();
        assert!(read(&naming).unwrap().is_empty());
        std::fs::write(dir.join("binlog.gtid_purged"), "garbage\n").unwrap();
        assert!(read(&naming).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
