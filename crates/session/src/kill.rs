//! `KILL [CONNECTION | QUERY] id`: stops another connection's running statement (it
//! fails with 1317), and for CONNECTION (the default) closes that connection too, as
//! MySQL does. An unknown id gives 1094. A session may kill itself: `KILL QUERY` of
//! the running KILL has nothing left to stop; `KILL CONNECTION_ID()` ends the
//! connection after the reply.

use crate::{Session, SessionEnv};
use strata_types::{Error, OkInfo, QueryOutput, Result};

impl Session {
    pub(crate) fn kill(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        // After KILL: an optional CONNECTION or QUERY, then the id expression.
        let rest = sql[4..].trim_start();
        let word_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (connection, expr) = match rest[..word_end].to_ascii_uppercase().as_str() {
            "QUERY" => (false, &rest[word_end..]),
            "CONNECTION" => (true, &rest[word_end..]),
            _ => (true, rest),
        };
        if expr.trim().is_empty() {
            return Err(Error::Syntax(sql.to_string()));
        }
        let now = self.now();
        let env = SessionEnv::new(self, now);
        let id = strata_sql::eval_constant(expr.trim(), &env)?
            .to_i64()
            .filter(|&i| i >= 0)
            .ok_or_else(|| Error::Syntax(sql.to_string()))? as u64;
        if id == u64::from(self.connection_id) {
            // Killing the statement that runs the KILL stops nothing; killing this
            // connection closes it once the reply is out.
            if connection {
                self.process.kill(false);
                self.closing = true;
                return Err(Error::Interrupted);
            }
            return out.ok(&OkInfo::default());
        }
        // Another account's thread needs CONNECTION_ADMIN or SUPER (1095).
        if let Some(eff) = self.effective() {
            if !eff.has_dynamic("CONNECTION_ADMIN") {
                use strata_sql::ProcessSource;
                let owner = self
                    .server
                    .processes
                    .processes()
                    .into_iter()
                    .find(|p| p.id == id)
                    .map(|p| p.user);
                if owner.is_some_and(|u| u != self.identity.user) {
                    return Err(Error::NotThreadOwner(id));
                }
            }
        }
        if !self.server.processes.kill(id, connection) {
            return Err(Error::UnknownThread(id));
        }
        out.ok(&OkInfo::default())
    }
}
