//! The MySQL client/server protocol, server side: sync, one thread per connection.
//!
//! The life of a COM_QUERY: [`serve`] accepts the TCP connection and runs
//! [`conn::Conn::run`] on its own thread, which sends the greeting, authenticates
//! (`Conn::authenticate`), opens a session through [`Backend::open_session`] and enters
//! `Conn::command_loop`. There `packet::PacketReader::read` brings in the command; byte
//! 0x03 goes to `Conn::com_query`, which hands the SQL to [`Handler::query`] with a
//! `resultset::Writer` as output: the session calls `columns`, `row`…, `end`, each
//! encoded straight into the connection's `packet::PacketWriter`, and the whole
//! response leaves with one write when the handler returns.
//!
//! A COM_STMT_EXECUTE (0x17) takes the same road through `Conn::com_stmt_execute`,
//! after `stmt::decode_params` has turned the binary parameters into values, and its
//! rows are encoded in the binary protocol.

pub mod conn;
pub mod handler;
pub mod packet;
pub mod resultset;
pub mod stmt;

pub use handler::{Backend, Handler, PreparedInfo, ResultStream};

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use strata_types::Error;

/// Accepts connections until `shutdown` is set, each on its own thread.
/// The stack of a connection thread. Parsing, binding and evaluating a statement recurse
/// once per level of its syntax tree, and MySQL clients send deep trees (ORMs emit long
/// `OR` chains); the parser bounds a statement's depth by what the remaining stack holds
/// and answers 1436 past it (`strata_sql::parse`). 16 MiB of address space holds about
/// 3,000 levels; only the pages a statement touches become resident.
pub const CONNECTION_STACK: usize = 16 << 20;

pub fn serve<B: Backend>(listener: TcpListener, backend: Arc<B>, shutdown: Arc<AtomicBool>) {
    conn::stats::mark_started();
    let next_id = AtomicU32::new(1);
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if shutdown.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let backend = backend.clone();
        let active = active.clone();
        let n = active.fetch_add(1, Ordering::SeqCst) + 1;
        let spawned = std::thread::Builder::new()
            .name(format!("conn-{id}"))
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                if n > backend.max_connections() {
                    conn::Conn::new(&*backend, stream, id).refuse(&Error::TooManyConnections);
                } else {
                    handle_connection(stream, &*backend, id);
                }
                active.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            // Out of threads: the connection is dropped.
        }
    }
}

/// Serves one connection on the calling thread, to its end.
pub fn handle_connection<B: Backend>(stream: TcpStream, backend: &B, conn_id: u32) {
    conn::Conn::new(backend, stream, conn_id).run();
}
