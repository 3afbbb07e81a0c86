//! One client connection: handshake, TLS, authentication, then the command loop.
//!
//! Handshake: the greeting names `default_authentication_plugin` with a 20-byte salt
//! and offers CLIENT_SSL when the server has a certificate. A client that wants TLS
//! answers with a 32-byte SSLRequest; the connection then runs the TLS handshake on its
//! socket (`tls.rs`) and everything after, the handshake response included, travels
//! inside TLS (`transport.rs`: one stream type for TCP, unix socket and TLS). With
//! `require_secure_transport` ON a plain TCP login is refused with 3159 (TLS and the
//! unix socket are secure).
//!
//! Authentication (`auth.rs`): a client answering with `mysql_native_password` or
//! `caching_sha2_password` is checked in that plugin; any other plugin gets an
//! AuthSwitchRequest to `mysql_native_password`. caching_sha2 takes its fast path
//! (AuthMoreData `01 03`) when the user is in the cache; otherwise the server asks for
//! full authentication (`01 04`): the password in clear over a secure transport, or
//! RSA-encrypted with the server's public key, which the client may request first
//! (`02`, answered with `01` + the PEM key). Success fills the cache.
//!
//! Limits (see `timer.rs` and `limits.rs`): the handshake must finish within
//! `connect_timeout`; an authenticated connection is admitted against `max_connections`
//! and `max_user_connections`; an idle session is closed after `wait_timeout` with error
//! 4031; a client stalled mid-packet or not reading its result is dropped after
//! `net_read_timeout` / `net_write_timeout`. Buffers grown for a large packet, and
//! COM_STMT_SEND_LONG_DATA beyond `max_allowed_packet`, are given back.

use crate::auth::{self, NATIVE, SHA2};
use crate::handler::{Backend, Handler, LoginAccount, Timeouts};
use crate::limits::{Limits, Slot, UserSlot};
use crate::packet::{Cursor, PacketReader, PacketWriter, ReadError};
use crate::resultset;
use crate::security::Security;
use crate::timer::{DeadlineWrite, Expired, SocketTimer, TimedRead, Wait};
use crate::transport::{Socket, Transport};
use std::sync::Arc;
use std::time::Instant;
use strata_types::inthash::IntMap;
use strata_types::{ColumnMeta, Error, FieldType};

pub const SERVER_VERSION: &str = "8.0.36-Strata";

pub mod caps {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 2;
    pub const LONG_FLAG: u32 = 4;
    pub const CONNECT_WITH_DB: u32 = 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    /// CLIENT_SSL: offered only when the server has a certificate.
    pub const SSL: u32 = 1 << 11;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    /// CLIENT_LOCAL_FILES: the client answers LOAD DATA LOCAL's file request.
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const SERVER: u32 = LONG_PASSWORD
        | LOCAL_FILES
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | PROTOCOL_41
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | DEPRECATE_EOF;
}

/// What COM_STATISTICS reports (the `mariadb` client's `\s` prints it): uptime since the
/// server began serving, connections open now, and statements received (COM_QUERY and
/// COM_STMT_EXECUTE), counted here because the protocol layer sees every one.
pub mod stats {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::OnceLock;
    use std::time::Instant;

    static STARTED: OnceLock<Instant> = OnceLock::new();
    static OPEN: AtomicUsize = AtomicUsize::new(0);
    static QUESTIONS: AtomicU64 = AtomicU64::new(0);

    pub fn mark_started() {
        STARTED.get_or_init(Instant::now);
    }

