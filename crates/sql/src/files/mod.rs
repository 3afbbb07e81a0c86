//! Files a statement reads or writes on the server's host: `SELECT … INTO OUTFILE /
//! DUMPFILE`, `LOAD DATA [LOCAL] INFILE` and `LOAD_FILE()`.
//!
//! - [`FileFormat`]: the FIELDS / LINES options, and MySQL's rules for writing a row
//!   with them ([`FileFormat::write_row`]) and reading rows back ([`RowReader`], which
//!   streams: it holds one row and a read buffer, never the file).
//! - [`resolve`]: where a named file is, and whether `secure_file_priv` lets a
//!   statement touch it (1290 otherwise); the FILE privilege is the session's check.
//! - [`clauses`]: the statement texts, which sqlparser does not read.

pub mod clauses;

use std::io::Read;
use std::path::{Path, PathBuf};
use strata_types::output::FieldType;
use strata_types::{Error, Result, Value};

/// FIELDS TERMINATED BY / [OPTIONALLY] ENCLOSED BY / ESCAPED BY and LINES STARTING BY
/// / TERMINATED BY, as bytes. An empty `enclosed` or `escaped` means none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFormat {
    pub field_term: Vec<u8>,
    pub enclosed: Vec<u8>,
    pub optionally: bool,
    pub escaped: Vec<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for FileFormat {
    /// MySQL's defaults: tab-separated, backslash escapes, newline-terminated.
    fn default() -> Self {
        FileFormat {
            field_term: b"\t".to_vec(),
            enclosed: Vec::new(),
            optionally: false,
            escaped: b"\\".to_vec(),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// Whether MySQL counts a column of this type as a string (STRING_RESULT), which
/// `OPTIONALLY ENCLOSED BY` encloses: character and binary strings, ENUM/SET, JSON and
/// the temporal types; not numbers, YEAR or BIT.
pub fn is_string_column(ft: FieldType) -> bool {
    !matches!(
        ft,
        FieldType::Decimal
            | FieldType::NewDecimal
            | FieldType::Tiny
            | FieldType::Short
            | FieldType::Long
            | FieldType::Int24
            | FieldType::LongLong
            | FieldType::Float
            | FieldType::Double
            | FieldType::Year
            | FieldType::Bit
            | FieldType::Null
    )
}

impl FileFormat {
    /// MySQL refuses to read or write fixed-size rows (both FIELDS TERMINATED BY and
    /// ENCLOSED BY empty) only for BLOBs; Strata does not write them at all (1235), and
    /// separators longer than one byte for ENCLOSED/ESCAPED are 1083, as in MySQL.
    pub fn check(&self) -> Result<()> {
        if self.enclosed.len() > 1 || self.escaped.len() > 1 {
            return Err(Error::WrongFieldTerminators);
        }
        if self.field_term.is_empty() && self.enclosed.is_empty() {
            return Err(Error::NotSupported(
                "fixed-size rows (FIELDS TERMINATED BY '' ENCLOSED BY '')".into(),
            ));
        }
        Ok(())
    }

    fn escape_char(&self) -> Option<u8> {
        self.escaped.first().copied()
    }

    fn enclose_char(&self) -> Option<u8> {
        self.enclosed.first().copied()
    }

    /// Appends one row as `SELECT … INTO OUTFILE` writes it. `types` are the result
    /// columns' types and decimals (they decide OPTIONALLY's enclosing and how values
    /// print).
    ///
    /// MySQL's rules (`Query_result_export::send_data`): NULL is `\N` (escape + N), or
    /// the word `NULL` without an escape character, never enclosed; inside a value the
    /// escape character writes itself before the escape character, the enclosing
    /// character (in an enclosed field) or else the first byte of the field terminator,
    /// and the first byte of the line terminator; a NUL byte is written as escape + `0`.
    pub fn write_row(&self, row: &[Value], types: &[(FieldType, u8)], out: &mut Vec<u8>) {
        let esc = self.escape_char();
        let enc = self.enclose_char();
        let field_first = self.field_term.first().copied();
        let line_first = self.line_term.first().copied();
        let mut text = Vec::new();
        out.extend_from_slice(&self.line_start);
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.field_term);
            }
            let (ft, decimals) = match types.get(i) {
                Some(&(ft, d)) => (Some(ft), d),
                None => (None, strata_types::output::NOT_FIXED_DECIMALS),
            };
            if v.is_null() {
                match esc {
                    Some(e) => out.extend_from_slice(&[e, b'N']),
                    None => out.extend_from_slice(b"NULL"),
                }
                continue;
            }
            text.clear();
            strata_types::output::write_text_for(v, ft, decimals, &mut text);
            let enclose = match enc {
                Some(_) if !self.optionally => enc,
                Some(_) if ft.is_some_and(is_string_column) => enc,
                _ => None,
            };
            if let Some(c) = enclose {
                out.push(c);
            }
            match esc {
                None => out.extend_from_slice(&text),
                Some(e) => {
                    for &b in &text {
                        let special = b == e
                            || b == 0
                            || Some(b) == line_first
                            || match enclose {
                                Some(c) => b == c,
                                None => Some(b) == field_first,
                            };
                        if special {
                            out.push(e);
                            out.push(if b == 0 { b'0' } else { b });
                        } else {
                            out.push(b);
                        }
                    }
                }
            }
            if let Some(c) = enclose {
                out.push(c);
            }
        }
        out.extend_from_slice(&self.line_term);
    }
}

