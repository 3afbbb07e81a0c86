//! What the protocol layer needs from the layers below it. The wire crate knows nothing
//! of SQL: it authenticates a user against [`Backend`], then hands each command of the
//! connection to that connection's [`Handler`] (implemented by the `session` crate and
//! plugged in by the server binary), which writes its results into a
//! [`QueryOutput`] the wire crate provides.

use std::time::Duration;
use strata_types::{ColumnMeta, QueryOutput, Result, Value};

/// How long a connection waits on its client (the session's variables of those names):
/// for the next command, for the rest of a packet it has begun, for a result to be
/// taken. A client that exceeds one is disconnected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub wait: Duration,
    pub net_read: Duration,
    pub net_write: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            wait: Duration::from_secs(28800),
            net_read: Duration::from_secs(30),
            net_write: Duration::from_secs(60),
        }
    }
}

/// The account a login matched, with what the protocol layer checks itself: the
/// plugin and stored credential (`auth.rs`), a lock, the transport it requires, and its
/// own connection limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginAccount {
    pub user: String,
    /// The account's host pattern (`%`, `localhost`, `192.168.%`).
    pub host: String,
    /// `mysql_native_password` or `caching_sha2_password`.
    pub plugin: String,
    /// The stored credential (`auth::hash_native` / `auth::hash_sha2` forms).
    pub auth_string: String,
    /// ACCOUNT LOCK: refused with 3118 after a correct password.
    pub locked: bool,
    /// REQUIRE SSL (or X509): refused with 1045 unless the connection runs TLS.
    pub require_secure: bool,
    /// MAX_USER_CONNECTIONS of the account (0: the global `max_user_connections`).
    pub max_user_connections: u64,
    /// Whether it may take the administrators' connection beyond `max_connections`
    /// (CONNECTION_ADMIN or SUPER).
    pub privileged: bool,
}

/// Server-wide services: users and new sessions.
pub trait Backend: Send + Sync + 'static {
    type Handler: Handler;

    /// The account a login as `user` from `peer` (None: the unix socket, host
    /// `localhost`) matches, MySQL's way: the most specific host pattern first. None
    /// when no account matches. The protocol layer checks scrambles itself.
    fn find_account(&self, user: &str, peer: Option<std::net::IpAddr>) -> Option<LoginAccount>;

    /// Opens a session for an authenticated account; `client_host` is the client's host
    /// as `USER()` shows it; `db` is the schema the client asked for in its handshake
    /// (an unknown one fails with error 1049, one it may not use with 1044).
    /// `interactive`: the client set CLIENT_INTERACTIVE, so its idle timeout is
    /// `interactive_timeout`.
    fn open_session(
        &self,
        connection_id: u32,
        account: &LoginAccount,
        client_host: &str,
        db: Option<&str>,
        interactive: bool,
    ) -> Result<Self::Handler>;

    /// `max_allowed_packet` in bytes: larger incoming commands are refused with 1153.
    fn max_allowed_packet(&self) -> usize {
        64 << 20
    }

    /// `max_connections`: connections beyond this are refused with error 1040, except
    /// one more for a privileged user ([`Backend::is_privileged`]).
    fn max_connections(&self) -> usize {
        1024
    }

    /// `max_user_connections`: authenticated connections one user may hold at once
    /// (0: no limit); past it, error 1203.
    fn max_user_connections(&self) -> usize {
        0
    }

    /// `connect_timeout`: how long a new connection has to finish the handshake.
    fn connect_timeout(&self) -> Duration {
        Duration::from_secs(10)
    }

    /// `require_secure_transport`: when true a login over plain TCP is refused with
    /// 3159 (TLS and the unix socket are accepted). Read for each new connection.
    fn require_secure_transport(&self) -> bool {
        false
    }
}