    pub fn question() {
        QUESTIONS.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one open connection for as long as it lives.
    pub struct Open(());

    impl Open {
        pub fn new() -> Open {
            OPEN.fetch_add(1, Ordering::Relaxed);
            Open(())
        }
    }

    impl Default for Open {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Drop for Open {
        fn drop(&mut self) {
            OPEN.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The COM_STATISTICS text, in MySQL's layout.
    pub fn line() -> String {
        let uptime = STARTED.get_or_init(Instant::now).elapsed().as_secs().max(1);
        let questions = QUESTIONS.load(Ordering::Relaxed);
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  \
             Open tables: 0  Queries per second avg: {:.3}",
            OPEN.load(Ordering::Relaxed),
            questions as f64 / uptime as f64
        )
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn statistics_count_connections_and_questions() {
            super::mark_started();
            let before = super::QUESTIONS.load(super::Ordering::Relaxed);
            let open = super::Open::new();
            super::question();
            let line = super::line();
            assert!(line.starts_with("Uptime: "), "{line}");
            let field = |name: &str| -> u64 {
                let rest = &line[line.find(name).expect(name) + name.len()..];
                rest.split_whitespace().next().unwrap().parse().unwrap()
            };
            assert!(field("Threads: ") >= 1, "{line}");
            assert!(field("Questions: ") > before, "{line}");
            assert!(line.contains("Queries per second avg: "), "{line}");
            drop(open);
        }
    }
}

/// A prepared statement as the protocol layer tracks it.
struct Stmt {
    params: u16,
    columns: Vec<ColumnMeta>,
    /// Parameter types from the last execute that sent them: (type, unsigned).
    types: Vec<(u8, bool)>,
    long_data: IntMap<u16, Vec<u8>>,
    /// A COM_STMT_SEND_LONG_DATA that failed (a parameter past max_allowed_packet, an
    /// unknown parameter): MySQL answers the next COM_STMT_EXECUTE with it, and every
    /// one after, until COM_STMT_RESET. Long data is discarded meanwhile.
    long_data_error: Option<Error>,
}

impl Stmt {
    /// COM_STMT_SEND_LONG_DATA: appends to parameter `param`, at most `max` bytes each.
    fn add_long_data(&mut self, param: u16, data: &[u8], max: usize) {
        if self.long_data_error.is_some() {
            return;
        }
        if param >= self.params {
            self.fail_long_data(Error::WrongArguments("mysql_stmt_send_long_data".into()));
            return;
        }
        let v = self.long_data.entry(param).or_default();
        if v.len().saturating_add(data.len()) > max {
            self.fail_long_data(Error::LongDataTooLong);
            return;
        }
        v.extend_from_slice(data);
    }

    fn fail_long_data(&mut self, e: Error) {
        self.long_data_error = Some(e);
        // Nothing sent so far can be used: free it now rather than at the reset.
        self.long_data = IntMap::default();
    }
}

pub struct Conn<'b, B: Backend> {
    backend: &'b B,
    security: &'b Security,
    stream: Transport,
    reader: PacketReader,
    pub(crate) w: PacketWriter,
    pub(crate) client_caps: u32,
    salt: [u8; 20],
    id: u32,
    multi_statements: bool,
    stmts: IntMap<u32, Stmt>,
    user: String,
    timer: SocketTimer,
    /// The session's timeouts, read again before each command.
    timeouts: Timeouts,
    /// While authenticating: when the handshake must be over (connect_timeout).
    handshake_deadline: Option<Instant>,
    /// This connection's place in the connection counts.
    limits: Option<Arc<Limits>>,
    _slot: Option<Slot>,
    user_slot: Option<UserSlot>,
    /// The TLS session's (version, cipher), once the connection runs TLS.
    tls_names: Option<(String, String)>,
}

/// Why no command was read.
enum ReadFail {
    Closed,
    TooLarge(u8),
    Idle,
    Stalled,
}

fn random_salt() -> [u8; 20] {
    let mut s = [0u8; 20];
    // Printable bytes, no NUL or '$' (some clients treat the salt as a C string).
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0) as u64
        ^ (&s as *const _ as u64).rotate_left(17);
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let mut b = [0u8; 8];
        if std::io::Read::read_exact(&mut f, &mut b).is_ok() {
            seed ^= u64::from_le_bytes(b);
        }
    }
    for x in s.iter_mut() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut c = 33 + (seed % 94) as u8;
        if c == b'$' {
            c = b'%';
        }
        *x = c;
    }
    s
}

/// Refuses a connection before the handshake, as MySQL does past max_connections + 1:
/// one ERR packet and close. Never blocks: the socket is fresh, so the packet fits in
/// its send buffer, and a client that cannot take it loses only the message.
pub fn refuse(mut stream: Socket, e: &Error) {
    let _ = stream.set_nonblocking();
    let mut w = PacketWriter::with_capacity(64);
    resultset::write_error_pre_handshake(&mut w, e.code(), &e.to_string());
    let _ = w.flush(&mut stream);
}

