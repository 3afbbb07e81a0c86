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

pub mod auth;
pub mod certs;
pub mod conn;
pub mod handler;
pub mod idle_stack;
pub mod limits;
pub mod packet;
pub mod replication;
pub mod resultset;
pub mod security;
pub mod stmt;
pub mod timer;
pub mod tls;
pub mod transport;

pub use handler::{Backend, Handler, LoginAccount, PreparedInfo, ResultStream, Timeouts};
pub use security::Security;

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use strata_types::Error;
use transport::{Socket, Transport};

/// The stack of a connection thread. Parsing, binding and evaluating a statement recurse
/// once per level of its syntax tree, and MySQL clients send deep trees (ORMs emit long
/// `OR` chains); the parser bounds a statement's depth by what the remaining stack holds
/// and answers 1436 past it (`strata_sql::parse`). 16 MiB of address space holds about
/// 3,000 levels; only the pages a statement touches become resident.
pub const CONNECTION_STACK: usize = 16 << 20;

/// What a connection's statements hold outside their operators' grants (parse trees,
/// plans, expression state, rows in flight between operators, and what the grants'
/// estimates of their rows miss), charged per open connection under
/// `memory/wire/connection_buffers` beside [`strata_types::memory::CONNECTION_RESERVE`].
/// On the 300-connection run of docs/memory.md, malloc's bytes in use at the peak beyond
/// the pools, the base and all grants were about 50 MiB; what they are is not yet broken
/// down by call site, so this is a measured allowance, not a bound of each statement.
pub const STATEMENT_RESERVE: usize = 128 << 10;

/// What every accept loop shares: the connection ids and counts, and the server.
struct Acceptor<B: Backend> {
    backend: Arc<B>,
    security: Arc<Security>,
    limits: Arc<limits::Limits>,
    next_id: AtomicU32,
    shutdown: Arc<AtomicBool>,
}

/// Accepts connections until `shutdown` is set, each on its own thread: TCP on
/// `listener`, and on `unix` (the `socket` option) when given, from a second thread.
/// Past `max_connections` + 1 a connection is refused (1040) on the accepting thread,
/// so a flood of connection attempts starts no threads; failing accepts (out of file
/// descriptors) pause instead of spinning.
pub fn serve<B: Backend>(
    listener: TcpListener,
    unix: Option<UnixListener>,
    backend: Arc<B>,
    security: Arc<Security>,
    shutdown: Arc<AtomicBool>,
) {
    conn::stats::mark_started();
    let acceptor = Arc::new(Acceptor {
        backend,
        security,
        limits: limits::Limits::new(),
        next_id: AtomicU32::new(1),
        shutdown,
    });
    if let Some(unix) = unix {
        let acceptor = acceptor.clone();
        let spawned = std::thread::Builder::new()
            .name("accept-unix".into())
            .spawn(move || {
                acceptor.run(|| unix.accept().map(|(s, _)| Socket::Unix(s)));
            });
        if let Err(e) = spawned {
            strata_types::log_warning!("cannot start the unix socket's accept thread: {e}");
        }
    }
    acceptor.run(|| listener.accept().map(|(s, _)| Socket::Tcp(s)));
}

impl<B: Backend> Acceptor<B> {
    fn run(&self, mut accept: impl FnMut() -> std::io::Result<Socket>) {
        let mut failing = false;
        loop {
            let stream = accept();
            if self.shutdown.load(Ordering::SeqCst) {
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
            let Some(slot) = self.limits.accept(self.backend.max_connections()) else {
                conn::refuse(stream, &Error::TooManyConnections);
                continue;
            };
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let backend = self.backend.clone();
            let security = self.security.clone();
            let limits = self.limits.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("conn-{id}"))
                .stack_size(CONNECTION_STACK)
                .spawn(move || {
                    // The connection's memory comes out of the working memory while it
                    // is open (docs/memory.md): its session, buffers and stack, always;
                    // and what its statements hold outside their operators' grants,
                    // which waits for room like a sort's first buffer and, when the
                    // budget has none, refuses the connection with 3170.
                    let _memory = strata_types::memory::ConnectionCharge::new();
                    let _statements = match strata_types::memory::Grant::new(
                        strata_types::memory::Component::Connections,
                        STATEMENT_RESERVE,
                        STATEMENT_RESERVE,
                    ) {
                        Ok(g) => g,
                        Err(e) => return conn::refuse(stream, &e),
                    };
                    conn::Conn::new(&*backend, &security, Transport::from_socket(stream), id)
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
pub fn handle_connection<B: Backend>(
    stream: std::net::TcpStream,
    backend: &B,
    security: &Security,
    conn_id: u32,
) {
    conn::Conn::new(backend, security, Transport::Tcp(stream), conn_id).run();
}
