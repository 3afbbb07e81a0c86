//! The statements that move rows between tables and files: `SELECT … INTO OUTFILE /
//! DUMPFILE / @var` and `LOAD DATA [LOCAL] INFILE`. The SQL layer's `files` module
//! parses them and holds the formats; this drives them through the session's ordinary
//! paths — the SELECT without its INTO clause runs as any SELECT into a sink that
//! writes the file, and each row read from a file goes through the bound INSERT
//! (strict mode, IGNORE/REPLACE, triggers, foreign keys and the binary log included),
//! all in the statement's one transaction.

use crate::{Session, Txn};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use strata_sql::files::clauses::{LoadData, LoadTarget, OnDuplicate, SelectInto};
use strata_sql::files::{FileFormat, RowReader};
use strata_types::output::CollectedOutput;
use strata_types::{ColumnMeta, EndInfo, Error, FieldType, OkInfo, QueryOutput, Result, Value};

/// MySQL's 1045 for a statement that needs the FILE privilege the account lacks.
fn file_denied(s: &Session) -> Error {
    Error::AccessDenied {
        user: s.identity.user.clone(),
        host: s.identity.client_host.clone(),
        using_password: true,
    }
}

/// An OS error writing `path`, in MySQL's form (`OS errno 28 - No space left …`).
fn write_error(path: &str, e: &std::io::Error) -> Error {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    Error::FileWrite {
        path: path.to_string(),
        err: format!("OS errno {} - {text}", e.raw_os_error().unwrap_or(0)),
    }
}

/// Where a SELECT's rows go: the file, written as they arrive (one row buffered).
struct FileSink {
    file: std::io::BufWriter<std::fs::File>,
    path: String,
    /// None: DUMPFILE (one row, its values' bytes back to back).
    format: Option<FileFormat>,
    /// Each result column's type and decimals (how its values print).
    types: Vec<(FieldType, u8)>,
    rows: u64,
    buf: Vec<u8>,
}

