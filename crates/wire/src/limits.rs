//! How many connections the server holds, in total and per user, and the decisions
//! MySQL makes with those counts:
//! - a new TCP connection beyond `max_connections` + 1 is refused at once with 1040,
//!   before the greeting (no thread is started for it);
//! - after authentication, a connection beyond `max_connections` is refused with 1040
//!   unless its user is privileged: the extra connection is kept for an administrator,
//!   so one can always log in to see what is wrong;
//! - a user already holding `max_user_connections` connections is refused with 1203.
//!
//! Connections still in their handshake count, as in MySQL: `connect_timeout` is what
//! frees the slots of clients that never finish it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use strata_types::Error;

#[derive(Default)]
pub struct Limits {
    active: AtomicUsize,
    per_user: Mutex<HashMap<String, usize>>,
}

/// One accepted connection's place in the count; released when dropped.
pub struct Slot {
    limits: Arc<Limits>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.limits.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One authenticated connection of a user; released when dropped.
pub struct UserSlot {
    limits: Arc<Limits>,
    user: String,
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut m = self
            .limits
            .per_user
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.user);
            }
        }
    }
}

impl Limits {
    pub fn new() -> Arc<Limits> {
        Arc::new(Limits::default())
    }

    /// Connections open now, handshakes included.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// Counts a new TCP connection, or None when even the administrator's extra slot
    /// is taken (the caller refuses it with 1040).
    pub fn accept(self: &Arc<Self>, max_connections: usize) -> Option<Slot> {
        let n = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        let slot = Slot {
            limits: self.clone(),
        };
        (n <= max_connections.saturating_add(1)).then_some(slot)
    }

    /// Admits an authenticated account: its own MAX_USER_CONNECTIONS when it has one
    /// (1226), else the global `max_user_connections` (1203), counted per account
    /// (`user@host`) as MySQL counts them.
    pub fn admit(
        self: &Arc<Self>,
        account: &crate::handler::LoginAccount,
        max_connections: usize,
        max_user_connections: usize,
    ) -> Result<UserSlot, Error> {
        let key = format!("{}@{}", account.user, account.host);
        let own = account.max_user_connections as usize;
        let limit = if own > 0 { own } else { max_user_connections };
        self.admit_key(&key, account.privileged, max_connections, limit)
            .map_err(|e| match e {
                Error::TooManyUserConnections(_) if own > 0 => {
                    Error::UserLimitReached(account.user.clone(), own as u64)
                }
                Error::TooManyUserConnections(_) => {
                    Error::TooManyUserConnections(account.user.clone())
                }
                other => other,
            })
    }

    /// Admits an authenticated user (by its counting key), or says which error refuses
    /// it.
    pub fn admit_key(
        self: &Arc<Self>,
        user: &str,
        privileged: bool,
        max_connections: usize,
        max_user_connections: usize,
    ) -> Result<UserSlot, Error> {
        if !privileged && self.active() > max_connections {
            return Err(Error::TooManyConnections);
        }
        let mut m = self.per_user.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.get(user).copied().unwrap_or(0);
        if max_user_connections > 0 && n >= max_user_connections {
            return Err(Error::TooManyUserConnections(user.to_string()));
        }
        m.insert(user.to_string(), n + 1);
        Ok(UserSlot {
            limits: self.clone(),
            user: user.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slot_beyond_the_limit_is_for_the_administrator() {
        let l = Limits::new();
        let a = l.accept(2).unwrap();
        let b = l.accept(2).unwrap();
        let _ua = l
            .admit_key("app", false, 2, 0)
            .expect("within max_connections");
        let c = l.accept(2).expect("the reserved slot is accepted");
        assert!(l.accept(2).is_none(), "beyond max + 1");
        assert_eq!(l.active(), 3, "a refused connection is not counted");
        assert_eq!(
            l.admit_key("app", false, 2, 0).err(),
            Some(Error::TooManyConnections),
            "an ordinary user may not take the reserved slot"
        );
        let _ur = l.admit_key("root", true, 2, 0).expect("root may");
        drop((a, b, c));
        assert_eq!(l.active(), 0);
    }

    #[test]
    fn per_user_limit_counts_authenticated_connections() {
        let l = Limits::new();
        let _s: Vec<Slot> = (0..4).map(|_| l.accept(10).unwrap()).collect();
        let u1 = l.admit_key("app", false, 10, 2).unwrap();
        let _u2 = l.admit_key("app", false, 10, 2).unwrap();
        assert_eq!(
            l.admit_key("app", false, 10, 2).err(),
            Some(Error::TooManyUserConnections("app".into()))
        );
        let _other = l.admit_key("bob", false, 10, 2).unwrap();
        drop(u1);
        assert!(l.admit_key("app", false, 10, 2).is_ok());
    }

    #[test]
    fn an_accounts_own_limit_wins_and_is_1226() {
        let l = Limits::new();
        let _s: Vec<Slot> = (0..4).map(|_| l.accept(10).unwrap()).collect();
        let acct = crate::handler::LoginAccount {
            user: "app".into(),
            host: "%".into(),
            max_user_connections: 1,
            ..Default::default()
        };
        let _a = l.admit(&acct, 10, 5).unwrap();
        assert_eq!(
            l.admit(&acct, 10, 5).err(),
            Some(Error::UserLimitReached("app".into(), 1))
        );
        let other_host = crate::handler::LoginAccount {
            host: "localhost".into(),
            max_user_connections: 0,
            ..acct.clone()
        };
        assert!(l.admit(&other_host, 10, 5).is_ok(), "counted per account");
    }
}
