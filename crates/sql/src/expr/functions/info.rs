//! Session information functions: DATABASE, VERSION, USER, CONNECTION_ID,
//! LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, the statement clock (NOW, CURDATE,
//! UNIX_TIMESTAMP, FROM_UNIXTIME), `@name := expr` and SLEEP.

use super::{arg, to_datetime, Func};
use crate::expr::{EvalCtx, Expr};
use strata_types::{DateTime, Result, Value};

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
        User => Value::str(&format!("{}@localhost", cx.env.user())),
        Now => Value::DateTime(cx.env.now().truncate_to(0)),
        CurDate => Value::DateTime(cx.env.now().as_date()),
        UnixTimestamp => {
            if args.is_empty() {
                Value::Int(cx.env.now().to_unix())
            } else {
                match to_datetime(&a0()?) {
                    Some(d) => Value::Int(d.to_unix().max(0)),
                    None => Value::Null,
                }
            }
        }
        FromUnixtime => match a0()?.to_i64() {
            // MySQL's range ends at 3001-01-19 03:14:07 UTC.
            Some(s) if (0..=32_536_771_199).contains(&s) => {
                Value::DateTime(DateTime::from_unix(s, 0))
            }
            _ => Value::Null,
        },
        FoundRows => Value::UInt(cx.env.found_rows()),
        RowCount => Value::Int(cx.env.row_count()),
        AssignUserVariable => {
            let name = arg(args, 0, row, cx)?.to_text();
            let v = arg(args, 1, row, cx)?;
            cx.env.set_user_variable(&name, v.clone());
            v
        }
        Sleep => {
            let v = a0()?;
            match v.to_f64() {
                // MySQL 8 warns about a NULL or negative duration and does not wait.
                Some(s) if s >= 0.0 && s.is_finite() => {
                    let d = std::time::Duration::from_secs_f64(s.min(31_536_000.0));
                    Value::Int(cx.env.sleep(d) as i64)
                }
                _ => {
                    cx.env.warn(
                        crate::expr::WarnLevel::Warning,
                        1210,
                        "Incorrect arguments to sleep".into(),
                    );
                    Value::Int(0)
                }
            }
        }
        other => unreachable!("{other:?} is not a session function"),
    })
}
