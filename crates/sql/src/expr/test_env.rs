//! The session unit tests evaluate against: system variables with MySQL 8's defaults
//! (`max_allowed_packet` 64 MiB, `group_concat_max_len` 1024, the default sql_mode)
//! that a test may change, and the warnings it collects. Tests only.

use crate::expr::{Env, WarnLevel};
use std::cell::RefCell;
use std::collections::HashMap;
use strata_types::{DateTime, Result, Value};

pub struct TestEnv {
    vars: HashMap<&'static str, Value>,
    /// (code, message) of every warning, in order.
    pub warnings: RefCell<Vec<(u16, String)>>,
}

impl Default for TestEnv {
    fn default() -> TestEnv {
        let vars = HashMap::from([
            ("max_allowed_packet", Value::UInt(64 << 20)),
            ("gtid_mode", Value::str("OFF")),
            ("group_concat_max_len", Value::UInt(1024)),
            (
                "sql_mode",
                Value::str("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"),
            ),
        ]);
        TestEnv {
            vars,
            warnings: RefCell::new(vec![]),
        }
    }
}

impl TestEnv {
    /// The defaults with `name` set to `value`.
    pub fn with(mut self, name: &'static str, value: Value) -> TestEnv {
        self.vars.insert(name, value);
        self
    }

    /// A session whose `max_allowed_packet` is `packet` bytes.
    pub fn small(packet: u64) -> TestEnv {
        TestEnv::default().with("max_allowed_packet", Value::UInt(packet))
    }

    /// The codes of the warnings so far.
    pub fn codes(&self) -> Vec<u16> {
        self.warnings.borrow().iter().map(|w| w.0).collect()
    }
}

impl Env for TestEnv {
    fn system_variable(&self, name: &str, _global: bool) -> Result<Value> {
        Ok(self.vars.get(name).cloned().unwrap_or(Value::Null))
    }
    fn user_variable(&self, _name: &str) -> Value {
        Value::Null
    }
    fn last_insert_id(&self) -> u64 {
        0
    }
    fn database(&self) -> Option<String> {
        None
    }
    fn user(&self) -> String {
        String::new()
    }
    fn connection_id(&self) -> u64 {
        0
    }
    fn now(&self) -> DateTime {
        DateTime::default()
    }
    fn warn(&self, _level: WarnLevel, code: u16, message: String) {
        self.warnings.borrow_mut().push((code, message));
    }
}