impl<'b, B: Backend> Conn<'b, B> {
    pub fn new(backend: &'b B, security: &'b Security, stream: Transport, id: u32) -> Conn<'b, B> {
        if let Transport::Tcp(s) = &stream {
            let _ = s.set_nodelay(true);
        }
        Conn {
            backend,
            security,
            stream,
            reader: PacketReader::new(),
            w: PacketWriter::new(),
            client_caps: 0,
            salt: random_salt(),
            id,
            multi_statements: false,
            stmts: IntMap::default(),
            user: String::new(),
            timer: SocketTimer::default(),
            timeouts: Timeouts::default(),
            handshake_deadline: None,
            limits: None,
            _slot: None,
            user_slot: None,
            tls_names: None,
        }
    }

    /// Counts this connection in `limits` for as long as it lives (`slot` is its place
    /// in the total, taken when it was accepted).
    pub fn with_limits(mut self, limits: Arc<Limits>, slot: Slot) -> Self {
        self.limits = Some(limits);
        self._slot = Some(slot);
        self
    }

    /// Reads one packet under the limit of the phase the connection is in.
    fn read_packet(&mut self, max: usize, command: bool) -> Result<(u8, Vec<u8>), ReadFail> {
        let wait = match self.handshake_deadline {
            Some(deadline) => Wait::Handshake(deadline),
            None if command && self.reader.buffered() == 0 => Wait::Command {
                idle_until: Instant::now() + self.timeouts.wait,
                net_read: self.timeouts.net_read,
            },
            None => Wait::Packet(self.timeouts.net_read),
        };
        let mut r = TimedRead::new(&mut self.stream, &mut self.timer, wait);
        match self.reader.read_owned(&mut r, max) {
            Ok(p) => Ok(p),
            Err(ReadError::TooLarge(seq)) => Err(ReadFail::TooLarge(seq)),
            Err(ReadError::Closed) => Err(match r.expired {
                Some(Expired::Idle) => ReadFail::Idle,
                Some(Expired::Stalled) => ReadFail::Stalled,
                None => ReadFail::Closed,
            }),
        }
    }

    pub(crate) fn deprecate_eof(&self) -> bool {
        self.client_caps & caps::DEPRECATE_EOF != 0
    }

    /// Sends the response built so far; it must be taken within net_write_timeout
    /// (connect_timeout during the handshake).
    fn flush(&mut self) -> bool {
        let mut out =
            DeadlineWrite::new(&mut self.stream, &mut self.timer, self.timeouts.net_write);
        self.w.flush(&mut out).is_ok()
    }

    /// Sends an ERR packet as the only packet of a response.
    fn send_error(&mut self, e: &Error) -> bool {
        resultset::write_error(&mut self.w, e.code(), e.sqlstate(), &e.to_string());
        self.flush()
    }

    fn send_raw_error(&mut self, code: u16, state: &str, msg: &str) -> bool {
        resultset::write_error(&mut self.w, code, state, msg);
        self.flush()
    }

    fn server_caps(&self) -> u32 {
        if self.security.tls.is_some() {
            caps::SERVER | caps::SSL
        } else {
            caps::SERVER
        }
    }

    fn greeting(&mut self) {
        let server_caps = self.server_caps();
        let plugin = self.security.default_plugin;
        let w = &mut self.w;
        w.seq = 0;
        w.begin();
        let b = &mut w.buf;
        b.push(10);
        b.extend_from_slice(SERVER_VERSION.as_bytes());
        b.push(0);
        b.extend_from_slice(&self.id.to_le_bytes());
        b.extend_from_slice(&self.salt[..8]);
        b.push(0);
        b.extend_from_slice(&(server_caps as u16).to_le_bytes());
        b.push(45);
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&((server_caps >> 16) as u16).to_le_bytes());
        b.push(21);
        b.extend_from_slice(&[0; 10]);
        b.extend_from_slice(&self.salt[8..]);
        b.push(0);
        b.extend_from_slice(plugin.as_bytes());
        b.push(0);
        w.end();
    }

    /// Reads one packet of the handshake phase; the reply follows its sequence id.
    fn read_handshake_packet(&mut self, max: usize) -> Option<Vec<u8>> {
        match self.read_packet(max, false) {
            Ok((seq, p)) => {
                self.w.seq = seq.wrapping_add(1);
                Some(p)
            }
            Err(_) => None,
        }
    }

    /// Upgrades the connection to TLS after the client's SSLRequest. False when the
    /// connection must end (no certificate, a failed TLS handshake).
    fn start_tls(&mut self) -> bool {
        let Some(tls) = &self.security.tls else {
            // CLIENT_SSL was not offered.
            self.send_raw_error(1043, "08S01", "Bad handshake");
            return false;
        };
        let Some(deadline) = self.handshake_deadline else {
            return false;
        };
        let early = self.reader.take_buffered();
        let Some(sock) = self.stream.take_socket() else {
            return false;
        };
        match tls.accept(sock, &early, deadline) {
            Ok(t) => {
                self.tls_names = Some(crate::tls::session_names(&t));
                self.stream = Transport::Tls(Box::new(t));
                // The handshake changed the socket's timeouts behind the timer's back.
                self.timer = SocketTimer::default();
                true
            }
            Err(_) => false,
        }
    }

    /// Reads the client's handshake response (after TLS, when the client asks for it)
    /// and authenticates. Returns the user and the database it asked for, or None after
    /// sending the error.
    fn authenticate(&mut self) -> Option<(LoginAccount, Option<String>)> {
        let max = self.backend.max_allowed_packet().max(1 << 20);
        let mut payload = self.read_handshake_packet(max)?;
        // SSLRequest: the first 32 bytes of a handshake response, CLIENT_SSL set.
        let ssl_request = payload.len() == 32
            && Cursor::new(&payload)
                .u32()
                .is_some_and(|c| c & caps::SSL != 0);
        if ssl_request {
            if !self.start_tls() {
                return None;
            }
            payload = self.read_handshake_packet(max)?;
        }
        let mut c = Cursor::new(&payload);
        let client_caps = c.u32()?;
        if client_caps & caps::PROTOCOL_41 == 0 {
            self.send_raw_error(
                1047,
                "08S01",
                "Strata needs a client that speaks protocol 4.1",
            );
            return None;
        }
        if self.backend.require_secure_transport() && !self.stream.is_secure() {
            self.send_error(&Error::InsecureTransport);
            return None;
        }
        self.client_caps =
            client_caps & (caps::SERVER | caps::MULTI_STATEMENTS | caps::INTERACTIVE);
        c.u32()?;
        c.u8()?;
        c.bytes(23)?;
        let user = String::from_utf8_lossy(c.cstr()).into_owned();
        let response: Vec<u8> = if client_caps & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            c.lenenc_str().unwrap_or_default().to_vec()
        } else if client_caps & caps::SECURE_CONNECTION != 0 {
            let n = c.u8().unwrap_or(0) as usize;
            c.bytes(n).unwrap_or_default().to_vec()
        } else {
            c.cstr().to_vec()
        };
        let db = if client_caps & caps::CONNECT_WITH_DB != 0 {
            let d = String::from_utf8_lossy(c.cstr()).into_owned();
            (!d.is_empty()).then_some(d)
        } else {
            None
        };
        let plugin = if client_caps & caps::PLUGIN_AUTH != 0 {
            String::from_utf8_lossy(c.cstr()).into_owned()
        } else {
            NATIVE.to_string()
        };
        self.multi_statements = client_caps & caps::MULTI_STATEMENTS != 0;
        let account = self.auth_user(&user, &plugin, response)?;
        Some((account, db))
    }

    /// Sends one AuthMoreData packet (`01` + data) of the authentication exchange.
    fn auth_more_data(&mut self, data: &[u8]) -> bool {
        self.w.begin();
        self.w.buf.push(0x01);
        self.w.buf.extend_from_slice(data);
        self.w.end();
        self.flush()
    }

    /// Checks one user's credentials against the account the login matches, switching
    /// the client to the account's plugin when it answered in another (as MySQL does);
    /// then the account's lock (3118) and REQUIRE SSL (1045). Sends the error.
    fn auth_user(
        &mut self,
        user: &str,
        plugin: &str,
        mut response: Vec<u8>,
    ) -> Option<LoginAccount> {
        let peer = self.stream.peer().map(|a| a.ip());
        let account = self.backend.find_account(user, peer);
        let mut plugin = plugin.to_string();
        // The plugin the exchange must use: the account's (an unknown user is checked
        // as if native, and fails).
        let wanted = match &account {
            Some(a) if a.plugin == SHA2 => SHA2,
            _ => NATIVE,
        };
        if plugin != wanted && (account.is_some() || (plugin != NATIVE && plugin != SHA2)) {
            // AuthSwitchRequest: the account's plugin with our salt.
            self.w.begin();
            self.w.buf.push(0xFE);
            self.w.buf.extend_from_slice(wanted.as_bytes());
            self.w.buf.push(0);
            self.w.buf.extend_from_slice(&self.salt);
            self.w.buf.push(0);
            self.w.end();
            if !self.flush() {
                return None;
            }
            response = self.read_handshake_packet(1 << 20)?;
            plugin = wanted.to_string();
        }
        let verdict = match &account {
            None => Some(false),
            Some(a) if plugin == NATIVE => Some(auth::native_matches_hash(
                &self.salt,
                &response,
                &a.auth_string,
            )),
            Some(a) => self.sha2_auth(a, &response),
        };
        let denied = |s: &Self| Error::AccessDenied {
            user: user.to_string(),
            host: s.peer_host(),
            using_password: !response.is_empty() && response != [0],
        };
        match (verdict, account) {
            (Some(true), Some(a)) => {
                if a.locked {
                    self.send_error(&Error::AccountLocked {
                        user: user.to_string(),
                        host: self.peer_host(),
                    });
                    return None;
                }
                if a.require_secure && !self.stream.is_tls() {
                    // MySQL answers a REQUIRE SSL account on a plain connection as a
                    // wrong password.
                    let e = denied(self);
                    self.send_error(&e);
                    return None;
                }
                Some(a)
            }
            (Some(_), _) => {
                let e = denied(self);
                self.send_error(&e);
                None
            }
            // The client went away in the middle of the exchange.
            (None, _) => None,
        }
    }

    /// caching_sha2_password: the fast path from the cache, else full authentication.
    /// None when the connection failed on the way.
    fn sha2_auth(&mut self, account: &LoginAccount, scramble: &[u8]) -> Option<bool> {
        let stored = account.auth_string.as_str();
        // An empty password is proved by an empty answer (or a lone NUL, which some
        // clients send, as MySQL accepts), with no exchange.
        let empty_answer = scramble.is_empty() || scramble == [0];
        if stored.is_empty() || empty_answer {
            return Some(stored.is_empty() && empty_answer);
        }
        let key = format!("{}@{}", account.user, account.host);
        let cache = &self.security.sha2_cache;
        if cache.fast_auth(&key, stored, &self.salt, scramble) {
            return self.auth_more_data(&[0x03]).then_some(true);
        }
        if !self.auth_more_data(&[0x04]) {
            return None;
        }
        let mut answer = self.read_handshake_packet(1 << 20)?;
        let sent = if self.stream.is_secure() {
            auth::clear_password(&answer).to_vec()
        } else {
            let Some(keys) = &self.security.rsa else {
                return Some(false);
            };
            if answer == [0x02] {
                // The client asks for the public key to encrypt with.
                let pem = keys.public_pem().as_bytes().to_vec();
                if !self.auth_more_data(&pem) {
                    return None;
                }
                answer = self.read_handshake_packet(1 << 20)?;
            }
            match keys.decrypt_password(&answer, &self.salt) {
                Some(p) => p,
                None => return Some(false),
            }
        };
        let ok = auth::sha2_matches(&sent, stored);
        if ok {
            self.security.sha2_cache.remember(&key, stored, &sent);
        }
        Some(ok)
    }

    /// Tells a new session its client's `host:port` (`localhost` on the unix socket),
    /// its TLS session if any, and how to shut this socket down (another session's
    /// KILL CONNECTION).
    fn attach(&self, handler: &mut B::Handler) {
        let host = self
            .stream
            .peer()
            .map(|a| format!("{}:{}", a.ip(), a.port()))
            .unwrap_or_else(|| "localhost".into());
        let shutdown = self
            .stream
            .shutdown_handle()
            .unwrap_or_else(|| Box::new(|| {}));
        handler.attach(host, shutdown);
        if let Some((version, cipher)) = &self.tls_names {
            handler.tls_session(version, cipher);
        }
    }

    /// The client's host as USER() and error 1045 show it: `localhost` on the unix
    /// socket and from a loopback address (what MySQL's name resolution gives), the IP
    /// otherwise.
    fn client_host(&self) -> String {
        self.peer_host()
    }

    fn peer_host(&self) -> String {
        self.stream
            .peer()
            .map(|a| {
                if a.ip().is_loopback() {
                    "localhost".to_string()
                } else {
                    a.ip().to_string()
                }
            })
            .unwrap_or_else(|| "localhost".into())
    }

    fn write_ok(&mut self, affected: u64, last_id: u64, status: u16, info: &str) {
        resultset::write_ok(&mut self.w, 0x00, affected, last_id, status, 0, info);
    }

    /// Admits an authenticated user against max_connections (one more for a privileged
    /// user) and max_user_connections; sends the error when refused.
    fn admit(&mut self, account: &LoginAccount) -> bool {
        let Some(limits) = self.limits.clone() else {
            return true;
        };
        self.user_slot = None;
        match limits.admit(
            account,
            self.backend.max_connections(),
            self.backend.max_user_connections(),
        ) {
            Ok(slot) => {
                // Dropping the old slot (COM_CHANGE_USER) releases the old user's count.
                self.user_slot = Some(slot);
                true
            }
            Err(e) => {
                self.send_error(&e);
                false
            }
        }
    }

    /// Runs the connection to its end.
    pub fn run(mut self) {
        let _open = stats::Open::new();
        let connect_timeout = self.backend.connect_timeout();
        self.handshake_deadline = Some(Instant::now() + connect_timeout);
        self.timeouts.net_write = connect_timeout;
        self.greeting();
        if !self.flush() {
            return;
        }
        let Some((account, db)) = self.authenticate() else {
            return;
        };
        if !self.admit(&account) {
            return;
        }
        let interactive = self.client_caps & caps::INTERACTIVE != 0;
        let client_host = self.client_host();
        let mut handler = match self.backend.open_session(
            self.id,
            &account,
            &client_host,
            db.as_deref(),
            interactive,
        ) {
            Ok(h) => h,
            Err(e) => {
                self.send_error(&e);
                return;
            }
        };
        self.handshake_deadline = None;
        self.user = account.user;
        self.attach(&mut handler);
        self.timeouts = handler.timeouts();
        let status = handler.status_flags();
        self.write_ok(0, 0, status, "");
        if self.flush() {
            self.command_loop(&mut handler);
        }
        handler.close();
    }

    fn command_loop(&mut self, handler: &mut B::Handler) {
        loop {
            let max = self.backend.max_allowed_packet();
            // SET SESSION wait_timeout (or net_*_timeout) applies from the next wait.
            self.timeouts = handler.timeouts();
            let payload = match self.read_packet(max, true) {
                Ok((seq, p)) => {
                    self.w.seq = seq.wrapping_add(1);
                    p
                }
                Err(ReadFail::TooLarge(seq)) => {
                    self.w.seq = seq.wrapping_add(1);
                    self.send_error(&Error::PacketTooLarge);
                    return;
                }
                Err(ReadFail::Idle) => {
                    // MySQL 8.0.24+: say why before closing (sequence 0: no command
                    // was received).
                    self.w.seq = 0;
                    self.send_error(&Error::IdleTimeout);
                    return;
                }
                Err(ReadFail::Stalled) => {
                    self.w.seq = 0;
                    self.send_error(&Error::NetReadTimeout);
                    return;
                }
                Err(ReadFail::Closed) => return,
            };
            let keep_going = self.dispatch(handler, &payload);
            self.reader.recycle(payload);
            if !keep_going || handler.closing() {
                return;
            }
        }
    }

    /// Runs one command; false when the connection must end.
    fn dispatch(&mut self, handler: &mut B::Handler, payload: &[u8]) -> bool {
        let Some((&cmd, body)) = payload.split_first() else {
            return false;
        };
        match cmd {
            0x01 => false,
            0x02 => {
                let db = String::from_utf8_lossy(body).into_owned();
                match handler.init_db(&db) {
                    Ok(()) => {
                        let st = handler.status_flags();
                        self.write_ok(0, 0, st, "");
                        self.flush()
                    }
                    Err(e) => self.send_error(&e),
                }
            }
            0x03 => self.com_query(handler, body),
            0x04 => self.com_field_list(handler, body),
            // COM_REFRESH (`mariadb-admin refresh`, `mysql_refresh()`): what the FLUSH
            // statement does, which is the same whichever of its flags (grants, logs,
            // tables, status, …) the client set.
            0x07 => self.com_query(handler, b"FLUSH TABLES"),
            0x09 => {
                self.w.begin();
                self.w.buf.extend_from_slice(stats::line().as_bytes());
                self.w.end();
                self.flush()
            }
            0x0e => {
                let st = handler.status_flags();
                self.write_ok(0, 0, st, "");
                self.flush()
            }
            0x11 => match self.com_change_user(handler, body) {
                Some(new) => {
                    handler.close();
                    *handler = new;
                    let st = handler.status_flags();
                    self.write_ok(0, 0, st, "");
                    self.flush()
                }
                None => false,
            },
            0x12 | 0x1e => self.com_binlog_dump(handler, cmd, body),
            0x15 => match crate::replication::parse_register(body) {
                Some(r) => match handler.register_replica(&r) {
                    Ok(()) => {
                        let st = handler.status_flags();
                        self.write_ok(0, 0, st, "");
                        self.flush()
                    }
                    Err(e) => self.send_error(&e),
                },
                None => self.send_error(&Error::UnknownCommand),
            },
            0x16 => self.com_stmt_prepare(handler, body),
            0x17 => self.com_stmt_execute(handler, body),
            0x18 => {
                // No reply, as in MySQL: an error waits for the next execute.
                let mut c = Cursor::new(body);
                if let (Some(id), Some(param)) = (c.u32(), c.u16()) {
                    let data = c.rest();
                    let max = self.backend.max_allowed_packet();
                    if let Some(s) = self.stmts.get_mut(&id) {
                        s.add_long_data(param, data, max);
                    }
                }
                true
            }
            0x19 => {
                if let Some(id) = Cursor::new(body).u32() {
                    self.stmts.remove(&id);
                    handler.close_statement(id);
                }
                true
            }
            0x1a => {
                let id = Cursor::new(body).u32().unwrap_or(0);
                match self.stmts.get_mut(&id) {
                    Some(s) => {
                        s.long_data = IntMap::default();
                        s.long_data_error = None;
                        let st = handler.status_flags();
                        self.write_ok(0, 0, st, "");
                        self.flush()
                    }
                    None => self.send_raw_error(
                        1243,
                        "HY000",
                        &format!(
                            "Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"
                        ),
                    ),
                }
            }
            0x1b => {
                match Cursor::new(body).u16() {
                    Some(0) => self.multi_statements = true,
                    Some(1) => self.multi_statements = false,
                    _ => return self.send_error(&Error::UnknownCommand),
                }
                let st = handler.status_flags();
                if self.deprecate_eof() {
                    resultset::write_ok(&mut self.w, 0xFE, 0, 0, st, 0, "");
                } else {
                    resultset::write_eof(&mut self.w, 0, st);
                }
                self.flush()
            }
            0x1f => {
                handler.reset();
                self.stmts.clear();
                let st = handler.status_flags();
                self.write_ok(0, 0, st, "");
                self.flush()
            }
            _ => self.send_error(&Error::UnknownCommand),
        }
    }

    /// COM_BINLOG_DUMP (0x12) / COM_BINLOG_DUMP_GTID (0x1e): streams events until the
    /// replica goes (a failed send), the connection is killed, or, non-blocking, the log
    /// ends (then EOF). Each event is a packet: 0x00, then the event.
    fn com_binlog_dump(&mut self, handler: &mut B::Handler, cmd: u8, body: &[u8]) -> bool {
        use crate::replication::{parse_dump, parse_dump_gtid};
        let req = if cmd == 0x12 {
            parse_dump(body)
        } else {
            parse_dump_gtid(body)
        };
        let Some(req) = req else {
            return self.send_error(&Error::UnknownCommand);
        };
        let mut src = match handler.binlog_dump(&req) {
            Ok(s) => s,
            Err(e) => return self.send_error(&e),
        };
        let period = handler.heartbeat_period();
        let wait = period.unwrap_or(std::time::Duration::from_secs(1));
        loop {
            match src.next(wait) {
                Ok(Some(ev)) => {
                    self.w.begin();
                    self.w.buf.push(0);
                    self.w.buf.extend_from_slice(&ev);
                    self.w.end();
                    if !self.flush() {
                        return false;
                    }
                }
                Ok(None) if req.non_blocking => {
                    let st = handler.status_flags();
                    resultset::write_eof(&mut self.w, 0, st);
                    return self.flush();
                }
                Ok(None) => {
                    if handler.closing() {
                        return false;
                    }
                    if period.is_some() {
                        let hb = src.heartbeat();
                        self.w.begin();
                        self.w.buf.push(0);
                        self.w.buf.extend_from_slice(&hb);
                        self.w.end();
                        if !self.flush() {
                            return false;
                        }
                    }
                }
                Err(e) => {
                    self.send_error(&e);
                    return false;
                }
            }
        }
    }

    fn com_query(&mut self, handler: &mut B::Handler, body: &[u8]) -> bool {
        stats::question();
        // Not lossy: a string literal may carry any bytes (see strata_types::sqltext).
        let sql = strata_types::sqltext::decode(body);
        let status = handler.status_flags();
        let deprecate_eof = self.deprecate_eof();
        let found_rows = self.client_caps & caps::FOUND_ROWS != 0;
        let multi_results = self.client_caps & caps::MULTI_RESULTS != 0;
        let mut out = resultset::Writer::new(&mut self.w, deprecate_eof, false, status)
            .with_found_rows(found_rows)
            .with_multi_results(multi_results)
            .streaming_to(&mut self.stream, &mut self.timer, self.timeouts.net_write);
        if self.client_caps & caps::LOCAL_FILES != 0 {
            out = out.reading_infile_from(
                &mut self.reader,
                self.timeouts.net_read,
                self.backend.max_allowed_packet(),
            );
        }
        let r = handler.query(&sql, self.multi_statements, &mut out);
        let pending = out.finish();
        let status = handler.status_flags();
        match r {
            Ok(()) => resultset::write_terminal(&mut self.w, pending, status, deprecate_eof),
            Err(e) => resultset::write_error(&mut self.w, e.code(), e.sqlstate(), &e.to_string()),
        }
        self.flush()
    }

    fn com_field_list(&mut self, handler: &mut B::Handler, body: &[u8]) -> bool {
        let mut c = Cursor::new(body);
        let table = String::from_utf8_lossy(c.cstr()).into_owned();
        match handler.field_list(&table) {
            Ok(cols) => {
                for col in &cols {
                    self.w.begin();
                    resultset::put_column(&mut self.w.buf, col);
                    self.w.buf.push(0xFB);
                    self.w.end();
                }
                let st = handler.status_flags();
                if self.deprecate_eof() {
                    resultset::write_ok(&mut self.w, 0xFE, 0, 0, st, 0, "");
                } else {
                    resultset::write_eof(&mut self.w, 0, st);
                }
                self.flush()
            }
            Err(e) => self.send_error(&e),
        }
    }

    fn com_change_user(&mut self, _handler: &mut B::Handler, body: &[u8]) -> Option<B::Handler> {
        let mut c = Cursor::new(body);
        let user = String::from_utf8_lossy(c.cstr()).into_owned();
        let response = if self.client_caps & caps::SECURE_CONNECTION != 0 {
            let n = c.u8().unwrap_or(0) as usize;
            c.bytes(n).unwrap_or_default().to_vec()
        } else {
            c.cstr().to_vec()
        };
        let db = String::from_utf8_lossy(c.cstr()).into_owned();
        let _charset = c.u16();
        let plugin = if self.client_caps & caps::PLUGIN_AUTH != 0 && c.remaining() > 0 {
            String::from_utf8_lossy(c.cstr()).into_owned()
        } else {
            NATIVE.to_string()
        };
        let account = self.auth_user(&user, &plugin, response)?;
        if !self.admit(&account) {
            return None;
        }
        self.stmts.clear();
        let interactive = self.client_caps & caps::INTERACTIVE != 0;
        let client_host = self.client_host();
        match self.backend.open_session(
            self.id,
            &account,
            &client_host,
            (!db.is_empty()).then_some(db.as_str()),
            interactive,
        ) {
            Ok(mut h) => {
                self.user = user;
                self.attach(&mut h);
                Some(h)
            }
            Err(e) => {
                self.send_error(&e);
                None
            }
        }
    }

    fn com_stmt_prepare(&mut self, handler: &mut B::Handler, body: &[u8]) -> bool {
        // Not lossy: a string literal may carry any bytes (see strata_types::sqltext).
        let sql = strata_types::sqltext::decode(body);
        match handler.prepare(&sql) {
            Ok(info) => {
                let deprecate_eof = self.deprecate_eof();
                let w = &mut self.w;
                w.begin();
                w.buf.push(0);
                w.buf.extend_from_slice(&info.statement_id.to_le_bytes());
                w.buf
                    .extend_from_slice(&(info.columns.len() as u16).to_le_bytes());
                w.buf.extend_from_slice(&info.params.to_le_bytes());
                w.buf.push(0);
                w.buf.extend_from_slice(&0u16.to_le_bytes());
                w.end();
                let st = handler.status_flags();
                if info.params > 0 {
                    let p = ColumnMeta::computed("?", FieldType::VarString);
                    for _ in 0..info.params {
                        w.begin();
                        resultset::put_column(&mut w.buf, &p);
                        w.end();
                    }
                    if !deprecate_eof {
                        resultset::write_eof(w, 0, st);
                    }
                }
                if !info.columns.is_empty() {
                    for col in &info.columns {
                        w.begin();
                        resultset::put_column(&mut w.buf, col);
                        w.end();
                    }
                    if !deprecate_eof {
                        resultset::write_eof(w, 0, st);
                    }
                }
                self.stmts.insert(
                    info.statement_id,
                    Stmt {
                        params: info.params,
                        columns: info.columns,
                        types: vec![],
                        long_data: IntMap::default(),
                        long_data_error: None,
                    },
                );
                self.flush()
            }
            Err(e) => self.send_error(&e),
        }
    }

    fn com_stmt_execute(&mut self, handler: &mut B::Handler, body: &[u8]) -> bool {
        stats::question();
        let mut c = Cursor::new(body);
        let Some(id) = c.u32() else {
            return self.send_error(&Error::UnknownCommand);
        };
        let Some(stmt) = self.stmts.get_mut(&id) else {
            return self.send_raw_error(
                1243,
                "HY000",
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            );
        };
        if let Some(e) = &stmt.long_data_error {
            let e = e.clone();
            return self.send_error(&e);
        }
        let flags = c.u8().unwrap_or(0);
        if flags != 0 {
            return self.send_raw_error(
                1235,
                "42000",
                "This version of Strata doesn't yet support 'cursors'",
            );
        }
        let _iterations = c.u32();
        let params = match crate::stmt::decode_params(
            &mut c,
            stmt.params,
            &mut stmt.types,
            &mut stmt.long_data,
        ) {
            Ok(p) => p,
            Err(msg) => {
                return self.send_raw_error(
                    1210,
                    "HY000",
                    &format!("Incorrect arguments to mysqld_stmt_execute: {msg}"),
                )
            }
        };
        let _ = &stmt.columns;
        let status = handler.status_flags();
        let deprecate_eof = self.deprecate_eof();
        let found_rows = self.client_caps & caps::FOUND_ROWS != 0;
        let multi_results = self.client_caps & caps::PS_MULTI_RESULTS != 0;
        let mut out = resultset::Writer::new(&mut self.w, deprecate_eof, true, status)
            .with_found_rows(found_rows)
            .with_multi_results(multi_results)
            .streaming_to(&mut self.stream, &mut self.timer, self.timeouts.net_write);
        let r = handler.execute(id, &params, &mut out);
        let pending = out.finish();
        let status = handler.status_flags();
        match r {
            Ok(()) => resultset::write_terminal(&mut self.w, pending, status, deprecate_eof),
            Err(e) => resultset::write_error(&mut self.w, e.code(), e.sqlstate(), &e.to_string()),
        }
        self.flush()
    }
}
