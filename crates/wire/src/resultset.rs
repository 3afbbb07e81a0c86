//! Result sets and the small response packets: column definitions, text-protocol rows
//! (COM_QUERY) and binary-protocol rows (COM_STMT_EXECUTE), OK, EOF and ERR.
//!
//! [`Writer`] is the [`QueryOutput`] the session writes into. It encodes rows straight
//! into the connection's output buffer and holds back each result's terminal packet
//! (OK or EOF) until it knows whether another result follows (multi-statements), since
//! that packet must then carry SERVER_MORE_RESULTS_EXISTS.

use crate::handler::ResultStream;
use crate::packet::{put_lenenc_int, put_lenenc_str, PacketWriter};
use strata_types::{ColumnMeta, EndInfo, FieldType, OkInfo, QueryOutput, Result, Value};

pub const MORE_RESULTS_EXISTS: u16 = 8;

/// The held-back end of a result.
#[derive(Debug, Default)]
pub enum Terminal {
    #[default]
    None,
    Ok(OkInfo),
    Eof(u16),
}

pub fn write_ok(
    w: &mut PacketWriter,
    header: u8,
    affected: u64,
    last_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    w.begin();
    w.buf.push(header);
    put_lenenc_int(&mut w.buf, affected);
    put_lenenc_int(&mut w.buf, last_id);
    w.buf.extend_from_slice(&status.to_le_bytes());
    w.buf.extend_from_slice(&warnings.to_le_bytes());
    if !info.is_empty() {
        // MySQL sends the info text length-prefixed, and clients read it so.
        put_lenenc_str(&mut w.buf, info.as_bytes());
    }
    w.end();
}

pub fn write_eof(w: &mut PacketWriter, warnings: u16, status: u16) {
    w.begin();
    w.buf.push(0xFE);
    w.buf.extend_from_slice(&warnings.to_le_bytes());
    w.buf.extend_from_slice(&status.to_le_bytes());
    w.end();
}

pub fn write_error(w: &mut PacketWriter, code: u16, state: &str, msg: &str) {
    w.begin();
    w.buf.push(0xFF);
    w.buf.extend_from_slice(&code.to_le_bytes());
    w.buf.push(b'#');
    let mut st = [b'H', b'Y', b'0', b'0', b'0'];
    for (d, s) in st.iter_mut().zip(state.bytes()) {
        *d = s;
    }
    w.buf.extend_from_slice(&st);
    w.buf.extend_from_slice(msg.as_bytes());
    w.end();
}

/// An ERR packet before the handshake (connection refused): the client's capabilities
/// are not known yet, so, as MySQL does, no SQLSTATE marker — clients report HY000.
pub fn write_error_pre_handshake(w: &mut PacketWriter, code: u16, msg: &str) {
    w.begin();
    w.buf.push(0xFF);
    w.buf.extend_from_slice(&code.to_le_bytes());
    w.buf.extend_from_slice(msg.as_bytes());
    w.end();
}

/// Writes the end of the last result of a command.
pub fn write_terminal(w: &mut PacketWriter, t: Terminal, status: u16, deprecate_eof: bool) {
    match t {
        Terminal::None => write_ok(w, 0, 0, 0, status, 0, ""),
        Terminal::Ok(i) => write_ok(
            w,
            0,
            i.affected_rows,
            i.last_insert_id,
            status,
            i.warnings,
            &i.info,
        ),
        Terminal::Eof(warn) if deprecate_eof => write_ok(w, 0xFE, 0, 0, status, warn, ""),
        Terminal::Eof(warn) => write_eof(w, warn, status),
    }
}

/// The body of a column-definition packet.
pub fn put_column(b: &mut Vec<u8>, c: &ColumnMeta) {
    put_lenenc_str(b, b"def");
    put_lenenc_str(b, c.schema.as_bytes());
    put_lenenc_str(b, c.table.as_bytes());
    put_lenenc_str(b, c.org_table.as_bytes());
    put_lenenc_str(b, c.name.as_bytes());
    put_lenenc_str(b, c.org_name.as_bytes());
    b.push(0x0c);
    b.extend_from_slice(&c.charset.to_le_bytes());
    b.extend_from_slice(&c.length.to_le_bytes());
    b.push(c.field_type as u8);
    b.extend_from_slice(&c.flags.to_le_bytes());
    b.push(c.decimals);
    b.extend_from_slice(&[0, 0]);
}

