//! The glue between the protocol layer and sessions: implements the wire crate's
//! [`Backend`] (users, new sessions) and [`Handler`] (one connection's commands) on top
//! of `strata_session`. Nothing here decides anything; it only forwards (a login's
//! account comes from the session crate's account store, `strata_session::acl`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use strata_session::acl::store::Require;
use strata_session::{ResultSink, Server, Session};
use strata_types::privilege::Privs;
use strata_types::{ColumnMeta, EndInfo, OkInfo, QueryOutput, Result, Value};
use strata_wire::{Backend, Handler, LoginAccount, PreparedInfo, ResultStream, Timeouts};

pub struct StrataBackend {
    pub server: Arc<Server>,
    /// `--skip-grant-tables`: any user name logs in, with any password, as an
    /// administrator.
    pub skip_grant_tables: bool,
}

impl Backend for StrataBackend {
    type Handler = Connection;

    fn find_account(&self, user: &str, peer: Option<IpAddr>) -> Option<LoginAccount> {
        if self.skip_grant_tables {
            return Some(LoginAccount {
                user: user.to_string(),
                host: "localhost".into(),
                plugin: strata_session::acl::strata_wire_plugins::NATIVE.into(),
                privileged: true,
                ..Default::default()
            });
        }
        let a = self
            .server
            .acl
            .find_login(user, strata_session::acl::host::Client { ip: peer })?;
        let privileged =
            a.global.privs.contains(Privs::SUPER) || a.dynamic.contains("CONNECTION_ADMIN");
        Some(LoginAccount {
            // A login matched by the anonymous account keeps the name it gave for
            // USER(); CURRENT_USER() is the account's.
            user: a.user.clone(),
            host: a.host.clone(),
            plugin: a.plugin.clone(),
            auth_string: a.auth_string.clone(),
            locked: a.locked,
            require_secure: a.require != Require::None,
            max_user_connections: a.max_user_connections,
            privileged,
        })
    }

    fn open_session(
        &self,
        connection_id: u32,
        account: &LoginAccount,
        client_host: &str,
        db: Option<&str>,
        interactive: bool,
    ) -> Result<Connection> {
        let mut session = Session::for_account(
            self.server.clone(),
            connection_id,
            &account.user,
            &account.host,
            client_host,
            db,
        )?;
        if interactive {
            session.set_interactive();
        }
        Ok(Connection { session })
    }

    fn max_allowed_packet(&self) -> usize {
        self.server.globals.max_allowed_packet()
    }

    fn max_connections(&self) -> usize {
        self.global_int("max_connections", 1024)
    }

    fn max_user_connections(&self) -> usize {
        self.global_int("max_user_connections", 0)
    }

    fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.global_int("connect_timeout", 10) as u64)
    }

    fn require_secure_transport(&self) -> bool {
        self.global_int("require_secure_transport", 0) != 0
    }
}

impl StrataBackend {
    /// A global variable the wire layer reads for each new connection (SET GLOBAL
    /// applies to the next one).
    fn global_int(&self, name: &str, default: usize) -> usize {
        self.server
            .globals
            .get(name)
            .to_i64()
            .map_or(default, |v| v.max(0) as usize)
    }
}

pub struct Connection {
    session: Session,
}

/// Lets a session write into the wire layer's multi-result stream.
struct Bridge<'a>(&'a mut dyn ResultStream);

impl QueryOutput for Bridge<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.0.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.0.row(row)
    }
    fn end(&mut self, info: &EndInfo) -> Result<()> {
        self.0.end(info)
    }
    fn ok(&mut self, info: &OkInfo) -> Result<()> {
        self.0.ok(info)
    }
    fn next_result_set(&mut self) -> Result<bool> {
        self.0.next_result_set()
    }
    fn takes_more_results(&self) -> bool {
        self.0.takes_more_results()
    }
    fn local_infile(&mut self, name: &str) -> Result<Option<Box<dyn std::io::Read + '_>>> {
        self.0.local_infile(name)
    }
}

impl ResultSink for Bridge<'_> {
    fn next_result(&mut self) -> Result<()> {
        self.0.next_result()
    }
}

impl Handler for Connection {
    fn query(
        &mut self,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn ResultStream,
    ) -> Result<()> {
        self.session.query(sql, multi_statements, &mut Bridge(out))
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo> {
        let (statement_id, params, columns) = self.session.prepare(sql)?;
        Ok(PreparedInfo {
            statement_id,
            params,
            columns,
        })
    }

    fn execute(
        &mut self,
        statement_id: u32,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        self.session.execute(statement_id, params, out)
    }

    fn close_statement(&mut self, statement_id: u32) {
        self.session.close_statement(statement_id)
    }

    fn init_db(&mut self, db: &str) -> Result<()> {
        self.session.use_database(db)
    }

    fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>> {
        self.session.field_list(table)
    }

    fn reset(&mut self) {
        self.session.reset()
    }

    fn status_flags(&self) -> u16 {
        self.session.status_flags()
    }

    fn current_db(&self) -> Option<String> {
        self.session.current_db()
    }

    fn timeouts(&self) -> Timeouts {
        let t = self.session.net_timeouts();
        Timeouts {
            wait: t.wait,
            net_read: t.read,
            net_write: t.write,
        }
    }

    fn attach(&mut self, host: String, shutdown: Box<dyn Fn() + Send + Sync>) {
        self.session.attach(host, shutdown)
    }

    fn tls_session(&mut self, version: &str, cipher: &str) {
        self.session.set_tls(version, cipher)
    }

    fn closing(&self) -> bool {
        self.session.closing()
    }

    fn register_replica(&mut self, r: &strata_wire::replication::Registration) -> Result<()> {
        self.session
            .register_replica(r.server_id, &r.host, r.port)?;
        Ok(())
    }

    fn binlog_dump(
        &mut self,
        r: &strata_wire::replication::DumpRequest,
    ) -> Result<Box<dyn strata_wire::replication::EventSource>> {
        let d = self
            .session
            .binlog_dump(&r.file, r.pos, r.gtids.as_deref())?;
        Ok(Box::new(DumpSource(d)))
    }

    fn heartbeat_period(&self) -> Option<std::time::Duration> {
        self.session.heartbeat_period()
    }

    fn close(&mut self) {
        self.session.close()
    }
}

/// A replica's dump, as the wire layer reads it.
struct DumpSource(strata_binlog::dump::Dump);

impl strata_wire::replication::EventSource for DumpSource {
    fn next(&mut self, wait: std::time::Duration) -> Result<Option<Vec<u8>>> {
        self.0.next(wait)
    }

    fn heartbeat(&mut self) -> Vec<u8> {
        self.0.heartbeat()
    }
}