/// A prepared statement as the session reports it to COM_STMT_PREPARE.
#[derive(Clone, Debug, Default)]
pub struct PreparedInfo {
    pub statement_id: u32,
    /// Number of `?` placeholders.
    pub params: u16,
    /// The result columns, when the statement returns rows (empty otherwise).
    pub columns: Vec<ColumnMeta>,
}

/// One connection's session. Every method is called on the connection's own thread.
pub trait Handler {
    /// COM_QUERY: runs the statements in `sql` and reports each through `out`. With
    /// `multi_statements` (the client's CLIENT_MULTI_STATEMENTS or COM_SET_OPTION) the
    /// text may hold several `;`-separated statements: before each one after the first
    /// the handler calls [`ResultStream::next_result`]. Without it, more than one
    /// statement is a syntax error (1064).
    ///
    /// An `Err` ends the COM_QUERY with an ERR packet; statements after a failing one are
    /// not run, as in MySQL.
    fn query(
        &mut self,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn ResultStream,
    ) -> Result<()>;

    /// COM_STMT_PREPARE.
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo>;

    /// COM_STMT_EXECUTE with decoded parameters.
    fn execute(
        &mut self,
        statement_id: u32,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<()>;

    /// COM_STMT_CLOSE (no reply is sent).
    fn close_statement(&mut self, statement_id: u32);

    /// COM_INIT_DB.
    fn init_db(&mut self, db: &str) -> Result<()>;

    /// COM_FIELD_LIST: the columns of a table in the current database.
    fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>>;

    /// COM_RESET_CONNECTION: roll back, drop prepared statements, user variables and
    /// temporary state, reset session variables.
    fn reset(&mut self);

    /// Server status flags for OK/EOF packets: SERVER_STATUS_IN_TRANS (1),
    /// SERVER_STATUS_AUTOCOMMIT (2).
    fn status_flags(&self) -> u16;

    /// The session's current schema, if any.
    fn current_db(&self) -> Option<String>;

    /// The timeouts in force now (SET SESSION wait_timeout applies from the next wait).
    fn timeouts(&self) -> Timeouts {
        Timeouts::default()
    }

    /// Called once after the session opens: the client's address (`host:port`, as SHOW
    /// PROCESSLIST shows it) and a function that shuts the connection's socket down, so
    /// another session's `KILL CONNECTION` can end a connection idle in a read.
    fn attach(&mut self, _host: String, _shutdown: Box<dyn Fn() + Send + Sync>) {}

    /// Called after `attach` when the connection runs TLS: the protocol version and
    /// cipher, as OpenSSL names them (the session's `Ssl_version`, `Ssl_cipher`).
    fn tls_session(&mut self, _version: &str, _cipher: &str) {}

    /// True when the connection must close after the command just answered (it was
    /// killed).
    fn closing(&self) -> bool {
        false
    }

    /// COM_REGISTER_SLAVE: a replica announces itself (SHOW REPLICAS lists it).
    fn register_replica(&mut self, _r: &crate::replication::Registration) -> Result<()> {
        Err(strata_types::Error::UnknownCommand)
    }

    /// COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID: the events to stream to the replica.
    fn binlog_dump(
        &mut self,
        _r: &crate::replication::DumpRequest,
    ) -> Result<Box<dyn crate::replication::EventSource>> {
        Err(strata_types::Error::UnknownCommand)
    }

    /// The replica's `@master_heartbeat_period`: a heartbeat goes out after this long
    /// without an event (None: no heartbeats).
    fn heartbeat_period(&self) -> Option<Duration> {
        None
    }

    /// Called once when the connection ends, however it ends.
    fn close(&mut self);
}

/// A [`QueryOutput`] that can carry several results (multi-statement COM_QUERY).
pub trait ResultStream: QueryOutput {
    /// Announces that another statement's result follows the one just finished, so the
    /// previous OK/EOF must carry SERVER_MORE_RESULTS_EXISTS. The wire layer buffers the
    /// last terminal packet until it knows whether more follow.
    fn next_result(&mut self) -> Result<()>;
}
