//! Session information functions: DATABASE, VERSION, USER, CONNECTION_ID,
//! LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, `@name := expr`, SLEEP and BENCHMARK.
//! (The clock functions — NOW, CURDATE, UNIX_TIMESTAMP, FROM_UNIXTIME — are date
//! functions: `expr/datetime/functions.rs`.)

use super::{arg, Func};
use crate::expr::{EvalCtx, Expr};
use strata_types::{Result, Value};

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    use Func::*;
    let a0 = || arg(args, 0, row, cx);
    Ok(match f {
        Database => cx
            .env
            .database()
            .map(|d| Value::str(&d))
            .unwrap_or(Value::Null),
        Version => Value::str(crate::SERVER_VERSION),
        LastInsertId => {
            if args.is_empty() {
                Value::UInt(cx.env.last_insert_id())
            } else {
                // LAST_INSERT_ID(expr) returns expr and makes it the session's value
                // (NULL sets 0), which ODKU's `id = LAST_INSERT_ID(id)` relies on.
                let v = a0()?;
                let n = v.to_i64().map(|i| i as u64);
                cx.env.set_last_insert_id(n.unwrap_or(0));
                n.map_or(Value::Null, Value::UInt)
            }
        }
        ConnectionId => Value::UInt(cx.env.connection_id()),
        User => Value::str(&cx.env.user_at_host(false)),
        CurrentUser => Value::str(&cx.env.user_at_host(true)),
        CurrentRole => Value::str(&cx.env.current_role()),
        FoundRows => Value::UInt(cx.env.found_rows()),
        RowCount => Value::Int(cx.env.row_count()),
        AssignUserVariable => {
            let name = arg(args, 0, row, cx)?.to_text();
            let v = arg(args, 1, row, cx)?;
            cx.env.set_user_variable(&name, v.clone());
            v
        }
        LoadFile => {
            let name = a0()?;
            if name.is_null() || !cx.env.holds_file_privilege() {
                return Ok(Value::Null);
            }
            let allowed = cx.env.system_variable("secure_file_priv", true)?;
            let datadir = cx.env.system_variable("datadir", true)?.to_text();
            let Ok(path) = crate::files::resolve(
                &name.to_text(),
                &allowed,
                std::path::Path::new(&datadir),
                None,
            ) else {
                return Ok(Value::Null);
            };
            let limit = cx
                .env
                .system_variable("max_allowed_packet", false)?
                .to_i64()
                .unwrap_or(64 << 20)
                .max(0) as u64;
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() && m.len() > limit => {
                    cx.env.warn(
                        crate::expr::WarnLevel::Warning,
                        1301,
                        format!(
                            "Result of load_file() was larger than max_allowed_packet ({limit}) - truncated"
                        ),
                    );
                    Value::Null
                }
                Ok(m) if m.is_file() => match std::fs::read(&path) {
                    Ok(b) => Value::Bytes(b),
                    Err(_) => Value::Null,
                },
                _ => Value::Null,
            }
        }
        Sleep => {
            let v = a0()?;
            match v.to_f64() {
                Some(s) if s >= 0.0 && s.is_finite() => {
                    let d = std::time::Duration::from_secs_f64(s.min(31_536_000.0));
                    Value::Int(cx.env.sleep(d) as i64)
                }
                // MySQL 8 refuses a NULL or negative duration under a strict sql_mode
                // and otherwise warns; either way it does not wait.
                _ if strict_mode(cx) => {
                    return Err(strata_types::Error::WrongArguments("sleep.".into()))
                }
                _ => {
                    cx.env.warn(
                        crate::expr::WarnLevel::Warning,
                        1210,
                        "Incorrect arguments to sleep.".into(),
                    );
                    Value::Int(0)
                }
            }
        }
        Benchmark => benchmark(args, row, cx)?,
        other => unreachable!("{other:?} is not a session function"),
    })
}

/// Whether the session's sql_mode is strict (STRICT_TRANS_TABLES or STRICT_ALL_TABLES).
fn strict_mode(cx: &EvalCtx) -> bool {
    cx.env
        .system_variable("sql_mode", false)
        .map(|m| m.to_text().to_ascii_uppercase().contains("STRICT_"))
        .unwrap_or(false)
}

/// BENCHMARK(count, expr): evaluates `expr` `count` times and answers 0; a NULL count
/// is NULL, a negative one NULL with warning 1411, as MySQL. A kill or
/// `max_execution_time` ends the loop (checked every 1024 evaluations through the
/// session's interruptible wait).
fn benchmark(args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let count = arg(args, 0, row, cx)?;
    if count.is_null() {
        return Ok(Value::Null);
    }
    let n = match count {
        Value::UInt(u) => u,
        v => match v.to_i64() {
            Some(i) if i >= 0 => i as u64,
            _ => {
                cx.env.warn(
                    crate::expr::WarnLevel::Warning,
                    1411,
                    format!(
                        "Incorrect count value: '{}' for function benchmark",
                        v.to_text()
                    ),
                );
                return Ok(Value::Null);
            }
        },
    };
    for i in 0..n {
        arg(args, 1, row, cx)?;
        if i % 1024 == 1023 && cx.env.sleep(std::time::Duration::ZERO) {
            break;
        }
    }
    Ok(Value::Int(0))
}
