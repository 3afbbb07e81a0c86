//! The MySQL client/server protocol, server side: sync, one thread per connection.
//!
//! The life of a COM_QUERY: [`serve`] accepts the TCP connection and runs
//! [`conn::Conn::run`] on its own thread, which sends the greeting, authenticates
//! (`Conn::authenticate`), opens a session through [`Backend::open_session`] and enters
//! `Conn::command_loop`. There `packet::PacketReader::read` brings in the command; byte
//! 0x03 goes to `Conn::com_query`, which hands the SQL to [`Handler::query`] with a
//! `resultset::Writer` as output: the session calls `columns`, `row`…, `end`, each
//! encoded straight into the connection's `packet::PacketWriter`, and the whole
//! response leaves with one write when the handler returns (a result larger than
//! `resultset::STREAM_AT` leaves in pieces of that size while it is produced).
//!
//! A COM_STMT_EXECUTE (0x17) takes the same road through `Conn::com_stmt_execute`,
//! after `stmt::decode_params` has turned the binary parameters into values, and its
//! rows are encoded in the binary protocol.

pub mod conn;
pub mod handler;
pub mod limits;
pub mod packet;
pub mod resultset;
pub mod stmt;
pub mod timer;

pub use handler::{Backend, Handler, PreparedInfo, ResultStream, Timeouts};

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_types::Error;

/// The stack of a connection thread. Parsing, binding and evaluating a statement recurse
/// once per level of its syntax tree, and MySQL clients send deep trees (ORMs emit long
/// `OR` chains); the parser bounds a statement's depth by what the remaining stack holds
/// and answers 1436 past it (`strata_sql::parse`). 16 MiB of address space holds about
/// 3,000 levels; only the pages a statement touches become resident.
pub const CONNECTION_STACK: usize = 16 << 20;

/// Accepts connections until `shutdown` is set, each on its own thread. Past
/// `max_connections` + 1 a connection is refused (1040) on this thread, so a flood of
/// connection attempts starts no threads; failing accepts (out of file descriptors)
/// pause instead of spinning.
pub fn serve<B: Backend>(listener: TcpListener, backend: Arc<B>, shutdown: Arc<AtomicBool>) {
    conn::stats::mark_started();
    let next_id = AtomicU32::new(1);
    let limits = limits::Limits::new();
    let mut failing = false;
    for stream in listener.incoming() {
        if shutdown.load(Ordering::SeqCst) {
            break;
        }
        let stream = match stream {
            Ok(s) => {
                failing = false;
                s
            }
            Err(e) => {
                accept_failed(&e, &mut failing);
                continue;
            }
        };
        let Some(slot) = limits.accept(backend.max_connections()) else {
            conn::refuse(stream, &Error::TooManyConnections);
            continue;
        };
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let backend = backend.clone();
        let limits = limits.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("conn-{id}"))
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                conn::Conn::new(&*backend, stream, id)
                    .with_limits(limits, slot)
                    .run();
            });
        if let Err(e) = spawned {
            // The connection (moved into the closure) is closed; its slot is released.
            strata_types::log_warning!("cannot start a thread for a new connection: {e}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// An accept that failed: out of file descriptors (EMFILE/ENFILE) or memory would fail
/// again at once, so wait a little for connections to close; a connection reset before
/// it was accepted (ECONNABORTED) needs no pause. Logged once per run of failures.
fn accept_failed(e: &std::io::Error, failing: &mut bool) {
    let exhausted = matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    );
    if !*failing {
        strata_types::log_warning!("accepting a connection failed: {e}");
        *failing = true;
    }
    std::thread::sleep(Duration::from_millis(if exhausted { 100 } else { 5 }));
}

/// Serves one connection on the calling thread, to its end.
pub fn handle_connection<B: Backend>(stream: TcpStream, backend: &B, conn_id: u32) {
    conn::Conn::new(backend, stream, conn_id).run();
}
