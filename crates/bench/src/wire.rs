//! The over-the-wire client: one MySQL-protocol connection (the `mysql` crate, text
//! protocol, as sysbench with `--db-ps-mode=disable`) to a server on this machine.
//! Only loopback addresses are accepted: the bench is a load generator, and load goes
//! to this machine's own servers only.

use crate::client::{Client, ClientError, Outcome};
use mysql::prelude::Queryable;
use std::net::{IpAddr, ToSocketAddrs};

#[derive(Clone, Debug)]
pub struct WireOptions {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
}

impl WireOptions {
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Refuses any host that does not resolve only to loopback addresses.
    pub fn check_loopback(&self) -> Result<(), String> {
        let addrs: Vec<IpAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("--host {}: {e}", self.host))?
            .map(|a| a.ip())
            .collect();
        if addrs.is_empty() || addrs.iter().any(|a| !a.is_loopback()) {
            return Err(format!(
                "--host {}: the bench only connects to this machine's loopback addresses (127.0.0.1, ::1, localhost)",
                self.host
            ));
        }
        Ok(())
    }
}

pub struct WireClient {
    conn: mysql::Conn,
}

fn wire_err(e: mysql::Error) -> ClientError {
    match e {
        mysql::Error::MySqlError(m) => ClientError {
            code: Some(m.code),
            message: m.message,
        },
        other => ClientError {
            code: None,
            message: other.to_string(),
        },
    }
}

impl WireClient {
    pub fn connect(o: &WireOptions) -> Result<WireClient, ClientError> {
        let opts = mysql::OptsBuilder::new()
            .ip_or_hostname(Some(o.host.clone()))
            .tcp_port(o.port)
            .user(Some(o.user.clone()))
            .pass(o.password.clone())
            .prefer_socket(false);
        let conn = mysql::Conn::new(opts).map_err(wire_err)?;
        Ok(WireClient { conn })
    }
}

fn text(v: &mysql::Value) -> String {
    match v {
        mysql::Value::NULL => "NULL".into(),
        mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        mysql::Value::Int(i) => i.to_string(),
        mysql::Value::UInt(u) => u.to_string(),
        mysql::Value::Float(f) => f.to_string(),
        mysql::Value::Double(d) => d.to_string(),
        // Dates and times: the SQL literal form, without the quotes.
        other => other.as_sql(true).trim_matches('\'').to_string(),
    }
}

impl WireClient {
    fn run(&mut self, sql: &str, keep: bool) -> Result<(Outcome, Vec<Vec<String>>), ClientError> {
        let mut result = self.conn.query_iter(sql).map_err(wire_err)?;
        let mut out = Outcome::default();
        let mut values = Vec::new();
        while let Some(set) = result.iter() {
            out.affected += set.affected_rows();
            for row in set {
                let row = row.map_err(wire_err)?;
                out.rows += 1;
                if keep {
                    // Row::unwrap hands over the row's values (it is not Option::unwrap).
                    values.push(row.unwrap().iter().map(text).collect());
                }
            }
        }
        Ok((out, values))
    }
}

impl Client for WireClient {
    fn exec(&mut self, sql: &str) -> Result<Outcome, ClientError> {
        Ok(self.run(sql, false)?.0)
    }

    fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, ClientError> {
        Ok(self.run(sql, true)?.1)
    }
}
