//! What a replay of `mysqlbinlog` / `mariadb-binlog` output needs from a session
//! (point-in-time recovery: `mariadb-binlog files | mariadb`):
//!
//! - the `BINLOG '<base64>'` statement, which carries the log's own events
//!   (FORMAT_DESCRIPTION first, then TABLE_MAP + WRITE/UPDATE/DELETE_ROWS): parsed and
//!   privilege-checked here, base64-decoded, and handed to the [`BinlogEvents`] the
//!   server binary installed — the replica's applier code, which decodes the row events
//!   and applies them through [`Session::apply_row_event`] as it does for a source's
//!   events. The session crate knows only the interface: the decoder lives above it.
//! - the session variables such a script sets before each statement (`TIMESTAMP`,
//!   `pseudo_thread_id`, `PSEUDO_SLAVE_MODE`, collations by number, MariaDB's
//!   `check_constraint_checks`, …): each either does here what it does in MySQL, or is
//!   accepted only at the value that is this server's behaviour and refused (1235)
//!   otherwise, never stored and ignored.

use crate::Session;
use base64::Engine as _;
use strata_types::privilege::Privs;
use strata_types::{Error, OkInfo, QueryOutput, Result, Value};

/// Runs the events of BINLOG statements (implemented by the server binary).
pub trait BinlogEvents: Send + Sync {
    /// Applies `events` (one or more whole events, as the log holds them) on `session`.
    /// `state` is the session's, kept between statements (the FORMAT_DESCRIPTION a
    /// later statement's events are read with, and the table maps): None until a first
    /// BINLOG statement sets it.
    fn apply(
        &self,
        session: &mut Session,
        state: &mut Option<Box<dyn std::any::Any + Send>>,
        events: &[u8],
    ) -> Result<()>;
}

/// What [`Session::replay_variable`] decided for a SET.
pub(crate) enum Replay {
    /// Done (or nothing to store).
    Done,
    /// Store this value through the usual path (None: DEFAULT).
    Store(Option<Value>),
}

/// MySQL's collation ids for the collations this server knows, as `mysqlbinlog` prints
/// `collation_connection=45`: (id, collation, character set).
const COLLATION_IDS: &[(i64, &str, &str)] = &[
    (8, "latin1_swedish_ci", "latin1"),
    (33, "utf8mb3_general_ci", "utf8mb3"),
    (45, "utf8mb4_general_ci", "utf8mb4"),
    (46, "utf8mb4_bin", "utf8mb4"),
    (63, "binary", "binary"),
    (224, "utf8mb4_unicode_ci", "utf8mb4"),
    (255, "utf8mb4_0900_ai_ci", "utf8mb4"),
];

/// A number given for a collation or character-set variable, as its name (MySQL takes
/// a collation id for both; a character set variable gets the collation's set).
fn by_collation_id(key: &str, v: &Value) -> Result<Option<Value>> {
    let id = match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        _ => return Ok(None),
    };
    let Some((_, collation, charset)) = COLLATION_IDS.iter().find(|(i, _, _)| *i == id) else {
        return Err(Error::NotSupported(format!("the collation with id {id}")));
    };
    Ok(Some(Value::str(if key.starts_with("collation") {
        collation
    } else {
        charset
    })))
}

/// `SET TIMESTAMP = v`: seconds since the epoch with up to six decimals, as (seconds,
/// microseconds); 1231 for a negative or out-of-range value, 1232 for a non-number.
fn timestamp_of(v: &Value) -> Result<(i64, u32)> {
    let wrong = || Error::WrongValueForVariable {
        name: "timestamp".into(),
        value: v.to_text(),
    };
    let text = match v {
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => v.to_text(),
        _ => return Err(Error::WrongTypeForVariable("timestamp".into())),
    };
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let secs: i64 = whole.parse().map_err(|_| wrong())?;
    // MySQL's range: 1 to 2^31-1 (32-bit TIMESTAMP); 0 is refused.
    if !(1..=2_147_483_647).contains(&secs) {
        return Err(wrong());
    }
    let digits: String = frac.chars().take(6).collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(wrong());
    }
    let micro = if digits.is_empty() {
        0
    } else {
        digits.parse::<u32>().map_err(|_| wrong())? * 10u32.pow(6 - digits.len() as u32)
    };
    Ok((secs, micro))
}

