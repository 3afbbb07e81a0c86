//! MySQL packet framing and the encodings packets are built from.
//!
//! A packet is a 3-byte little-endian payload length, a 1-byte sequence id and the
//! payload. Payloads of 16 MiB − 1 or more are split into 0xFFFFFF-byte chunks, the last
//! one shorter — and an exact multiple ends with an empty packet. [`PacketReader`]
//! reassembles them (refusing anything over `max_allowed_packet`); [`PacketWriter`]
//! builds packets in place in one reused buffer and splits when needed, so a whole
//! response leaves in one `write`.

use std::io::{self, Read, Write};

pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// Buffers larger than this are given back after the packet that needed them, so a
/// connection that once sent or received a 50 MiB packet does not hold 50 MiB while it
/// idles (MySQL shrinks its net buffer back to net_buffer_length the same way).
pub const KEEP_BUFFER: usize = 256 << 10;

/// The size a connection's buffers start at and return to (MySQL's `net_buffer_length`):
/// an idle connection holds this much per direction, not what its largest response
/// needed.
pub const NET_BUFFER: usize = 16 << 10;

/// Buffers up to this size are kept between commands (a sysbench range's response fits);
/// larger ones go back to [`NET_BUFFER`] after the response that needed them.
pub const KEEP_IDLE: usize = 64 << 10;

/// Reads packets from a stream through a reused buffer.
pub struct PacketReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    payload: Vec<u8>,
}

/// Why a read produced no packet.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection (or the read failed).
    Closed,
    /// The packet exceeds max_allowed_packet; the sequence id of its first chunk.
    TooLarge(u8),
}

impl PacketReader {
    pub fn new() -> PacketReader {
        PacketReader {
            buf: vec![0; NET_BUFFER],
            start: 0,
            end: 0,
            payload: Vec::new(),
        }
    }

    fn fill(&mut self, r: &mut impl Read, need: usize) -> io::Result<()> {
        while self.end - self.start < need {
            if self.start > 0 && self.buf.len() - self.start < need {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
            let n = r.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.end += n;
        }
        Ok(())
    }

    /// Bytes received and not yet returned in a packet (a pipelining client's next
    /// command).
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Hands over the bytes received beyond the last packet: after an SSLRequest they
    /// are the start of the client's TLS handshake, which the TLS layer must read.
    pub fn take_buffered(&mut self) -> Vec<u8> {
        let rest = self.buf[self.start..self.end].to_vec();
        self.start = 0;
        self.end = 0;
        rest
    }

    /// Reads one packet and hands its payload over; give it back with [`recycle`] so
    /// the next packet reuses the allocation.
    ///
    /// [`recycle`]: PacketReader::recycle
    pub fn read_owned(
        &mut self,
        r: &mut impl Read,
        max: usize,
    ) -> Result<(u8, Vec<u8>), ReadError> {
        let (seq, _) = self.read(r, max)?;
        Ok((seq, std::mem::take(&mut self.payload)))
    }

    /// Takes back a payload from [`read_owned`] for reuse, unless it is large.
    ///
    /// [`read_owned`]: PacketReader::read_owned
    pub fn recycle(&mut self, mut payload: Vec<u8>) {
        if payload.capacity() <= KEEP_IDLE {
            payload.clear();
            self.payload = payload;
        }
    }

    /// Reads one logical packet; returns its last sequence id and its payload.
    pub fn read(&mut self, r: &mut impl Read, max: usize) -> Result<(u8, &[u8]), ReadError> {
        if self.payload.capacity() > KEEP_IDLE {
            self.payload = Vec::new();
        }
        self.payload.clear();
        let mut first_seq = None;
        loop {
            self.fill(r, 4).map_err(|_| ReadError::Closed)?;
            let h = &self.buf[self.start..self.start + 4];
            let len = h[0] as usize | (h[1] as usize) << 8 | (h[2] as usize) << 16;
            let seq = h[3];
            self.start += 4;
            let first = *first_seq.get_or_insert(seq);
            if self.payload.len() + len > max {
                return Err(ReadError::TooLarge(first));
            }
            // Copy the chunk out in pieces, so a big chunk does not need a big buffer;
            // room for exactly the chunk (the size is checked against max above), not
            // the doubling growth would give.
            self.payload.reserve_exact(len);
            let mut left = len;
            while left > 0 {
                if self.end == self.start {
                    self.start = 0;
                    self.end = 0;
                    self.fill(r, 1).map_err(|_| ReadError::Closed)?;
                }
                let take = left.min(self.end - self.start);
                self.payload
                    .extend_from_slice(&self.buf[self.start..self.start + take]);
                self.start += take;
                left -= take;
            }
            if len < MAX_CHUNK {
                return Ok((seq, &self.payload));
            }
        }
    }
}

impl Default for PacketReader {
    fn default() -> Self {
        Self::new()
    }
}

/// Builds outgoing packets in one buffer.
pub struct PacketWriter {
    pub buf: Vec<u8>,
    pub seq: u8,
    open: Option<usize>,
    /// A send failed (the peer is gone, or did not read within net_write_timeout):
    /// every later send fails too, so the connection ends.
    failed: bool,
}

impl PacketWriter {
    pub fn new() -> PacketWriter {
        PacketWriter::with_capacity(NET_BUFFER)
    }

    /// A writer for a few small packets (refusing a connection).
    pub fn with_capacity(n: usize) -> PacketWriter {
        PacketWriter {
            buf: Vec::with_capacity(n),
            seq: 0,
            open: None,
            failed: false,
        }
    }