pub struct Writer<'a> {
    w: &'a mut PacketWriter,
    deprecate_eof: bool,
    binary: bool,
    status: u16,
    columns: Vec<ColumnMeta>,
    pending: Terminal,
    scratch: Vec<u8>,
    /// The client set CLIENT_FOUND_ROWS: OK packets count rows found, not changed.
    found_rows: bool,
    /// The client takes several results for one command (CLIENT_MULTI_RESULTS, or
    /// CLIENT_PS_MULTI_RESULTS for a prepared statement).
    multi_results: bool,
    /// Where rows go once the buffer holds [`STREAM_AT`] bytes (None: all at the end),
    /// the socket's timer and net_write_timeout.
    sink: Option<(
        &'a mut crate::transport::Transport,
        &'a mut crate::timer::SocketTimer,
        std::time::Duration,
    )>,
    /// LOAD DATA LOCAL: where the client's file arrives (the connection's packet
    /// reader), net_read_timeout and max_allowed_packet. None: the client did not
    /// offer CLIENT_LOCAL_FILES.
    infile: Option<(
        &'a mut crate::packet::PacketReader,
        std::time::Duration,
        usize,
    )>,
}

/// Buffered rows past this size are sent before the result is complete, so a large
/// result needs no buffer of its size (and a client that stops reading is met by
/// net_write_timeout while the statement runs, not after).
pub const STREAM_AT: usize = crate::packet::KEEP_BUFFER;

impl<'a> Writer<'a> {
    pub fn new(
        w: &'a mut PacketWriter,
        deprecate_eof: bool,
        binary: bool,
        status: u16,
    ) -> Writer<'a> {
        Writer {
            w,
            deprecate_eof,
            binary,
            status,
            columns: Vec::new(),
            pending: Terminal::None,
            scratch: Vec::new(),
            found_rows: false,
            multi_results: false,
            sink: None,
            infile: None,
        }
    }

    /// Reports found (matched) rows as affected rows, for a client that asked with
    /// CLIENT_FOUND_ROWS.
    pub fn with_found_rows(mut self, on: bool) -> Self {
        self.found_rows = on;
        self
    }

    /// Lets a CALL send several result sets (the client announced it can read them).
    pub fn with_multi_results(mut self, on: bool) -> Self {
        self.multi_results = on;
        self
    }

    /// Sends complete packets to `stream` whenever the buffer grows past [`STREAM_AT`];
    /// a failed send (the client is gone, or did not read for net_write_timeout) ends
    /// the statement with 1317, as a killed query.
    pub fn streaming_to(
        mut self,
        stream: &'a mut crate::transport::Transport,
        timer: &'a mut crate::timer::SocketTimer,
        net_write: std::time::Duration,
    ) -> Writer<'a> {
        self.sink = Some((stream, timer, net_write));
        self
    }

    /// Lets a LOAD DATA LOCAL statement ask the client for its file (the client
    /// offered CLIENT_LOCAL_FILES); needs [`Writer::streaming_to`].
    pub fn reading_infile_from(
        mut self,
        reader: &'a mut crate::packet::PacketReader,
        net_read: std::time::Duration,
        max_packet: usize,
    ) -> Writer<'a> {
        self.infile = Some((reader, net_read, max_packet));
        self
    }

    /// The held-back terminal of the last result.
    pub fn finish(self) -> Terminal {
        self.pending
    }

    fn text_row(&mut self, row: &[Value]) {
        self.w.begin();
        for (i, v) in row.iter().enumerate() {
            if v.is_null() {
                self.w.buf.push(0xFB);
                continue;
            }
            if let Value::Bytes(b) = v {
                put_lenenc_str(&mut self.w.buf, b);
                continue;
            }
            self.scratch.clear();
            let (ft, decimals) = match self.columns.get(i) {
                Some(c) => (Some(c.field_type), c.decimals),
                None => (None, strata_types::output::NOT_FIXED_DECIMALS),
            };
            strata_types::output::write_text_for(v, ft, decimals, &mut self.scratch);
            put_lenenc_str(&mut self.w.buf, &self.scratch);
        }
        self.w.end();
    }

    fn binary_row(&mut self, row: &[Value]) {
        self.w.begin();
        let b = &mut self.w.buf;
        b.push(0);
        let bitmap_at = b.len();
        let n = row.len();
        b.extend(std::iter::repeat_n(0u8, (n + 7 + 2) / 8));
        for (i, v) in row.iter().enumerate() {
            let ft = self
                .columns
                .get(i)
                .map_or(FieldType::VarString, |c| c.field_type);
            if v.is_null() {
                let bit = i + 2;
                b[bitmap_at + bit / 8] |= 1 << (bit % 8);
                continue;
            }
            put_binary_value(b, v, ft, &mut self.scratch);
        }
        self.w.end();
    }
}