/// What a LOAD DATA field that is NULL, or missing, leaves in a NOT NULL column when
/// the statement goes on with a warning: the type's zero, as INSERT's implicit default.
pub fn implicit_default(col: &strata_types::ColumnDef) -> Value {
    crate::statements::dml::implicit_default(col)
}

/// One field as read from a file: its bytes, or None for NULL.
pub type Field = Option<Vec<u8>>;

/// Reads rows from a file (or a client's LOCAL stream) with a [`FileFormat`], holding
/// a fixed read buffer and the row being read.
pub struct RowReader<R: Read> {
    src: R,
    fmt: FileFormat,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
}

/// Read in pieces of this size.
const CHUNK: usize = 64 << 10;

/// MySQL's escape sequences on input: `\0 \b \n \r \t \Z`; any other escaped byte is
/// itself (`\N` is NULL, handled by the reader).
fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 0x1a,
        other => other,
    }
}

impl<R: Read> RowReader<R> {
    pub fn new(src: R, fmt: FileFormat) -> RowReader<R> {
        RowReader {
            src,
            fmt,
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
        }
    }

    /// Makes at least `n` bytes available unless the input ends first; returns how
    /// many are.
    fn want(&mut self, n: usize) -> Result<usize> {
        while self.end - self.pos < n && !self.eof {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            if self.buf.len() < n {
                self.buf.resize(n, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::Io(format!("reading the data file: {e}"))),
            }
        }
        Ok(self.end - self.pos)
    }

    fn at_end(&mut self) -> Result<bool> {
        Ok(self.want(1)? == 0)
    }

    fn next_byte(&mut self) -> Result<Option<u8>> {
        if self.want(1)? == 0 {
            return Ok(None);
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(b))
    }

