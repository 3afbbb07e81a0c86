//! The clock on a connection's socket: how long a read or a write may wait for the
//! client before the connection gives up on it.
//!
//! A client that connects and never answers the greeting, one that goes idle, and one
//! that stops in the middle of a packet or stops reading its result each hold a
//! connection slot (and a thread) until a timeout ends it; without one a few such
//! clients keep every real login out. The rules are MySQL's:
//! - the whole handshake must finish within `connect_timeout` (a deadline, so a client
//!   trickling one byte at a time cannot stretch it);
//! - the wait for the next command may last `wait_timeout` (the caller then sends
//!   error 4031 and closes);
//! - once a packet has begun, each read may wait `net_read_timeout`;
//! - each piece of a response (all of a small one; [`crate::resultset::STREAM_AT`]
//!   bytes of a large result) must be taken within `net_write_timeout` — a deadline,
//!   since a client reading a few bytes at a time would renew a per-call timeout
//!   forever ([`DeadlineWrite`]).
//!
//! The socket's SO_RCVTIMEO/SO_SNDTIMEO carry the limit; [`SocketTimer`] remembers what
//! is set so the usual case (the same limit as for the last command) costs no system
//! call.

use crate::idle_stack::{release_unused_stack, RELEASE_AFTER};
use crate::transport::Transport;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// What the connection is waiting for, which decides the limit of each read.
#[derive(Clone, Copy, Debug)]
pub enum Wait {
    /// The handshake: everything must arrive before the deadline.
    Handshake(Instant),
    /// The first byte of the next command, until `idle_until`; then the rest of it
    /// with `net_read` per read.
    Command {
        idle_until: Instant,
        net_read: Duration,
    },
    /// The rest of a packet that has begun.
    Packet(Duration),
}

/// The read and write timeouts set on a socket, so they are set only when they change.
#[derive(Default)]
pub struct SocketTimer {
    read: Option<Duration>,
    write: Option<Duration>,
}

/// The smallest timeout a socket takes (zero means "no timeout" to the OS, and Rust
/// refuses it).
const MIN: Duration = Duration::from_millis(1);

impl SocketTimer {
    pub fn set_read(&mut self, s: &Transport, d: Duration) {
        let d = d.max(MIN);
        if self.read != Some(d) && s.set_read_timeout(d).is_ok() {
            self.read = Some(d);
        }
    }

    pub fn set_write(&mut self, s: &Transport, d: Duration) {
        let d = d.max(MIN);
        if self.write != Some(d) && s.set_write_timeout(d).is_ok() {
            self.write = Some(d);
        }
    }
}

/// How a timed read ended without data, when it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    /// No command came within `wait_timeout`.
    Idle,
    /// The handshake's deadline passed, or a begun packet stalled past `net_read_timeout`.
    Stalled,
}

/// A reader over a connection's socket that applies a [`Wait`].
pub struct TimedRead<'a> {
    stream: &'a mut Transport,
    timer: &'a mut SocketTimer,
    wait: Wait,
    /// Set when a read failed because a limit passed.
    pub expired: Option<Expired>,
    /// Whether this wait for a command has given back its stack pages (after
    /// [`RELEASE_AFTER`] idle; `idle_stack.rs`).
    released: bool,
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl<'a> TimedRead<'a> {
    pub fn new(stream: &'a mut Transport, timer: &'a mut SocketTimer, wait: Wait) -> TimedRead<'a> {
        TimedRead {
            stream,
            timer,
            wait,
            expired: None,
            released: false,
        }
    }

    /// The limit for the next read, or None when the deadline has already passed.
    fn limit(&self, now: Instant) -> Option<Duration> {
        match self.wait {
            Wait::Handshake(deadline) => {
                Some(deadline.checked_duration_since(now)?).filter(|d| !d.is_zero())
            }
            Wait::Command {
                idle_until,
                net_read,
            } => {
                let left = idle_until.checked_duration_since(now)?;
                // A busy connection always reads with the same limit, so this costs no
                // system call; one idle past RELEASE_AFTER wakes once to give back its
                // stack pages.
                let first = if self.released {
                    net_read
                } else {
                    net_read.min(RELEASE_AFTER)
                };
                (!left.is_zero()).then_some(left.min(first))
            }
            Wait::Packet(d) => Some(d),
        }
    }
}