/// The text inside `BINLOG '…'` (base64 with line breaks), or the syntax error.
fn binlog_literal(sql: &str) -> Result<&str> {
    let syntax = || Error::Syntax(sql.chars().take(80).collect());
    let rest = sql
        .get(6..)
        .filter(|_| sql[..6].eq_ignore_ascii_case("BINLOG"))
        .ok_or_else(syntax)?
        .trim();
    if rest.starts_with('@') {
        // MariaDB's `BINLOG @binlog_fragment_0, @binlog_fragment_1` for events split
        // into user variables.
        return Err(Error::NotSupported(
            "BINLOG of user variables (MariaDB's fragments)".into(),
        ));
    }
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"');
    let Some(q) = quote else {
        return Err(syntax());
    };
    let inner = rest
        .get(1..rest.len().saturating_sub(1))
        .filter(|_| rest.len() >= 2 && rest.ends_with(q))
        .ok_or_else(syntax)?;
    // Base64 needs no escapes: a quote or backslash inside is not one string.
    if inner.contains(q) || inner.contains('\\') {
        return Err(syntax());
    }
    Ok(inner)
}

/// The bytes of a BINLOG statement's base64 text (line breaks and spaces skipped, as
/// MySQL's decoder does); 1575 when it is not base64. The text may be several chunks,
/// each padded on its own (`mysqlbinlog` encodes each event separately): a chunk ends
/// after its `=` padding.
pub fn decode_base64(text: &str) -> Result<Vec<u8>> {
    let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..compact.len() {
        let chunk_ends = compact[i] == b'=' && compact.get(i + 1).is_some_and(|next| *next != b'=');
        if chunk_ends {
            decode_chunk(&compact[start..=i], &mut out)?;
            start = i + 1;
        }
    }
    decode_chunk(&compact[start..], &mut out)?;
    Ok(out)
}

fn decode_chunk(chunk: &[u8], out: &mut Vec<u8>) -> Result<()> {
    base64::engine::general_purpose::STANDARD
        .decode_vec(chunk, out)
        .map_err(|_| Error::Base64Decode)
}