fn int_of(v: &Value) -> i64 {
    match v {
        Value::UInt(u) => *u as i64,
        other => other.to_i64().unwrap_or(0),
    }
}

/// One value in the binary protocol's encoding for its column type.
pub fn put_binary_value(b: &mut Vec<u8>, v: &Value, ft: FieldType, scratch: &mut Vec<u8>) {
    match ft {
        FieldType::Tiny => b.push(int_of(v) as u8),
        FieldType::Short | FieldType::Year => {
            b.extend_from_slice(&(int_of(v) as u16).to_le_bytes())
        }
        FieldType::Long | FieldType::Int24 => {
            b.extend_from_slice(&(int_of(v) as u32).to_le_bytes())
        }
        FieldType::LongLong => b.extend_from_slice(&(int_of(v) as u64).to_le_bytes()),
        FieldType::Float => b.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes()),
        FieldType::Double => b.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
        FieldType::Date | FieldType::DateTime | FieldType::Timestamp => {
            let dt = match v {
                Value::DateTime(d) => Some(*d),
                Value::Bytes(t) => std::str::from_utf8(t)
                    .ok()
                    .and_then(strata_types::DateTime::parse),
                _ => None,
            };
            match dt {
                None => b.push(0),
                Some(d)
                    if ft == FieldType::Date
                        || (d.hour == 0 && d.minute == 0 && d.second == 0 && d.micro == 0) =>
                {
                    b.push(4);
                    b.extend_from_slice(&d.year.to_le_bytes());
                    b.extend_from_slice(&[d.month, d.day]);
                }
                Some(d) if d.micro == 0 => {
                    b.push(7);
                    b.extend_from_slice(&d.year.to_le_bytes());
                    b.extend_from_slice(&[d.month, d.day, d.hour, d.minute, d.second]);
                }
                Some(d) => {
                    b.push(11);
                    b.extend_from_slice(&d.year.to_le_bytes());
                    b.extend_from_slice(&[d.month, d.day, d.hour, d.minute, d.second]);
                    b.extend_from_slice(&d.micro.to_le_bytes());
                }
            }
        }
        FieldType::Time => put_binary_time(b, v),
        _ => {
            if let Value::Bytes(t) = v {
                put_lenenc_str(b, t);
            } else {
                scratch.clear();
                v.write_text(scratch);
                put_lenenc_str(b, scratch);
            }
        }
    }
}

/// A TIME in the binary protocol: length (0, 8 or 12), sign, days, hours, minutes,
/// seconds and microseconds. The executor holds TIME values as their text
/// (`[-]h:mm:ss[.f]`, hours past 23 allowed).
fn put_binary_time(b: &mut Vec<u8>, v: &Value) {
    let text = match v {
        Value::Bytes(t) => String::from_utf8_lossy(t).into_owned(),
        other => other.to_text(),
    };
    let (neg, rest) = match text.trim().strip_prefix('-') {
        Some(r) => (true, r.to_string()),
        None => (false, text.trim().to_string()),
    };
    let (hms, frac) = rest.split_once('.').unwrap_or((&rest, ""));
    let mut parts = hms.split(':').map(|p| p.parse::<u64>().unwrap_or(0));
    let (h, m, s) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    let micro = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(6).collect();
        digits.parse::<u32>().unwrap_or(0) * 10u32.pow(6 - digits.len() as u32)
    };
    if h == 0 && m == 0 && s == 0 && micro == 0 {
        b.push(0);
        return;
    }
    b.push(if micro == 0 { 8 } else { 12 });
    b.push(neg as u8);
    b.extend_from_slice(&((h / 24) as u32).to_le_bytes());
    b.extend_from_slice(&[(h % 24) as u8, m as u8, s as u8]);
    if micro != 0 {
        b.extend_from_slice(&micro.to_le_bytes());
    }
}

