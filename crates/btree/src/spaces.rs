//! The space directory, `btree-spaces.json` in the data directory: which tablespace file
//! has which space id and table definition, and the next space id. Recovery needs it
//! before the SQL layer opens any table (to find the files the log refers to and to roll
//! back with the right indexes). Every change rewrites the file atomically (write,
//! fsync, rename, fsync the directory). Space ids are never reused, so a log record of a
//! dropped table can never land in a new one. The ceiling below which transaction ids
//! have been handed out is raised often and must not need disk space, so it lives in
//! its own file written in place ([`crate::ceiling`]); the JSON keeps a copy, read as a
//! floor (data directories from before that file).

use crate::ceiling::CeilingFile;
use crate::table::Layout;
use crate::Inner;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use strata_storage::bufpool::PageId;
use strata_storage::sync::Mutex;
use strata_types::{Error, Result, TableDef};

/// How many transaction ids one write of the ceiling covers.
const TRX_ID_MARGIN: u64 = 100_000;

#[derive(Clone, Serialize, Deserialize)]
pub struct SpaceEntry {
    pub id: u32,
    /// Relative to the data directory.
    pub file: PathBuf,
    pub def: TableDef,
    #[serde(skip)]
    pub path: PathBuf,
}

impl SpaceEntry {
    pub fn name(&self) -> String {
        format!("{}.{}", self.def.db, self.def.name)
    }
}

#[derive(Clone, Default, Serialize, Deserialize)]
struct Dir {
    next_space: u32,
    trx_id_ceiling: u64,
    spaces: Vec<SpaceEntry>,
}

pub struct SpaceDir {
    datadir: PathBuf,
    dir: Mutex<Dir>,
    ceiling: Mutex<CeilingFile>,
}

const FILE: &str = "btree-spaces.json";

impl SpaceDir {
    pub fn open(datadir: &Path) -> Result<SpaceDir> {
        let p = datadir.join(FILE);
        let mut dir = match std::fs::read(&p) {
            Ok(b) => serde_json::from_slice::<Dir>(&b)
                .map_err(|e| Error::corrupt(FILE, format!("does not parse: {e}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Dir {
                next_space: 1,
                trx_id_ceiling: 1,
                spaces: Vec::new(),
            },
            Err(e) => return Err(Error::io(p.display(), e)),
        };
        for s in &mut dir.spaces {
            s.path = datadir.join(&s.file);
        }
        let (ceiling, held) = CeilingFile::open(datadir, dir.trx_id_ceiling).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                Error::corrupt(crate::ceiling::FILE, e.to_string())
            } else {
                Error::io(datadir.join(crate::ceiling::FILE).display(), e)
            }
        })?;
        dir.trx_id_ceiling = dir.trx_id_ceiling.max(held.unwrap_or(0));
        Ok(SpaceDir {
            datadir: datadir.to_path_buf(),
            dir: Mutex::new(dir),
            ceiling: Mutex::new(ceiling),
        })
    }

    fn save(&self, d: &Dir) -> Result<()> {
        let p = self.datadir.join(FILE);
        let tmp = self.datadir.join(format!("{FILE}.tmp"));
        let io = |e| Error::io(p.display(), e);
        let bytes = serde_json::to_vec_pretty(d).map_err(|e| Error::Internal(e.to_string()))?;
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp).map_err(io)?;
            f.write_all(&bytes).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &p).map_err(io)?;
        std::fs::File::open(&self.datadir)
            .and_then(|d| d.sync_all())
            .map_err(io)
    }

    pub fn list(&self) -> Vec<SpaceEntry> {
        self.dir.lock().spaces.clone()
    }

    fn relative(&self, file: &Path) -> PathBuf {
        file.strip_prefix(&self.datadir)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| file.to_path_buf())
    }

    /// Registers a new tablespace file; returns its space id.
    pub fn add(&self, file: &Path, def: &TableDef) -> Result<u32> {
        let mut d = self.dir.lock();
        let rel = self.relative(file);
        let mut next = d.clone();
        next.spaces.retain(|s| s.file != rel);
        let id = next.next_space;
        next.next_space += 1;
        next.spaces.push(SpaceEntry {
            id,
            file: rel,
            def: def.clone(),
            path: file.to_path_buf(),
        });
        self.save(&next)?;
        *d = next;
        Ok(id)
    }

    pub fn remove(&self, id: u32) -> Result<()> {
        let mut d = self.dir.lock();
        let mut next = d.clone();
        next.spaces.retain(|s| s.id != id);
        self.save(&next)?;
        *d = next;
        Ok(())
    }

    /// Keeps the stored definition equal to the catalog's (ALTER rewrites it).
    pub fn update_def(&self, id: u32, def: &TableDef) -> Result<()> {
        let mut d = self.dir.lock();
        if d.spaces.iter().any(|s| s.id == id && s.def != *def) {
            let mut next = d.clone();
            for s in next.spaces.iter_mut().filter(|s| s.id == id) {
                s.def = def.clone();
            }
            self.save(&next)?;
            *d = next;
        }
        Ok(())
    }

    pub fn id_of(&self, file: &Path) -> Option<u32> {
        let rel = self.relative(file);
        self.dir
            .lock()
            .spaces
            .iter()
            .find(|s| s.file == rel)
            .map(|s| s.id)
    }

    pub fn path_of(&self, id: u32) -> Option<PathBuf> {
        self.dir
            .lock()
            .spaces
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.path.clone())
    }

    /// First transaction id to hand out after a restart.
    pub fn trx_id_ceiling(&self) -> u64 {
        self.dir.lock().trx_id_ceiling
    }

    pub fn trx_id_reserved(&self) -> u64 {
        self.dir.lock().trx_id_ceiling
    }

    /// Persists a ceiling above `next_id`, so ids never repeat across restarts.
    pub fn reserve_trx_ids(&self, next_id: u64) -> Result<()> {
        let mut d = self.dir.lock();
        if d.trx_id_ceiling > next_id {
            return Ok(());
        }
        let raised = next_id + TRX_ID_MARGIN;
        self.ceiling
            .lock()
            .write(raised)
            .map_err(|e| Error::io(self.datadir.join(crate::ceiling::FILE).display(), e))?;
        d.trx_id_ceiling = raised;
        Ok(())
    }

    /// The layout of a space from its stored definition and its header page.
    pub(crate) fn layout(&self, inner: &Inner, id: u32) -> Result<Layout> {
        let entry = self
            .list()
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| Error::Internal(format!("space {id} is unknown")))?;
        let name = entry.name();
        let mut mtr = crate::mtr::Mtr::new(&inner.st);
        let s = mtr
            .s(PageId {
                space: id,
                page_no: 0,
            })
            .map_err(|e| crate::io_err(&name, e))?;
        let roots = crate::tree::read_roots(mtr.get(s))
            .ok_or_else(|| Error::corrupt(&name, "page 0 is not a space header"))?;
        Ok(Layout::new(std::sync::Arc::new(entry.def), id, &roots))
    }
}
