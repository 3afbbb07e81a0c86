//! Storage primitives that know no engine: the one narrow file I/O trait every file
//! access goes through ([`io`]), the MyISAM-style key cache of index blocks
//! ([`keycache`]), and the single import point for locks and atomics ([`sync`]).

pub mod io;
pub mod keycache;
pub mod sync;
