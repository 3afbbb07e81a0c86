//! Storage primitives that know no engine: the one narrow file I/O trait every file
//! access goes through ([`io`]), the open-file cache that bounds how many table files
//! are open at once ([`filecache`]), InnoDB's buffer pool of data and index pages
//! ([`bufpool`]), the MyISAM-style key cache of index blocks ([`keycache`]), the
//! write-ahead redo log with group commit ([`redo`]), memory maps of data files that
//! survive truncation by another process ([`mmap`]), external sorts of byte records in
//! bounded memory with runs spilled to `tmpdir` ([`runfile`], an index build's sort), and
//! the single import point for locks and atomics ([`sync`]).

pub mod bufpool;
pub mod filecache;
pub mod io;
pub mod keycache;
pub mod mmap;
pub mod redo;
pub mod runfile;
pub mod sync;
