//! The byte stream under one connection: a TCP socket, a unix socket, or TLS over
//! either. Every read and write of a connection goes through [`Transport`], so there is
//! one code path for all three; the plain cases are one `match` arm away from the
//! socket's own `read`/`write`.
//!
//! TLS is driven by hand over the socket (rustls' `ServerConnection`, no extra thread
//! or buffer copy beyond rustls' own): a read pulls TLS records until plaintext is
//! available; a write encrypts and sends everything it accepted before returning, so a
//! write that returns `Ok` has left the process, as with a plain socket. The socket's
//! SO_RCVTIMEO/SO_SNDTIMEO (set through [`Transport::set_read_timeout`] by the
//! connection's timer) therefore bound TLS reads and writes as they bound plain ones.

use rustls::ServerConnection;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected socket, before any TLS.
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_nonblocking(true),
            Socket::Unix(s) => s.set_nonblocking(true),
        }
    }

    pub(crate) fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_read_timeout(d),
            Socket::Unix(s) => s.set_read_timeout(d),
        }
    }

    pub(crate) fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_write_timeout(d),
            Socket::Unix(s) => s.set_write_timeout(d),
        }
    }

    /// A second handle on the same socket, whose only use is to shut it down (KILL
    /// CONNECTION from another thread).
    pub fn shutdown_handle(&self) -> Option<Box<dyn Fn() + Send + Sync>> {
        match self {
            Socket::Tcp(s) => {
                let s = s.try_clone().ok()?;
                Some(Box::new(move || {
                    let _ = s.shutdown(Shutdown::Both);
                }))
            }
            Socket::Unix(s) => {
                let s = s.try_clone().ok()?;
                Some(Box::new(move || {
                    let _ = s.shutdown(Shutdown::Both);
                }))
            }
        }
    }

    /// The client as SHOW PROCESSLIST shows it: `ip:port`, or `localhost` on the unix
    /// socket (as MySQL).
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        match self {
            Socket::Tcp(s) => s.peer_addr().ok(),
            Socket::Unix(_) => None,
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// TLS over a socket, with what the session reports of it (`Ssl_cipher`,
/// `Ssl_version`).
pub struct TlsStream {
    pub(crate) conn: ServerConnection,
    pub(crate) sock: Socket,
}

impl TlsStream {
    /// Sends every TLS record rustls holds (encrypted data, alerts, session tickets).
    fn send_pending(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            if self.conn.write_tls(&mut self.sock)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }
}

/// What a connection reads from and writes to.
pub enum Transport {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
    /// Only while the socket moves into a TLS session (never read or written).
    Gone,
}

impl Transport {
    /// Takes the plain socket out, to wrap it in TLS.
    pub(crate) fn take_socket(&mut self) -> Option<Socket> {
        match std::mem::replace(self, Transport::Gone) {
            Transport::Tcp(s) => Some(Socket::Tcp(s)),
            Transport::Unix(s) => Some(Socket::Unix(s)),
            other => {
                *self = other;
                None
            }
        }
    }

    pub fn from_socket(s: Socket) -> Transport {
        match s {
            Socket::Tcp(s) => Transport::Tcp(s),
            Socket::Unix(s) => Transport::Unix(s),
        }
    }

    pub fn set_read_timeout(&self, d: Duration) -> io::Result<()> {
        match self {
            Transport::Tcp(s) => s.set_read_timeout(Some(d)),
            Transport::Unix(s) => s.set_read_timeout(Some(d)),
            Transport::Tls(t) => t.sock.set_read_timeout(Some(d)),
            Transport::Gone => Ok(()),
        }
    }

    pub fn set_write_timeout(&self, d: Duration) -> io::Result<()> {
        match self {
            Transport::Tcp(s) => s.set_write_timeout(Some(d)),
            Transport::Unix(s) => s.set_write_timeout(Some(d)),
            Transport::Tls(t) => t.sock.set_write_timeout(Some(d)),
            Transport::Gone => Ok(()),
        }
    }

    /// The client's address; None on the unix socket.
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        match self {
            Transport::Tcp(s) => s.peer_addr().ok(),
            Transport::Unix(_) | Transport::Gone => None,
            Transport::Tls(t) => t.sock.peer(),
        }
    }

    pub fn shutdown_handle(&self) -> Option<Box<dyn Fn() + Send + Sync>> {
        match self {
            Transport::Tcp(s) => {
                let s = s.try_clone().ok()?;
                Some(Box::new(move || {
                    let _ = s.shutdown(Shutdown::Both);
                }))
            }
            Transport::Unix(s) => {
                let s = s.try_clone().ok()?;
                Some(Box::new(move || {
                    let _ = s.shutdown(Shutdown::Both);
                }))
            }
            Transport::Tls(t) => t.sock.shutdown_handle(),
            Transport::Gone => None,
        }
    }

    /// Whether `require_secure_transport` accepts this connection: TLS, or the unix
    /// socket (which never leaves the machine), as MySQL.
    pub fn is_secure(&self) -> bool {
        match self {
            Transport::Tcp(_) | Transport::Gone => false,
            Transport::Unix(_) => true,
            Transport::Tls(_) => true,
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }
}

impl Read for Transport {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read(buf),
            Transport::Unix(s) => s.read(buf),
            Transport::Tls(t) => t.read(buf),
            Transport::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Write for Transport {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write(buf),
            Transport::Unix(s) => s.write(buf),
            Transport::Tls(t) => t.write(buf),
            Transport::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Tls(t) => t.send_pending(),
            _ => Ok(()),
        }
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // No plaintext yet: bring in more records (a socket timeout ends this read
            // with WouldBlock/TimedOut, and the partial record stays in rustls).
            if self.conn.read_tls(&mut self.sock)? == 0 {
                return Ok(0);
            }
            let state = self
                .conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
            // An alert for the client (after a protocol error too) goes out first.
            let _ = self.send_pending();
            state?;
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.conn.writer().write(buf)?;
        // Everything accepted leaves now; an error here ends the connection (the
        // packet writer never retries after one), so no byte is sent twice.
        self.send_pending()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_pending()
    }
}