impl Session {
    /// The session's clock as @@timestamp reads it: seconds since the epoch, with the
    /// microseconds of a fractional SET TIMESTAMP.
    pub(crate) fn timestamp_value(&self) -> Value {
        // A DOUBLE with microseconds, as MySQL 8 (`1700000000.500000`; the binder shows
        // it with six decimals).
        match self.fixed_time {
            Some((secs, micro)) => Value::Double(secs as f64 + micro as f64 / 1e6),
            None => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                Value::Double(now.as_secs() as f64 + now.subsec_micros() as f64 / 1e6)
            }
        }
    }

    /// Setting a variable a binary-log replay sets: MySQL's privilege rule for the
    /// restricted ones, numbers for collations, the values that are refused rather
    /// than ignored. Run after the usual scope checks.
    pub(crate) fn replay_variable(
        &mut self,
        key: &str,
        global: bool,
        value: Option<Value>,
    ) -> Result<Replay> {
        let refuse = |what: &str| Err(Error::NotSupported(what.to_string()));
        let truth = |v: &Value| match v {
            Value::Int(i) => Some(*i != 0),
            Value::UInt(u) => Some(*u != 0),
            other => match other.to_text().to_ascii_uppercase().as_str() {
                "ON" | "TRUE" | "1" => Some(true),
                "OFF" | "FALSE" | "0" => Some(false),
                _ => None,
            },
        };
        match key {
            "timestamp" => {
                self.fixed_time = match &value {
                    None => None,
                    Some(v) => Some(timestamp_of(v)?),
                };
                Ok(Replay::Done)
            }
            "pseudo_thread_id" | "pseudo_slave_mode" => {
                // MySQL 8: restricted session variables.
                if let Some(eff) = self.effective() {
                    let ok = eff.has_global(Privs::SUPER)
                        || ["SYSTEM_VARIABLES_ADMIN", "SESSION_VARIABLES_ADMIN"]
                            .iter()
                            .any(|d| eff.has_dynamic(d));
                    if !ok {
                        return Err(Error::SpecificAccessDenied(
                            "SUPER, SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN".into(),
                        ));
                    }
                }
                Ok(Replay::Store(value))
            }
            "completion_type" => match &value {
                Some(v) => match v.to_text().to_ascii_uppercase().as_str() {
                    "0" | "NO_CHAIN" => Ok(Replay::Store(Some(Value::str("NO_CHAIN")))),
                    "1" | "2" | "CHAIN" | "RELEASE" => refuse("completion_type CHAIN or RELEASE"),
                    _ => Err(Error::WrongValueForVariable {
                        name: "completion_type".into(),
                        value: v.to_text(),
                    }),
                },
                None => Ok(Replay::Store(None)),
            },
            "check_constraint_checks" => match value.as_ref().map(truth) {
                Some(Some(false)) => {
                    refuse("check_constraint_checks = OFF (CHECK constraints are always enforced)")
                }
                Some(None) => Err(Error::WrongValueForVariable {
                    name: key.into(),
                    value: value.map(|v| v.to_text()).unwrap_or_default(),
                }),
                _ => Ok(Replay::Store(value.map(|_| Value::Int(1)))),
            },
            "system_versioning_insert_history" => match value.as_ref().map(truth) {
                Some(Some(true)) => {
                    refuse("system_versioning_insert_history = ON (system-versioned tables)")
                }
                Some(None) => Err(Error::WrongValueForVariable {
                    name: key.into(),
                    value: value.map(|v| v.to_text()).unwrap_or_default(),
                }),
                _ => Ok(Replay::Store(value.map(|_| Value::Int(0)))),
            },
            "gtid_domain_id" => match &value {
                Some(v) if v.to_i64() != Some(0) => refuse(
                    "MariaDB GTID domains other than 0 (this server logs MySQL GTIDs; \
                     replay with mariadb-binlog --skip-gtids)",
                ),
                _ => Ok(Replay::Store(value)),
            },
            "gtid_seq_no" => match &value {
                Some(v) if v.to_i64() != Some(0) => refuse(
                    "MariaDB GTIDs (gtid_seq_no: this server logs MySQL GTIDs; replay \
                     with mariadb-binlog --skip-gtids)",
                ),
                _ => Ok(Replay::Store(value)),
            },
            "lc_time_names" => match &value {
                Some(v) => match v {
                    Value::Int(0) | Value::UInt(0) => Ok(Replay::Store(Some(Value::str("en_US")))),
                    _ if v.to_text().eq_ignore_ascii_case("en_US") => {
                        Ok(Replay::Store(Some(Value::str("en_US"))))
                    }
                    _ => refuse(&format!("lc_time_names = '{}' (only en_US)", v.to_text())),
                },
                None => Ok(Replay::Store(None)),
            },
            _ if key.starts_with("collation_") || key.starts_with("character_set_") => {
                let _ = global;
                match &value {
                    Some(v) => match by_collation_id(key, v)? {
                        Some(named) => Ok(Replay::Store(Some(named))),
                        None => Ok(Replay::Store(value)),
                    },
                    None => Ok(Replay::Store(None)),
                }
            }
            _ => Ok(Replay::Store(value)),
        }
    }

    /// `BINLOG '<base64>'`: MySQL 8 wants BINLOG_ADMIN (or SUPER), or
    /// REPLICATION_APPLIER — which then needs each rows event's table privilege too.
    pub(crate) fn binlog_base64_statement(
        &mut self,
        sql: &str,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let literal = binlog_literal(sql)?;
        let mut table_checks = false;
        if let Some(eff) = self.effective() {
            if !(eff.has_global(Privs::SUPER) || eff.has_dynamic("BINLOG_ADMIN")) {
                if !eff.has_dynamic("REPLICATION_APPLIER") {
                    return Err(Error::SpecificAccessDenied(
                        "SUPER, BINLOG_ADMIN or REPLICATION_APPLIER".into(),
                    ));
                }
                table_checks = true;
            }
        }
        let events = decode_base64(literal)?;
        let hook = self
            .server
            .binlog_events
            .get()
            .cloned()
            .ok_or_else(|| Error::NotSupported("BINLOG statements here".into()))?;
        let mut state = self.binlog_events_state.take();
        self.row_event_table_checks = table_checks;
        let r = hook.apply(self, &mut state, &events);
        self.row_event_table_checks = false;
        self.binlog_events_state = state;
        r?;
        out.ok(&OkInfo::default())
    }

    /// The table privilege a rows event needs when the BINLOG statement runs under
    /// REPLICATION_APPLIER alone (MySQL checks each event as the applier would).
    pub(crate) fn check_row_event_privilege(
        &mut self,
        ev: &strata_sql::RowEvent<'_>,
    ) -> Result<()> {
        if !self.row_event_table_checks {
            return Ok(());
        }
        let Some(eff) = self.effective() else {
            return Ok(());
        };
        let need = match ev.kind {
            strata_sql::RowEventKind::Write => Privs::INSERT,
            strata_sql::RowEventKind::Update => Privs::UPDATE,
            strata_sql::RowEventKind::Delete => Privs::DELETE,
        };
        if eff.on_table(ev.db, ev.table).contains(need) {
            return Ok(());
        }
        Err(Error::TableAccessDenied {
            command: need.first_name().to_string(),
            user: self.identity.user.clone(),
            host: self.identity.client_host.clone(),
            table: ev.table.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_base64() {
        assert_eq!(
            binlog_literal("BINLOG '\nQUJD\nREVG\n'").unwrap(),
            "\nQUJD\nREVG\n"
        );
        assert_eq!(binlog_literal("binlog \"QUJD\"").unwrap(), "QUJD");
        assert_eq!(binlog_literal("BINLOG 'QUJD").unwrap_err().code(), 1064);
        assert_eq!(binlog_literal("BINLOG QUJD").unwrap_err().code(), 1064);
        assert_eq!(binlog_literal("BINLOG 'a'b'").unwrap_err().code(), 1064);
        assert_eq!(binlog_literal("BINLOG '").unwrap_err().code(), 1064);
        assert_eq!(
            binlog_literal("BINLOG @binlog_fragment_0, @binlog_fragment_1")
                .unwrap_err()
                .code(),
            1235
        );
        assert_eq!(decode_base64("\nQUJD\nREVG\n").unwrap(), b"ABCDEF");
        // Chunks padded on their own, as mysqlbinlog prints one per event.
        assert_eq!(decode_base64("QUI=\nQw==\nREVG").unwrap(), b"ABCDEF");
        assert_eq!(decode_base64("QQ==\n").unwrap(), b"A");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("QUJ").unwrap_err().code(), 1575);
        assert_eq!(decode_base64("QQ=x").unwrap_err().code(), 1575);
        assert_eq!(decode_base64("QU*D").unwrap_err().code(), 1575);
    }

    #[test]
    fn timestamps_and_collation_ids() {
        assert_eq!(
            timestamp_of(&Value::Int(1796105332)).unwrap(),
            (1796105332, 0)
        );
        assert_eq!(
            timestamp_of(&Value::Double(1796105332.5)).unwrap(),
            (1796105332, 500_000)
        );
        assert_eq!(timestamp_of(&Value::Int(0)).unwrap_err().code(), 1231);
        assert_eq!(timestamp_of(&Value::Int(-5)).unwrap_err().code(), 1231);
        assert_eq!(timestamp_of(&Value::str("x")).unwrap_err().code(), 1232);
        assert_eq!(
            by_collation_id("collation_connection", &Value::Int(45)).unwrap(),
            Some(Value::str("utf8mb4_general_ci"))
        );
        assert_eq!(
            by_collation_id("character_set_client", &Value::Int(255)).unwrap(),
            Some(Value::str("utf8mb4"))
        );
        assert_eq!(
            by_collation_id("collation_server", &Value::Int(9999))
                .unwrap_err()
                .code(),
            1235
        );
        assert_eq!(
            by_collation_id("collation_server", &Value::str("binary")).unwrap(),
            None
        );
    }
}