impl QueryOutput for FileSink {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<()> {
        self.types = cols.iter().map(|c| (c.field_type, c.decimals)).collect();
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.buf.clear();
        match &self.format {
            Some(f) => f.write_row(row, &self.types, &mut self.buf),
            None => {
                if self.rows > 0 {
                    return Err(Error::TooManyRows);
                }
                for (i, v) in row.iter().enumerate() {
                    if !v.is_null() {
                        let (ft, decimals) = match self.types.get(i) {
                            Some(&(ft, d)) => (Some(ft), d),
                            None => (None, strata_types::output::NOT_FIXED_DECIMALS),
                        };
                        strata_types::output::write_text_for(v, ft, decimals, &mut self.buf);
                    }
                }
            }
        }
        self.file
            .write_all(&self.buf)
            .map_err(|e| write_error(&self.path, &e))?;
        self.rows += 1;
        Ok(())
    }
    fn end(&mut self, _: &EndInfo) -> Result<()> {
        Ok(())
    }
    fn ok(&mut self, _: &OkInfo) -> Result<()> {
        Ok(())
    }
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl Session {
    /// 1045 unless the account holds FILE (always held without access control).
    fn need_file_privilege(&mut self) -> Result<()> {
        match self.effective() {
            Some(eff) if !eff.has_global(strata_types::privilege::Privs::FILE) => {
                Err(file_denied(self))
            }
            _ => Ok(()),
        }
    }

    /// The file a statement names, checked against `secure_file_priv`.
    fn statement_file(&self, name: &str) -> Result<std::path::PathBuf> {
        let allowed = self.server.globals.get("secure_file_priv");
        let db_dir = self
            .current_db
            .as_deref()
            .map(strata_sql::catalog::file_name);
        strata_sql::files::resolve(
            name,
            &allowed,
            &self.server.config.datadir,
            db_dir.as_deref(),
        )
    }

    /// `SELECT … INTO OUTFILE | DUMPFILE | @var, …`: `select` is the statement without
    /// its INTO clause.
    pub(crate) fn select_into(
        &mut self,
        select: &str,
        into: SelectInto,
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let (name, format) = match into {
            SelectInto::Variables(vars) => return self.select_into_variables(select, &vars, out),
            SelectInto::Outfile {
                file,
                charset,
                format,
            } => {
                check_charset(charset.as_deref())?;
                (file, Some(format))
            }
            SelectInto::Dumpfile(file) => (file, None),
        };
        self.need_file_privilege()?;
        let path = self.statement_file(&name)?;
        let shown = path.display().to_string();
        // create_new: an existing file (or a symlink planted in its place) is 1086,
        // never overwritten or followed.
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o640)
                .open(&path)
        }
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Error::FileExists(name.clone()),
            _ => write_error(&shown, &e),
        })?;
        let mut sink = FileSink {
            file: std::io::BufWriter::with_capacity(64 << 10, file),
            path: shown.clone(),
            format,
            types: Vec::new(),
            rows: 0,
            buf: Vec::new(),
        };
        let r = self.run(select, &mut sink).and_then(|()| {
            sink.file.flush().map_err(|e| write_error(&shown, &e))?;
            Ok(sink.rows)
        });
        match r {
            Ok(rows) => {
                self.statement_rows = rows as i64;
                out.ok(&OkInfo {
                    affected_rows: rows,
                    warnings: self.warning_count(),
                    ..OkInfo::default()
                })
            }
            Err(e) => {
                // As MySQL: a statement that failed leaves no file behind.
                drop(sink);
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }

    fn select_into_variables(
        &mut self,
        select: &str,
        vars: &[String],
        out: &mut dyn QueryOutput,
    ) -> Result<()> {
        let mut rows = CollectedOutput::default();
        self.run(select, &mut rows)?;
        if rows.columns.len() != vars.len() {
            return Err(Error::IntoColumnCount);
        }
        match rows.rows.len() {
            0 => {
                self.note_warning(1329, Error::NoData.to_string());
                self.statement_rows = 0;
            }
            1 => {
                let row = rows.rows[0].clone();
                let mut uv = self.user_vars.lock();
                for (name, v) in vars.iter().zip(row) {
                    uv.insert(name.clone(), v);
                }
                self.statement_rows = 1;
            }
            _ => return Err(Error::TooManyRows),
        }
        out.ok(&OkInfo {
            affected_rows: rows.rows.len() as u64,
            warnings: self.warning_count(),
            ..OkInfo::default()
        })
    }

    /// `LOAD DATA [LOCAL] INFILE`.
    pub(crate) fn load_data(&mut self, sql: &str, out: &mut dyn QueryOutput) -> Result<()> {
        let l = strata_sql::files::clauses::parse_load(sql)?;
        if l.local && self.server.globals.get("local_infile").to_i64() != Some(1) {
            return Err(Error::LocalInfileDisabled);
        }
        let latin1 = check_charset(l.charset.as_deref())?;
        let db = match &l.db {
            Some(d) => d.clone(),
            None => self.current_db.clone().ok_or(Error::NoDatabaseSelected)?,
        };
        // A temporary table of the name is the one the INSERT below writes.
        let def = match self.temp.get(&db, &l.table) {
            Some(t) => t.def().clone(),
            None => self.server.catalog.table(&db, &l.table)?.def().clone(),
        };
        // Without a column list, the fields fill the visible columns (MySQL's rule).
        let targets: Vec<LoadTarget> = l.targets.clone().unwrap_or_else(|| {
            def.columns
                .iter()
                .filter(|c| !c.invisible)
                .map(|c| LoadTarget::Column(c.name.clone()))
                .collect()
        });
        // LOCAL cannot stop the client's upload, so errors become warnings as with
        // IGNORE (MySQL's rule), unless REPLACE was asked for.
        let dup = match l.on_duplicate {
            OnDuplicate::Error if l.local => OnDuplicate::Ignore,
            d => d,
        };
        let insert = insert_text(&db, &l, &targets, dup);
        let (text, nparams) = strata_sql::text::number_placeholders(&insert);
        let mut stmts = strata_sql::parse(&text)?;
        if stmts.len() != 1 {
            return Err(Error::Syntax(sql.chars().take(80).collect()));
        }
        let p = {
            let now = self.now();
            let env = crate::SessionEnv::new(self, now);
            let scratch = Txn::default();
            let cx = self.exec_ctx(&env, &scratch)?;
            strata_sql::prepare(stmts.remove(0), &text, nparams, &cx)?
        };
        let p = self.lock_and_bind(&Arc::new(p))?;
        if self.server.acl.enforcing() {
            self.check_privileges(&p)?;
        }
        let source: Box<dyn std::io::Read + '_> = if l.local {
            out.local_infile(&l.file)?
                .ok_or(Error::LocalInfileDisabled)?
        } else {
            self.need_file_privilege()?;
            let path = self.statement_file(&l.file)?;
            let f = std::fs::File::open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::FileNotFound(path.display().to_string()),
                _ => Error::io(path.display(), e),
            })?;
            Box::new(f)
        };
        let mut reader = RowReader::new(source, l.format.clone());
        for _ in 0..l.ignore_lines {
            if !reader.skip_line()? {
                break;
            }
        }
        // Per target, the column it fills (None: a user variable).
        let columns: Vec<Option<&strata_types::ColumnDef>> = targets
            .iter()
            .map(|t| match t {
                LoadTarget::Column(n) => {
                    def.columns.iter().find(|c| c.name.eq_ignore_ascii_case(n))
                }
                LoadTarget::Variable(_) => None,
            })
            .collect();
        let strict = self.strict_mode && dup != OnDuplicate::Ignore;
        let counts = self.in_transaction(false, |s, txn| {
            let mut c = LoadCounts::default();
            let mut sink = CollectedOutput::default();
            let mut params: Vec<Value> = Vec::with_capacity(nparams);
            let r = (|| {
                while let Some(fields) = reader.read_row()? {
                    txn.check_interrupt()?;
                    c.records += 1;
                    let row_no = c.records;
                    if fields.len() > targets.len() {
                        if strict {
                            return Err(Error::TooManyRecords(row_no));
                        }
                        s.note_warning(1262, Error::TooManyRecords(row_no).to_string());
                    }
                    params.clear();
                    for (k, t) in targets.iter().enumerate() {
                        let col = columns[k];
                        let v = match fields.get(k) {
                            Some(Some(b)) => Value::Bytes(if latin1 {
                                b.iter()
                                    .map(|&x| x as char)
                                    .collect::<String>()
                                    .into_bytes()
                            } else {
                                b.clone()
                            }),
                            Some(None) => Value::Null,
                            None => {
                                // A missing field: one 1261 per target (MySQL's count);
                                // the column keeps a NULL default, else takes its
                                // type's zero.
                                if strict {
                                    return Err(Error::TooFewRecords(row_no));
                                }
                                s.note_warning(1261, Error::TooFewRecords(row_no).to_string());
                                match col {
                                    Some(c)
                                        if (!c.nullable || c.default.is_some())
                                            && !c.auto_increment
                                            && !is_timestamp(c) =>
                                    {
                                        strata_sql::files::implicit_default(c)
                                    }
                                    _ => Value::Null,
                                }
                            }
                        };
                        match t {
                            LoadTarget::Variable(name) => {
                                s.user_vars.lock().insert(name.clone(), v);
                            }
                            LoadTarget::Column(_) => {
                                let v = match col {
                                    Some(col)
                                        if v.is_null()
                                            && !col.nullable
                                            && !col.auto_increment
                                            && !is_timestamp(col) =>
                                    {
                                        let e = Error::NullToNotNull {
                                            column: col.name.clone(),
                                            row: row_no,
                                        };
                                        if strict {
                                            return Err(e);
                                        }
                                        s.note_warning(1263, e.to_string());
                                        strata_sql::files::implicit_default(col)
                                    }
                                    _ => v,
                                };
                                params.push(v);
                            }
                        }
                    }
                    s.rows_before.store(row_no - 1, Ordering::Relaxed);
                    s.execute_plan(&p, &params, txn, &mut sink)?;
                    let a = sink.ok.take().map_or(0, |o| o.affected_rows);
                    c.affected += a;
                    match dup {
                        OnDuplicate::Replace if a > 1 => c.deleted += a - 1,
                        OnDuplicate::Ignore if a == 0 => c.skipped += 1,
                        _ => {}
                    }
                }
                Ok(())
            })();
            s.rows_before.store(0, Ordering::Relaxed);
            r.map(|()| c)
        });
        // The client's stream is read to its end before the reply.
        drop(reader);
        let counts = counts?;
        let warnings = self.warning_count();
        self.statement_rows = counts.affected as i64;
        out.ok(&OkInfo {
            affected_rows: counts.affected,
            warnings,
            info: format!(
                "Records: {}  Deleted: {}  Skipped: {}  Warnings: {}",
                counts.records, counts.deleted, counts.skipped, warnings
            ),
            ..OkInfo::default()
        })
    }
}

