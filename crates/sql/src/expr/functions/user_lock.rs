//! User-level locks: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK and
//! IS_USED_LOCK. The locks themselves are metadata locks of their own namespace
//! (`mdl.rs`), so waiting, KILL and deadlock detection (3058) come from there; this
//! file checks the arguments and asks the session ([`Env::user_lock`]).

use super::arg;
use crate::expr::{EvalCtx, Expr, UserLockCall};
use std::time::Duration;
use strata_types::{Error, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserLockFn {
    Get,
    Release,
    ReleaseAll,
    IsFree,
    IsUsed,
}

/// Longest lock name MySQL takes (3057 beyond it).
const MAX_NAME_CHARS: usize = 64;

/// The lock name argument: NULL, empty or longer than 64 characters is 3057.
fn lock_name(v: &Value) -> Result<String> {
    let name = match v {
        Value::Null => return Err(Error::UserLockWrongName("NULL".into())),
        v => v.to_text(),
    };
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::UserLockWrongName(name));
    }
    Ok(name)
}

/// GET_LOCK's timeout in seconds: negative waits for ever; NULL is 0 (MySQL's reading).
fn timeout(v: &Value) -> Option<Duration> {
    let s = v.to_f64().unwrap_or(0.0);
    if s < 0.0 || !s.is_finite() {
        return None;
    }
    Some(Duration::from_secs_f64(s.min(31_536_000.0)))
}

pub(super) fn call(f: UserLockFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let request = match f {
        UserLockFn::ReleaseAll => UserLockCall::ReleaseAll,
        _ => {
            let name = lock_name(&arg(args, 0, row, cx)?)?;
            match f {
                UserLockFn::Get => UserLockCall::Get(name, timeout(&arg(args, 1, row, cx)?)),
                UserLockFn::Release => UserLockCall::Release(name),
                UserLockFn::IsFree => UserLockCall::IsFree(name),
                _ => UserLockCall::IsUsed(name),
            }
        }
    };
    cx.env.user_lock(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_timeouts() {
        assert!(matches!(
            lock_name(&Value::Null),
            Err(Error::UserLockWrongName(_))
        ));
        assert!(lock_name(&Value::str("")).is_err());
        assert!(lock_name(&Value::str(&"x".repeat(65))).is_err());
        assert_eq!(
            lock_name(&Value::str(&"é".repeat(64)))
                .unwrap()
                .chars()
                .count(),
            64
        );
        assert_eq!(timeout(&Value::Int(-1)), None);
        assert_eq!(
            timeout(&Value::Double(0.5)),
            Some(Duration::from_millis(500))
        );
        assert_eq!(timeout(&Value::Null), Some(Duration::ZERO));
    }
}