    fn peek(&mut self) -> Result<Option<u8>> {
        if self.want(1)? == 0 {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    /// Consumes `pat` when the input continues with it.
    fn eat(&mut self, pat: &[u8]) -> Result<bool> {
        if pat.is_empty() || self.want(pat.len())? < pat.len() {
            return Ok(false);
        }
        if &self.buf[self.pos..self.pos + pat.len()] == pat {
            self.pos += pat.len();
            return Ok(true);
        }
        Ok(false)
    }

    /// Skips one line (IGNORE n LINES): up to and including the line terminator.
    /// False at the end of the input.
    pub fn skip_line(&mut self) -> Result<bool> {
        if self.at_end()? {
            return Ok(false);
        }
        let term = self.fmt.line_term.clone();
        loop {
            if self.eat(&term)? {
                return Ok(true);
            }
            if self.next_byte()?.is_none() {
                return Ok(true);
            }
        }
    }

    /// The next row's fields, or None at the end of the input. A line without the
    /// LINES STARTING BY prefix is skipped, as MySQL does; an empty line is one empty
    /// field.
    pub fn read_row(&mut self) -> Result<Option<Vec<Field>>> {
        if self.at_end()? {
            return Ok(None);
        }
        if !self.fmt.line_start.is_empty() {
            let start = self.fmt.line_start.clone();
            loop {
                if self.eat(&start)? {
                    break;
                }
                if self.next_byte()?.is_none() {
                    return Ok(None);
                }
            }
        }
        let mut fields = Vec::new();
        loop {
            let (f, line_ended) = self.read_field()?;
            fields.push(f);
            if line_ended {
                return Ok(Some(fields));
            }
        }
    }

    /// One field; true when it ended its line (or the input).
    fn read_field(&mut self) -> Result<(Field, bool)> {
        let esc = self.fmt.escaped.first().copied();
        let enc = self.fmt.enclosed.first().copied();
        let field_term = std::mem::take(&mut self.fmt.field_term);
        let line_term = std::mem::take(&mut self.fmt.line_term);
        let r = self.read_field_with(esc, enc, &field_term, &line_term);
        self.fmt.field_term = field_term;
        self.fmt.line_term = line_term;
        r
    }

    fn read_field_with(
        &mut self,
        esc: Option<u8>,
        enc: Option<u8>,
        field_term: &[u8],
        line_term: &[u8],
    ) -> Result<(Field, bool)> {
        let mut val = Vec::new();
        if let Some(q) = enc {
            if self.peek()? == Some(q) {
                self.pos += 1;
                loop {
                    let Some(b) = self.next_byte()? else {
                        return Ok((Some(val), true));
                    };
                    if Some(b) == esc {
                        match self.next_byte()? {
                            Some(c) => val.push(unescape(c)),
                            None => val.push(b),
                        }
                        continue;
                    }
                    if b == q {
                        if self.peek()? == Some(q) {
                            // A doubled enclosing character is one of it.
                            self.pos += 1;
                            val.push(q);
                            continue;
                        }
                        if self.at_end()? {
                            return Ok((Some(val), true));
                        }
                        if self.eat(field_term)? {
                            return Ok((Some(val), false));
                        }
                        if self.eat(line_term)? {
                            return Ok((Some(val), true));
                        }
                        // Not followed by a terminator: an ordinary byte.
                        val.push(b);
                        continue;
                    }
                    val.push(b);
                }
            }
        }
        // An unenclosed field: `\N` alone is NULL, and with ENCLOSED BY set so is the
        // bare word NULL.
        // `\N` followed by more is an escaped N.
        let mut null_marker = false;
        let ended = loop {
            if self.at_end()? {
                break true;
            }
            if self.eat(field_term)? {
                break false;
            }
            if self.eat(line_term)? {
                break true;
            }
            let Some(b) = self.next_byte()? else {
                break true;
            };
            if null_marker {
                val.push(b'N');
                null_marker = false;
            }
            if Some(b) == esc {
                match self.next_byte()? {
                    Some(b'N') if val.is_empty() => null_marker = true,
                    Some(c) => val.push(unescape(c)),
                    None => val.push(b),
                }
                continue;
            }
            val.push(b);
        };
        if null_marker {
            return Ok((None, ended));
        }
        if enc.is_some() && val == b"NULL" {
            return Ok((None, ended));
        }
        Ok((Some(val), ended))
    }
}

/// Where a statement's file `name` is: an absolute path as given; a relative one
/// under the data directory (a bare name in the default database's directory), as
/// MySQL resolves them. Then `secure_file_priv`: NULL refuses every file, `''` allows
/// any, a directory allows files inside it (after symlinks are resolved) — 1290
/// otherwise. `exists` says whether the file must exist (read) or must not (write).
pub fn resolve(
    name: &str,
    secure_file_priv: &Value,
    datadir: &Path,
    db_dir: Option<&str>,
) -> Result<PathBuf> {
    if name.contains('\0') {
        return Err(Error::SecureFilePriv);
    }
    let given = Path::new(name);
    let path = if given.is_absolute() {
        given.to_path_buf()
    } else if given.components().count() == 1 {
        match db_dir {
            Some(d) => datadir.join(d).join(given),
            None => datadir.join(given),
        }
    } else {
        datadir.join(given)
    };
    if secure_file_priv.is_null() {
        return Err(Error::SecureFilePriv);
    }
    let allowed = secure_file_priv.to_text();
    if allowed.is_empty() {
        return Ok(path);
    }
    let dir = std::fs::canonicalize(&allowed).map_err(|_| Error::SecureFilePriv)?;
    // The file may not exist yet (OUTFILE): its directory must resolve inside.
    let real = match std::fs::canonicalize(&path) {
        Ok(p) => p,
        Err(_) => {
            let parent = path.parent().ok_or(Error::SecureFilePriv)?;
            let file = path.file_name().ok_or(Error::SecureFilePriv)?;
            std::fs::canonicalize(parent)
                .map_err(|_| Error::SecureFilePriv)?
                .join(file)
        }
    };
    if real.starts_with(&dir) {
        Ok(real)
    } else {
        Err(Error::SecureFilePriv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt() -> FileFormat {
        FileFormat::default()
    }

    fn written(f: &FileFormat, row: &[Value], types: &[FieldType]) -> Vec<u8> {
        let types: Vec<_> = types
            .iter()
            .map(|&t| (t, strata_types::output::NOT_FIXED_DECIMALS))
            .collect();
        let mut out = Vec::new();
        f.write_row(row, &types, &mut out);
        out
    }

    fn read_all(f: &FileFormat, data: &[u8]) -> Vec<Vec<Field>> {
        let mut r = RowReader::new(data, f.clone());
        let mut rows = Vec::new();
        while let Some(row) = r.read_row().unwrap() {
            rows.push(row);
        }
        rows
    }

    #[test]
    fn default_format_escapes_terminators_nul_and_null() {
        let t = [FieldType::VarString, FieldType::Long, FieldType::VarString];
        let row = [
            Value::Bytes(b"a\tb\nc\\d\0e".to_vec()),
            Value::Int(5),
            Value::Null,
        ];
        let out = written(&fmt(), &row, &t);
        assert_eq!(out, b"a\\\tb\\\nc\\\\d\\0e\t5\t\\N\n".to_vec());
        // And back.
        let rows = read_all(&fmt(), &out);
        assert_eq!(
            rows,
            vec![vec![
                Some(b"a\tb\nc\\d\0e".to_vec()),
                Some(b"5".to_vec()),
                None
            ]]
        );
    }

    #[test]
    fn optionally_enclosed_csv() {
        let f = FileFormat {
            field_term: b",".to_vec(),
            enclosed: b"\"".to_vec(),
            optionally: true,
            ..FileFormat::default()
        };
        let t = [FieldType::VarString, FieldType::Long, FieldType::Date];
        let row = [
            Value::Bytes(b"say \"hi\", ok".to_vec()),
            Value::Int(-3),
            Value::Null,
        ];
        let out = written(&f, &row, &t);
        assert_eq!(out, b"\"say \\\"hi\\\", ok\",-3,\\N\n".to_vec());
        let rows = read_all(&f, &out);
        assert_eq!(
            rows,
            vec![vec![
                Some(b"say \"hi\", ok".to_vec()),
                Some(b"-3".to_vec()),
                None
            ]]
        );
        // Doubled quotes, the bare word NULL, a quoted "NULL", CRLF lines.
        let f2 = FileFormat {
            line_term: b"\r\n".to_vec(),
            ..f
        };
        let rows = read_all(&f2, b"\"a\"\"b\",NULL,\"NULL\"\r\nx,,\r\n");
        assert_eq!(
            rows,
            vec![
                vec![Some(b"a\"b".to_vec()), None, Some(b"NULL".to_vec())],
                vec![Some(b"x".to_vec()), Some(vec![]), Some(vec![])],
            ]
        );
    }

    #[test]
    fn no_escape_writes_null_word() {
        let f = FileFormat {
            escaped: vec![],
            ..FileFormat::default()
        };
        let out = written(&f, &[Value::Null, Value::Bytes(b"a\tb".to_vec())], &[]);
        assert_eq!(out, b"NULL\ta\tb\n".to_vec());
    }

    #[test]
    fn line_prefix_empty_lines_and_skipping() {
        let f = FileFormat {
            line_start: b"xxx".to_vec(),
            field_term: b",".to_vec(),
            ..FileFormat::default()
        };
        let rows = read_all(&f, b"xxx1,a\nno prefix here\nskipped xxx2,b\n");
        assert_eq!(
            rows,
            vec![
                vec![Some(b"1".to_vec()), Some(b"a".to_vec())],
                vec![Some(b"2".to_vec()), Some(b"b".to_vec())],
            ]
        );
        let rows = read_all(&fmt(), b"a\n\nb");
        assert_eq!(
            rows,
            vec![
                vec![Some(b"a".to_vec())],
                vec![Some(vec![])],
                vec![Some(b"b".to_vec())]
            ]
        );
        let mut r = RowReader::new(&b"h1\th2\n1\t2\n"[..], fmt());
        assert!(r.skip_line().unwrap());
        assert_eq!(
            r.read_row().unwrap(),
            Some(vec![Some(b"1".to_vec()), Some(b"2".to_vec())])
        );
        assert_eq!(r.read_row().unwrap(), None);
    }

    #[test]
    fn rows_longer_than_the_buffer_stream() {
        let big = vec![b'x'; 3 * CHUNK + 7];
        let mut data = big.clone();
        data.extend_from_slice(b"\t\\N\n");
        let rows = read_all(&fmt(), &data);
        assert_eq!(rows, vec![vec![Some(big), None]]);
    }

    #[test]
    fn secure_file_priv_confines_files() {
        let dir = std::env::temp_dir().join(format!("strata-sfp-{}", std::process::id()));
        let inside = dir.join("in");
        std::fs::create_dir_all(&inside).unwrap();
        let allowed = Value::str(&inside.display().to_string());
        let ok = resolve(
            &inside.join("f.txt").display().to_string(),
            &allowed,
            &dir,
            None,
        );
        assert!(ok.is_ok());
        let escape = inside.join("..").join("f.txt").display().to_string();
        assert_eq!(
            resolve(&escape, &allowed, &dir, None).unwrap_err().code(),
            1290
        );
        assert_eq!(
            resolve("/etc/passwd", &allowed, &dir, None)
                .unwrap_err()
                .code(),
            1290
        );
        assert_eq!(
            resolve("/tmp/x", &Value::Null, &dir, None)
                .unwrap_err()
                .code(),
            1290
        );
        assert!(resolve("/tmp/x", &Value::str(""), &dir, None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