/// The column definition to send for `c` in a binary-protocol result. A binary row can
/// only carry NULL in a column declared MYSQL_TYPE_NULL, yet an expression over a
/// parameter may be typed NULL at prepare time and still yield values at execution
/// (`SELECT ? + 1`): such a column is declared VAR_STRING instead, so every value reaches
/// the client as its text rather than being lost.
fn binary_column(c: &ColumnMeta) -> ColumnMeta {
    let mut c = c.clone();
    if c.field_type == FieldType::Null {
        c.field_type = FieldType::VarString;
        c.charset = 45;
        c.flags &= !strata_types::output::flags::BINARY;
    }
    c
}

impl QueryOutput for Writer<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.w.begin();
        put_lenenc_int(&mut self.w.buf, cols.len() as u64);
        self.w.end();
        self.columns.clear();
        self.columns.extend(cols.iter().map(|c| {
            if self.binary {
                binary_column(c)
            } else {
                c.clone()
            }
        }));
        for c in &self.columns {
            self.w.begin();
            put_column(&mut self.w.buf, c);
            self.w.end();
        }
        if !self.deprecate_eof {
            write_eof(self.w, 0, self.status);
        }
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> Result<()> {
        if self.binary {
            self.binary_row(row);
        } else {
            self.text_row(row);
        }
        if let Some((stream, timer, net_write)) = &mut self.sink {
            if self.w.buf.len() >= STREAM_AT {
                let mut out = crate::timer::DeadlineWrite::new(stream, timer, *net_write);
                self.w
                    .send(&mut out)
                    .map_err(|_| strata_types::Error::Interrupted)?;
            }
        }
        Ok(())
    }

    fn end(&mut self, info: &EndInfo) -> Result<()> {
        self.pending = Terminal::Eof(info.warnings);
        Ok(())
    }

    fn ok(&mut self, info: &OkInfo) -> Result<()> {
        let mut info = info.clone();
        if self.found_rows {
            if let Some(found) = info.found_rows {
                info.affected_rows = found;
            }
        }
        self.pending = Terminal::Ok(info);
        Ok(())
    }

    fn takes_more_results(&self) -> bool {
        self.multi_results
    }

    fn next_result_set(&mut self) -> Result<bool> {
        if !self.multi_results {
            return Ok(false);
        }
        ResultStream::next_result(self)?;
        Ok(true)
    }

    /// Sends the LOCAL INFILE request (0xFB and the file name); the client answers
    /// with the file's bytes in packets and an empty packet at its end.
    fn local_infile(&mut self, name: &str) -> Result<Option<Box<dyn std::io::Read + '_>>> {
        let Writer {
            w, sink, infile, ..
        } = self;
        let (Some((reader, net_read, max)), Some((stream, timer, net_write))) =
            (infile.as_mut(), sink.as_mut())
        else {
            return Ok(None);
        };
        w.begin();
        w.buf.push(0xFB);
        w.buf.extend_from_slice(name.as_bytes());
        w.end();
        let mut o = crate::timer::DeadlineWrite::new(stream, timer, *net_write);
        w.send(&mut o)
            .map_err(|_| strata_types::Error::Interrupted)?;
        Ok(Some(Box::new(InfileStream {
            reader,
            stream,
            timer,
            net_read: *net_read,
            max: *max,
            w,
            chunk: Vec::new(),
            pos: 0,
            done: false,
        })))
    }
}

/// The client's file for LOAD DATA LOCAL, packet by packet (one packet in memory).
struct InfileStream<'s> {
    reader: &'s mut crate::packet::PacketReader,
    stream: &'s mut crate::transport::Transport,
    timer: &'s mut crate::timer::SocketTimer,
    net_read: std::time::Duration,
    max: usize,
    w: &'s mut PacketWriter,
    chunk: Vec<u8>,
    pos: usize,
    /// The empty packet that ends the file was read (or the connection failed).
    done: bool,
}

