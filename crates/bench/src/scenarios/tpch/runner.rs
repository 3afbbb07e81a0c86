//! Running one TPC-H query on one server with a timeout: once unmeasured (warm), then
//! `repeat` timed runs whose median is kept, with the last run's rows for checking.
//! Each run happens on a worker thread that owns the connection, so the bench can give
//! up on a query after `--query-timeout`: it then asks the server to stop the statement
//! (`KILL QUERY`, where the server has it), abandons the worker and its connection, and
//! opens a new connection for the next query.

use crate::client::{Client, ClientError, Target};
use crate::driver::connect_db;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What running a query gave.
pub enum RunResult {
    /// Median milliseconds of the timed runs and the rows of the last one.
    Rows { ms: f64, rows: Vec<Vec<String>> },
    /// The server refused or failed the statement.
    Error(ClientError),
    /// A run took longer than the timeout (seconds).
    Timeout(f64),
    /// The bench could not reach the server (connecting failed, a worker died).
    Failed(String),
}

/// One server the queries run on, with its connection.
pub struct Side<'a> {
    pub target: &'a Target,
    db: String,
    client: Option<Box<dyn Client>>,
    connection_id: Option<String>,
    /// Queries abandoned after a timeout whose statement may still be running.
    pub abandoned: usize,
}

enum Once {
    Done(f64, Vec<Vec<String>>),
    Error(ClientError),
    Timeout,
    Failed(String),
}

impl<'a> Side<'a> {
    pub fn new(target: &'a Target, db: &str) -> Side<'a> {
        Side {
            target,
            db: db.to_string(),
            client: None,
            connection_id: None,
            abandoned: 0,
        }
    }

    fn client(&mut self) -> Result<Box<dyn Client>, String> {
        if let Some(c) = self.client.take() {
            return Ok(c);
        }
        let mut c = connect_db(self.target, &self.db)?;
        self.connection_id = c.scalar("SELECT CONNECTION_ID()").ok().flatten();
        Ok(c)
    }

    fn once(&mut self, sql: &str, timeout: Duration) -> Once {
        let mut client = match self.client() {
            Ok(c) => c,
            Err(e) => return Once::Failed(e),
        };
        let (tx, rx) = mpsc::channel();
        let sql_owned = sql.to_string();
        let worker = std::thread::spawn(move || {
            let start = Instant::now();
            let r = client.rows(&sql_owned);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            // The receiver is gone only after a timeout; the result is not wanted then.
            let _ = tx.send((client, r, ms));
        });
        match rx.recv_timeout(timeout) {
            Ok((client, r, ms)) => {
                let _ = worker.join();
                self.client = Some(client);
                match r {
                    Ok(rows) => Once::Done(ms, rows),
                    Err(e) => Once::Error(e),
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.kill_query();
                // The worker keeps its connection until the statement ends; dropping
                // the handle detaches it.
                drop(worker);
                self.abandoned += 1;
                Once::Timeout
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Once::Failed("the query's worker thread died".into())
            }
        }
    }

    /// Asks the server to stop the running statement of our connection, from a second
    /// connection; a server without KILL QUERY refuses, and the statement runs on.
    fn kill_query(&mut self) {
        if let Some(id) = self.connection_id.take() {
            if let Ok(mut c) = self.target.connect() {
                let _ = c.exec(&format!("KILL QUERY {id}"));
            }
        }
    }

    /// Runs `sql` once unmeasured, then `repeat` times timed.
    pub fn run(&mut self, sql: &str, repeat: usize, timeout: Duration) -> RunResult {
        let mut times = Vec::with_capacity(repeat);
        let mut last = Vec::new();
        for i in 0..=repeat {
            match self.once(sql, timeout) {
                Once::Done(ms, rows) => {
                    if i > 0 {
                        times.push(ms);
                    }
                    last = rows;
                }
                Once::Error(e) => return RunResult::Error(e),
                Once::Timeout => return RunResult::Timeout(timeout.as_secs_f64()),
                Once::Failed(e) => return RunResult::Failed(e),
            }
        }
        RunResult::Rows {
            ms: median(&mut times),
            rows: last,
        }
    }
}

/// The median (the mean of the two middle values for an even count).
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
        assert!(median(&mut []).is_nan());
    }
}