    /// Starts a packet; its payload is whatever is appended to `buf` until [`end`].
    pub fn begin(&mut self) {
        self.open = Some(self.buf.len());
        self.buf.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Finishes the open packet, splitting it into chunks when it is large.
    pub fn end(&mut self) {
        let Some(start) = self.open.take() else {
            return;
        };
        let len = self.buf.len() - start - 4;
        if len < MAX_CHUNK {
            self.buf[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.buf[start + 3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        let payload = self.buf.split_off(start + 4);
        self.buf.truncate(start);
        let mut chunks = payload.chunks(MAX_CHUNK).peekable();
        let mut last_len = 0;
        while let Some(c) = chunks.next() {
            self.buf
                .extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
            self.buf.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            self.buf.extend_from_slice(c);
            last_len = c.len();
            if chunks.peek().is_none() && last_len == MAX_CHUNK {
                break;
            }
        }
        if last_len == MAX_CHUNK {
            self.buf.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
    }

    /// Sends everything built so far with one write, keeping the buffer (a result
    /// streamed in pieces reuses it).
    pub fn send(&mut self, w: &mut impl Write) -> io::Result<()> {
        if self.failed {
            // Part of the stream may be gone: nothing after it can be framed right.
            self.buf.clear();
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        if !self.buf.is_empty() {
            // flush: a TLS transport sends what it still holds (a no-op on a socket).
            let r = w.write_all(&self.buf).and_then(|()| w.flush());
            self.buf.clear();
            if r.is_err() {
                self.failed = true;
            }
            r?;
        }
        Ok(())
    }

    /// Sends everything built so far with one write; the end of a response, after
    /// which a large buffer is given back.
    pub fn flush(&mut self, w: &mut impl Write) -> io::Result<()> {
        let sent = self.send(w);
        if self.buf.capacity() > KEEP_IDLE {
            self.buf = Vec::with_capacity(NET_BUFFER);
        }
        sent
    }
}

impl Default for PacketWriter {
    fn default() -> Self {
        Self::new()
    }
}

pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

pub fn put_lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// A cursor over a received payload; every read is bounds-checked (None when short).
pub struct Cursor<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    pub fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }

    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }

    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    pub fn lenenc_int(&mut self) -> Option<u64> {
        match self.u8()? {
            0xFC => self.u16().map(u64::from),
            0xFD => {
                let b = self.bytes(3)?;
                Some(b[0] as u64 | (b[1] as u64) << 8 | (b[2] as u64) << 16)
            }
            0xFE => self.u64(),
            0xFB | 0xFF => None,
            v => Some(v as u64),
        }
    }

    pub fn lenenc_str(&mut self) -> Option<&'a [u8]> {
        let n = self.lenenc_int()?;
        self.bytes(usize::try_from(n).ok()?)
    }

    /// A NUL-terminated string (or the rest, when unterminated).
    pub fn cstr(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos.min(self.data.len())..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.data.len();
                rest
            }
        }
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let r = &self.data[self.pos.min(self.data.len())..];
        self.pos = self.data.len();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_packets_split_and_reassemble() {
        for size in [
            0usize,
            10,
            MAX_CHUNK - 1,
            MAX_CHUNK,
            MAX_CHUNK + 5,
            2 * MAX_CHUNK,
        ] {
            let mut w = PacketWriter::new();
            w.begin();
            w.buf.extend(std::iter::repeat_n(7u8, size));
            w.end();
            let mut r = PacketReader::new();
            let mut src = &w.buf[..];
            let (_, p) = r.read(&mut src, 64 << 20).unwrap();
            assert_eq!(p.len(), size);
            assert!(src.is_empty(), "all chunks consumed for {size}");
        }
    }

    #[test]
    fn large_buffers_are_given_back() {
        let mut w = PacketWriter::new();
        w.begin();
        w.buf.extend(std::iter::repeat_n(3u8, 4 << 20));
        w.end();
        let mut wire = Vec::new();
        w.flush(&mut wire).unwrap();
        assert!(
            w.buf.capacity() <= KEEP_BUFFER,
            "writer keeps {}",
            w.buf.capacity()
        );
        let mut r = PacketReader::new();
        let mut src = &wire[..];
        let (_, p) = r.read_owned(&mut src, 64 << 20).unwrap();
        assert_eq!(p.len(), 4 << 20);
        assert!(
            p.capacity() < (4 << 20) + (1 << 20),
            "no doubling: {}",
            p.capacity()
        );
        r.recycle(p);
        assert_eq!(r.payload.capacity(), 0, "a large payload is not kept");
        let small = vec![0u8; 100];
        let mut w = PacketWriter::new();
        w.begin();
        w.buf.extend_from_slice(&small);
        w.end();
        let (_, p) = r.read_owned(&mut &w.buf[..], 64 << 20).unwrap();
        let cap = p.capacity();
        r.recycle(p);
        assert_eq!(r.payload.capacity(), cap, "a small payload is reused");
    }

    #[test]
    fn oversized_and_truncated_input() {
        let mut w = PacketWriter::new();
        w.begin();
        w.buf.extend(std::iter::repeat_n(1u8, 2000));
        w.end();
        let mut r = PacketReader::new();
        assert!(matches!(
            r.read(&mut &w.buf[..], 1000),
            Err(ReadError::TooLarge(0))
        ));
        let mut r = PacketReader::new();
        assert!(matches!(
            r.read(&mut &w.buf[..100], 1 << 20),
            Err(ReadError::Closed)
        ));
        let mut c = Cursor::new(&[0xFC, 1]);
        assert_eq!(c.lenenc_int(), None);
    }
}