impl std::io::Read for InfileStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.pos < self.chunk.len() {
                let n = buf.len().min(self.chunk.len() - self.pos);
                buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            let mut r = crate::timer::TimedRead::new(
                self.stream,
                self.timer,
                crate::timer::Wait::Packet(self.net_read),
            );
            match self.reader.read_owned(&mut r, self.max) {
                Ok((seq, p)) => {
                    // The reply to the file follows the client's last packet.
                    self.w.seq = seq.wrapping_add(1);
                    let old = std::mem::replace(&mut self.chunk, p);
                    self.reader.recycle(old);
                    self.pos = 0;
                    if self.chunk.is_empty() {
                        self.done = true;
                    }
                }
                Err(_) => {
                    self.done = true;
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the client's LOCAL INFILE stream ended",
                    ));
                }
            }
        }
    }
}

impl Drop for InfileStream<'_> {
    /// A statement that stops early (an error in row 3) still takes the rest of the
    /// file, so the next packet read is the client's next command.
    fn drop(&mut self) {
        let mut scratch = [0u8; 8192];
        while !self.done {
            self.pos = self.chunk.len();
            if std::io::Read::read(self, &mut scratch).is_err() {
                break;
            }
        }
    }
}

impl ResultStream for Writer<'_> {
    fn next_result(&mut self) -> Result<()> {
        let t = std::mem::take(&mut self.pending);
        write_terminal(
            self.w,
            t,
            self.status | MORE_RESULTS_EXISTS,
            self.deprecate_eof,
        );
        self.columns.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_values_follow_column_types() {
        let mut b = Vec::new();
        let mut s = Vec::new();
        put_binary_value(&mut b, &Value::Int(-2), FieldType::LongLong, &mut s);
        assert_eq!(b, (-2i64).to_le_bytes());
        b.clear();
        put_binary_value(&mut b, &Value::Int(3), FieldType::Double, &mut s);
        assert_eq!(b, 3.0f64.to_le_bytes());
        b.clear();
        put_binary_value(&mut b, &Value::str("ab"), FieldType::VarString, &mut s);
        assert_eq!(b, vec![2, b'a', b'b']);
    }

    /// The payloads of the packets in `buf` (4-byte headers stripped).
    fn payloads(mut buf: &[u8]) -> Vec<Vec<u8>> {
        let mut out = vec![];
        while buf.len() >= 4 {
            let n = buf[0] as usize | (buf[1] as usize) << 8 | (buf[2] as usize) << 16;
            out.push(buf[4..4 + n].to_vec());
            buf = &buf[4 + n..];
        }
        out
    }

    #[test]
    fn binary_result_keeps_values_of_null_typed_columns() {
        let mut w = PacketWriter::new();
        let mut out = Writer::new(&mut w, true, true, 2);
        let cols = [
            ColumnMeta::computed("? + 1", FieldType::Null),
            ColumnMeta::computed("n", FieldType::LongLong),
        ];
        out.columns(&cols).unwrap();
        out.row(&[Value::Int(42), Value::Null]).unwrap();
        out.row(&[Value::Null, Value::Int(-1)]).unwrap();
        let p = payloads(&w.buf);
        assert_eq!(p.len(), 5, "count, 2 column definitions, 2 rows");
        // Column 1 is declared VAR_STRING in utf8mb4: type byte after the 0x0c block.
        let def = &p[1];
        let at = def.len() - 6;
        assert_eq!(def[at], FieldType::VarString as u8);
        assert_eq!(u16::from_le_bytes([def[at - 6], def[at - 5]]), 45);
        // Row 1: header, NULL bitmap (column 2 is bit 3), then "42" as a string.
        assert_eq!(p[3], vec![0, 0b1000, 2, b'4', b'2']);
        // Row 2: column 1 NULL (bit 2), column 2 as LONGLONG.
        let mut r2 = vec![0, 0b100];
        r2.extend_from_slice(&(-1i64).to_le_bytes());
        assert_eq!(p[4], r2);
    }
}