fn is_timestamp(c: &strata_types::ColumnDef) -> bool {
    matches!(c.data_type, strata_types::DataType::Timestamp { .. })
}

#[derive(Default)]
struct LoadCounts {
    records: u64,
    deleted: u64,
    skipped: u64,
    affected: u64,
}

/// A file's CHARACTER SET: UTF-8 (and its subsets, and binary) is read as it is,
/// latin1 is converted (true); others are refused rather than misread.
fn check_charset(cs: Option<&str>) -> Result<bool> {
    match cs {
        None | Some("utf8mb4" | "utf8" | "utf8mb3" | "binary" | "ascii") => Ok(false),
        Some("latin1") => Ok(true),
        Some(other) => Err(Error::NotSupported(format!(
            "files in CHARACTER SET {other}"
        ))),
    }
}

/// The INSERT each row of a LOAD DATA goes through: the column targets as
/// parameters, then the SET assignments' expressions.
fn insert_text(db: &str, l: &LoadData, targets: &[LoadTarget], dup: OnDuplicate) -> String {
    let verb = match dup {
        OnDuplicate::Replace => "REPLACE",
        OnDuplicate::Ignore => "INSERT IGNORE",
        OnDuplicate::Error => "INSERT",
    };
    let mut names = Vec::new();
    let mut values = Vec::new();
    for t in targets {
        if let LoadTarget::Column(n) = t {
            names.push(quote(n));
            values.push("?".to_string());
        }
    }
    for (c, e) in &l.assignments {
        names.push(quote(c));
        values.push(e.clone());
    }
    format!(
        "{verb} INTO {}.{} ({}) VALUES ({})",
        quote(db),
        quote(&l.table),
        names.join(", "),
        values.join(", ")
    )
}