impl Read for TimedRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(limit) = self.limit(Instant::now()) else {
                self.expired = Some(match self.wait {
                    Wait::Command { .. } => Expired::Idle,
                    _ => Expired::Stalled,
                });
                return Err(io::ErrorKind::TimedOut.into());
            };
            self.timer.set_read(self.stream, limit);
            match self.stream.read(buf) {
                Ok(n) => {
                    if let Wait::Command { net_read, .. } = self.wait {
                        if n > 0 {
                            // The command has begun: the rest comes under net_read_timeout.
                            self.wait = Wait::Packet(net_read);
                        }
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A limit shorter than the wait (net_read_timeout while idle, or a
                // signal): the loop recomputes what is left.
                Err(e) if is_timeout(&e) => {
                    if let Wait::Packet(_) = self.wait {
                        self.expired = Some(Expired::Stalled);
                        return Err(e);
                    }
                    if !self.released {
                        self.released = true;
                        release_unused_stack();
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// A writer over a connection's socket that must finish by a deadline. The first
/// write runs under the socket's usual timeout (the whole limit, set once, so a small
/// response costs no extra system call); only a partial write sets what is left.
pub struct DeadlineWrite<'a> {
    stream: &'a mut Transport,
    timer: &'a mut SocketTimer,
    deadline: Instant,
    first: bool,
}

impl<'a> DeadlineWrite<'a> {
    pub fn new(stream: &'a mut Transport, timer: &'a mut SocketTimer, limit: Duration) -> Self {
        timer.set_write(stream, limit);
        DeadlineWrite {
            stream,
            timer,
            deadline: Instant::now() + limit,
            first: true,
        }
    }
}

impl Write for DeadlineWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.first {
            let left = self
                .deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or(io::ErrorKind::TimedOut)?;
            self.timer.set_write(self.stream, left);
        }
        self.first = false;
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    fn pair() -> (TcpStream, Transport) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, Transport::Tcp(s))
    }

    #[test]
    fn idle_and_stalled_reads_expire() {
        let (_client, mut server) = pair();
        let mut timer = SocketTimer::default();
        let wait = Wait::Command {
            idle_until: Instant::now() + Duration::from_millis(150),
            net_read: Duration::from_millis(40),
        };
        let mut r = TimedRead::new(&mut server, &mut timer, wait);
        let mut b = [0u8; 4];
        assert!(r.read(&mut b).is_err());
        assert_eq!(r.expired, Some(Expired::Idle));

        let mut r = TimedRead::new(
            &mut server,
            &mut timer,
            Wait::Packet(Duration::from_millis(30)),
        );
        assert!(r.read(&mut b).is_err());
        assert_eq!(r.expired, Some(Expired::Stalled));

        let past = Instant::now();
        let mut r = TimedRead::new(&mut server, &mut timer, Wait::Handshake(past));
        assert!(r.read(&mut b).is_err());
        assert_eq!(r.expired, Some(Expired::Stalled));
    }

    #[test]
    fn a_client_that_does_not_read_fails_the_write_by_the_deadline() {
        let (_client, mut server) = pair();
        let mut timer = SocketTimer::default();
        let big = vec![7u8; 64 << 20];
        let start = Instant::now();
        let mut w = DeadlineWrite::new(&mut server, &mut timer, Duration::from_millis(300));
        assert!(
            w.write_all(&big).is_err(),
            "64 MiB cannot all be taken by a reader that reads nothing"
        );
        assert!(start.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn data_before_the_limit_is_read() {
        let (mut client, mut server) = pair();
        client.write_all(b"ab").unwrap();
        let mut timer = SocketTimer::default();
        let wait = Wait::Command {
            idle_until: Instant::now() + Duration::from_secs(5),
            net_read: Duration::from_secs(5),
        };
        let mut r = TimedRead::new(&mut server, &mut timer, wait);
        let mut b = [0u8; 4];
        assert_eq!(r.read(&mut b).unwrap(), 2);
        assert!(matches!(r.wait, Wait::Packet(_)));
        assert_eq!(r.expired, None);
    }
}
