//! Binding the date/time syntax: `d ± INTERVAL n unit`, `EXTRACT(unit FROM d)`, the
//! typed literals `DATE '…'`/`TIME '…'`/`TIMESTAMP '…'`, and the date/time functions by
//! name. Here each gets MySQL's result type: DATE, DATETIME(fsp), TIME(fsp), VARCHAR (a
//! string argument's date arithmetic) or an integer; `expr/datetime/functions.rs` evaluates.

use crate::bind::{Binder, SType};
use crate::expr::datetime::format as datefmt;
use crate::expr::datetime::functions::{DateFn, Out};
use crate::expr::datetime::interval::Unit;
use crate::expr::datetime::temporal;
use crate::expr::functions::Func;
use crate::expr::Expr;
use crate::parse::token_rewrite::INTERNAL_QUOTE;
use sqlparser::ast;
use strata_types::{Collation, Error, Result, Value};

type Bound = (Expr, SType, Collation);

fn syntax(what: &str) -> Error {
    Error::Syntax(what.to_string())
}

/// A simple unit from sqlparser's field (plural and non-MySQL fields are syntax errors).
pub fn unit_of_field(f: &ast::DateTimeField) -> Result<Unit> {
    use ast::DateTimeField as F;
    Ok(match f {
        F::Year => Unit::Year,
        F::Quarter => Unit::Quarter,
        F::Month => Unit::Month,
        F::Week(None) => Unit::Week,
        F::Day => Unit::Day,
        F::Hour => Unit::Hour,
        F::Minute => Unit::Minute,
        F::Second => Unit::Second,
        F::Microsecond => Unit::Microsecond,
        other => return Err(syntax(&other.to_string())),
    })
}

/// The unit of `INTERVAL n unit`. Compound units reach here as `a TO b` (the parser's
/// rewrite of `a_b`; `SECOND_MICROSECOND` as `MICROSECOND TO SECOND`).
pub fn interval_unit(iv: &ast::Interval) -> Result<Unit> {
    use ast::DateTimeField as F;
    if let Some(p) = iv.leading_precision.or(iv.fractional_seconds_precision) {
        // MySQL has no interval precision: `INTERVAL '90' DAY (3)` is a syntax error.
        return Err(syntax(&format!("({p})")));
    }
    let Some(lead) = &iv.leading_field else {
        return Err(syntax("INTERVAL without a unit"));
    };
    let Some(last) = &iv.last_field else {
        return unit_of_field(lead);
    };
    Ok(match (lead, last) {
        (F::Year, F::Month) => Unit::YearMonth,
        (F::Day, F::Hour) => Unit::DayHour,
        (F::Day, F::Minute) => Unit::DayMinute,
        (F::Day, F::Second) => Unit::DaySecond,
        (F::Day, F::Microsecond) => Unit::DayMicrosecond,
        (F::Hour, F::Minute) => Unit::HourMinute,
        (F::Hour, F::Second) => Unit::HourSecond,
        (F::Hour, F::Microsecond) => Unit::HourMicrosecond,
        (F::Minute, F::Second) => Unit::MinuteSecond,
        (F::Minute, F::Microsecond) => Unit::MinuteMicrosecond,
        (F::Microsecond, F::Second) => Unit::SecondMicrosecond,
        _ => return Err(syntax("INTERVAL unit")),
    })
}

/// Fraction digits written in a constant date-time or time string (`'10:00:00.25'`: 2).
fn literal_fsp(b: &[u8]) -> u8 {
    let s = String::from_utf8_lossy(b);
    match s.rfind('.') {
        Some(i) if s[..i].contains(':') && s[i + 1..].bytes().all(|c| c.is_ascii_digit()) => {
            (s.len() - i - 1).min(6) as u8
        }
        _ => 0,
    }
}

/// The fraction digits of a date-time function result, as its type declares them.
fn out_fsp(f: &DateFn) -> u8 {
    match f {
        DateFn::AddInterval { out, .. } | DateFn::TimestampAdd { out, .. } => match out {
            Out::DateTime(p) | Out::Time(p) => *p,
            _ => 0,
        },
        DateFn::Now(p)
        | DateFn::SysDate(p)
        | DateFn::UtcNow(p)
        | DateFn::UtcTime(p)
        | DateFn::CurTime(p)
        | DateFn::ConvertTz(p) => *p,
        DateFn::FromUnixtime(p) => p.unwrap_or(6),
        DateFn::TimeOf(p) | DateFn::TimeDiff(p) | DateFn::SecToTime(p) | DateFn::MakeTime(p) => *p,
        DateFn::StrToDate(datefmt::Parsed::DateTime(p) | datefmt::Parsed::Time(p)) => *p,
        _ => 0,
    }
}

/// MySQL's precision of an argument in temporal context: a constant string's written
/// digits, a string column's 6, a DECIMAL's scale, a DATETIME's declared digits. A
/// parameter's is unknown until it has a value: refused (the text protocol then plans the
/// statement with its literals instead).
fn fsp_of(e: &Expr, ty: SType) -> Result<u8> {
    if matches!(e, Expr::Param(_)) {
        return Err(Error::NotSupported(
            "a parameter where its fractional-seconds precision sets the result type".into(),
        ));
    }
    Ok(match ty {
        SType::Time(f) => f,
        SType::Int | SType::UInt | SType::Date => 0,
        SType::Decimal(s) => s.min(6),
        SType::Double(_) => 6,
        SType::DateTime(f) => match e {
            Expr::Literal(Value::Bytes(b)) => literal_fsp(b),
            Expr::Func(Func::Date { f, .. }, _) => out_fsp(f),
            _ => f,
        },
        SType::Text | SType::Binary | SType::Null | SType::Json => match e {
            Expr::Literal(Value::Bytes(b)) => literal_fsp(b),
            Expr::Literal(_) => 0,
            _ => 6,
        },
    })
}

/// `e` as the signed microseconds of the TIME it denotes: how TIME operands are compared
/// and sorted (their text would order `-01:00:00` after `00:30:00`).
pub fn time_key(e: Expr) -> Expr {
    Expr::Func(
        Func::Date {
            f: DateFn::TimeKey,
            date_arg: false,
        },
        vec![e],
    )
}

/// The operands of a comparison, BETWEEN or IN with a TIME among them, each read as a
/// TIME's microseconds (as MySQL compares a TIME with a string or number: as TIMEs).
/// None when no operand is a TIME; 1235 for a TIME against a date, which MySQL compares
/// as date-times on today's date.
pub fn time_operands(ops: Vec<(Expr, SType)>) -> Result<Option<Vec<Expr>>> {
    if !ops.iter().any(|(_, t)| matches!(t, SType::Time(_))) {
        return Ok(None);
    }
    if ops
        .iter()
        .any(|(_, t)| matches!(t, SType::Date | SType::DateTime(_)))
    {
        return Err(Error::NotSupported(
            "comparing a TIME value with a DATE or DATETIME value".into(),
        ));
    }
    Ok(Some(ops.into_iter().map(|(e, _)| time_key(e)).collect()))
}

fn date_fn(f: DateFn, date_arg: bool, args: Vec<Expr>, ty: SType) -> Bound {
    (
        Expr::Func(Func::Date { f, date_arg }, args),
        ty,
        Collation::GeneralCi,
    )
}

/// The SType of a date-time result shape.
fn out_type(out: Out) -> SType {
    match out {
        Out::Date => SType::Date,
        Out::DateTime(p) => SType::DateTime(p),
        Out::Time(p) => SType::Time(p),
        Out::Text => SType::Text,
    }
}

/// A constant fraction-digits argument (`NOW(3)`): 0..=6, else 1426 like MySQL.
fn precision_arg(name: &str, args: &[ast::Expr]) -> Result<u8> {
    let Some(a) = args.first() else {
        return Ok(0);
    };
    let n = match a {
        ast::Expr::Value(v) => match crate::bind::literal(&v.value)? {
            Value::Int(i) if i >= 0 => i as u64,
            Value::UInt(u) => u,
            _ => return Err(syntax(&a.to_string())),
        },
        _ => return Err(syntax(&a.to_string())),
    };
    if n > 6 {
        return Err(Error::TooBigPrecision {
            precision: n,
            func: name.to_ascii_lowercase(),
        });
    }
    Ok(n as u8)
}

/// A unit written as a bare word (TIMESTAMPADD/TIMESTAMPDIFF, `[extract]`'s string).
fn unit_word(e: &ast::Expr) -> Result<Unit> {
    let name = match e {
        ast::Expr::Identifier(id) => id.value.clone(),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            other => return Err(syntax(&other.to_string())),
        },
        other => return Err(syntax(&other.to_string())),
    };
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("SQL_TSI_").unwrap_or(&upper);
    Unit::from_name(bare).ok_or_else(|| syntax(&name))
}

impl Binder<'_> {
    /// `d + INTERVAL …`, `INTERVAL … + d`, `d - INTERVAL …`; None when neither side is
    /// an interval.
    pub fn bind_interval_arith(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<Option<Bound>> {
        use ast::BinaryOperator as B;
        let (d, iv, sub) = match (left, op, right) {
            (_, B::Plus, ast::Expr::Interval(iv)) => (left, iv, false),
            (ast::Expr::Interval(iv), B::Plus, _) => (right, iv, false),
            (_, B::Minus, ast::Expr::Interval(iv)) => (left, iv, true),
            (ast::Expr::Interval(_), _, _) | (_, _, ast::Expr::Interval(_)) => {
                return Err(syntax("INTERVAL"))
            }
            _ => return Ok(None),
        };
        let unit = interval_unit(iv)?;
        self.add_interval(d, &iv.value, unit, sub).map(Some)
    }

    fn add_interval(
        &mut self,
        d: &ast::Expr,
        n: &ast::Expr,
        unit: Unit,
        sub: bool,
    ) -> Result<Bound> {
        let (de, dt, _) = self.bind(d)?;
        let (ne, nt, _) = self.bind(n)?;
        let out = self.interval_out(&de, dt, &ne, nt, unit)?;
        let (e, t, c) = date_fn(
            DateFn::AddInterval { unit, sub, out },
            dt == SType::Date,
            vec![de, ne],
            out_type(out),
        );
        // `DATE '1994-01-01' + INTERVAL '1' YEAR`: one value, computed once.
        Ok((crate::bind::fold::literal_call(e), t, c))
    }

    /// MySQL's result type of date arithmetic: DATETIME stays DATETIME (with the larger
    /// precision), DATE stays DATE for day-or-larger units, TIME stays TIME for
    /// time units; anything else (strings, numbers) gives a VARCHAR.
    fn interval_out(&self, de: &Expr, dt: SType, ne: &Expr, nt: SType, unit: Unit) -> Result<Out> {
        let ifsp = match unit {
            Unit::Second => fsp_of(ne, nt)?,
            u => u.fsp(),
        };
        Ok(match dt {
            SType::DateTime(_) => Out::DateTime(fsp_of(de, dt)?.max(ifsp)),
            SType::Date if unit.is_date_only() => Out::Date,
            SType::Date => Out::DateTime(ifsp),
            SType::Time(_) => {
                return Err(Error::NotSupported("date arithmetic on TIME values".into()))
            }
            _ => Out::Text,
        })
    }

    /// `EXTRACT(unit FROM d)`.
    pub fn bind_extract(&mut self, unit: Unit, e: &ast::Expr) -> Result<Bound> {
        let (x, t, _) = self.bind(e)?;
        let time_only = !unit.is_months()
            && !matches!(
                unit,
                Unit::Day
                    | Unit::Week
                    | Unit::DayHour
                    | Unit::DayMinute
                    | Unit::DaySecond
                    | Unit::DayMicrosecond
            );
        let time_arg = match t {
            SType::Time(_) if !time_only && unit != Unit::Day => {
                return Err(Error::NotSupported(format!(
                    "EXTRACT({} FROM a TIME value)",
                    unit.name()
                )))
            }
            SType::Time(_) => true,
            SType::Date | SType::DateTime(_) => false,
            _ => time_only,
        };
        Ok(date_fn(
            DateFn::Extract { unit, time_arg },
            t == SType::Date,
            vec![x],
            SType::Int,
        ))
    }

    /// `DATE '…'`, `TIME '…'`, `TIMESTAMP '…'` / `DATETIME '…'`: 1525 for text that is not
    /// a value of the type.
    pub fn bind_typed_literal(&mut self, ts: &ast::TypedString) -> Result<Bound> {
        let text = match &ts.value.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        };
        let lit = |v: Value, t: SType| (Expr::Literal(v), t, Collation::GeneralCi);
        let wrong = |kind: &str| Error::WrongLiteral {
            kind: kind.into(),
            value: text.clone(),
        };
        Ok(match &ts.data_type {
            ast::DataType::Date => match temporal::parse_stamp(&text) {
                Some(s) if !s.has_time => lit(Value::DateTime(s.dt.as_date()), SType::Date),
                _ => return Err(wrong("DATE")),
            },
            ast::DataType::Time(..) => match temporal::parse_time(&text) {
                Some((t, false)) => {
                    let fsp = literal_fsp(text.as_bytes());
                    lit(Value::str(&temporal::format_time(t, fsp)), SType::Time(fsp))
                }
                _ => return Err(wrong("TIME")),
            },
            ast::DataType::Timestamp(..) | ast::DataType::Datetime(_) => {
                match temporal::parse_stamp(&text) {
                    Some(s) if s.has_time => {
                        let fsp = literal_fsp(text.as_bytes());
                        let v = crate::expr::datetime::functions::emit(s, Out::DateTime(fsp));
                        lit(v, SType::DateTime(fsp))
                    }
                    _ => return Err(wrong("DATETIME")),
                }
            }
            other => return Err(Error::NotSupported(format!("{other} literal"))),
        })
    }

    /// A date/time function by name, or None when `name` is not one. `internal` is the
    /// parser's rewrite of `EXTRACT(compound_unit FROM d)`.
    pub fn bind_date_function(
        &mut self,
        f: &ast::Function,
        name: &str,
        args: &[ast::Expr],
    ) -> Result<Option<Bound>> {
        let internal = f
            .name
            .0
            .first()
            .and_then(|p| p.as_ident())
            .is_some_and(|i| i.quote_style == Some(INTERNAL_QUOTE));
        let lname = name.to_ascii_lowercase();
        if internal {
            if lname == "extract" && args.len() == 2 {
                let unit = unit_word(&args[0])?;
                return self.bind_extract(unit, &args[1]).map(Some);
            }
            return Ok(None);
        }
        let count = |min: usize, max: usize| -> Result<()> {
            if args.len() < min || args.len() > max {
                return Err(Error::WrongParamCount(name.to_string()));
            }
            Ok(())
        };
        use DateFn as D;
        // Functions of one date argument giving an integer, a name or a date.
        let simple = match lname.as_str() {
            "year" => Some((D::Year, SType::Int)),
            "month" => Some((D::Month, SType::Int)),
            "day" | "dayofmonth" => Some((D::DayOfMonth, SType::Int)),
            "hour" => Some((D::Hour, SType::Int)),
            "minute" => Some((D::Minute, SType::Int)),
            "second" => Some((D::Second, SType::Int)),
            "microsecond" => Some((D::Microsecond, SType::Int)),
            "quarter" => Some((D::Quarter, SType::Int)),
            "dayofweek" => Some((D::DayOfWeek, SType::Int)),
            "weekday" => Some((D::WeekDay, SType::Int)),
            "dayofyear" => Some((D::DayOfYear, SType::Int)),
            "weekofyear" => Some((D::WeekOfYear, SType::Int)),
            "to_days" => Some((D::ToDays, SType::Int)),
            "dayname" => Some((D::DayName, SType::Text)),
            "monthname" => Some((D::MonthName, SType::Text)),
            "from_days" => Some((D::FromDays, SType::Date)),
            "last_day" => Some((D::LastDay, SType::Date)),
            "date" => Some((D::DateOf, SType::Date)),
            _ => None,
        };
        if let Some((f, ty)) = simple {
            count(1, 1)?;
            let (x, t, _) = self.bind(&args[0])?;
            return Ok(Some(date_fn(f, t == SType::Date, vec![x], ty)));
        }
        let bound = match lname.as_str() {
            "date_add" | "date_sub" | "adddate" | "subdate" => {
                count(2, 2)?;
                let sub = lname == "date_sub" || lname == "subdate";
                match &args[1] {
                    ast::Expr::Interval(iv) => {
                        let unit = interval_unit(iv)?;
                        self.add_interval(&args[0], &iv.value, unit, sub)?
                    }
                    n if lname == "adddate" || lname == "subdate" => {
                        self.add_interval(&args[0], n, Unit::Day, sub)?
                    }
                    _ => return Err(syntax(name)),
                }
            }
            "timestampadd" => {
                count(3, 3)?;
                let unit = unit_word(&args[0])?;
                if unit.is_compound() {
                    return Err(syntax(unit.name()));
                }
                let (ne, nt, _) = self.bind(&args[1])?;
                let (de, dt, _) = self.bind(&args[2])?;
                let out = self.interval_out(&de, dt, &ne, nt, unit)?;
                date_fn(
                    D::TimestampAdd { unit, out },
                    dt == SType::Date,
                    vec![ne, de],
                    out_type(out),
                )
            }
            "timestampdiff" => {
                count(3, 3)?;
                let unit = unit_word(&args[0])?;
                if unit.is_compound() {
                    return Err(syntax(unit.name()));
                }
                let (a, at, _) = self.bind(&args[1])?;
                let (b, _, _) = self.bind(&args[2])?;
                date_fn(
                    D::TimestampDiff(unit),
                    at == SType::Date,
                    vec![a, b],
                    SType::Int,
                )
            }
            "week" | "yearweek" => {
                count(1, 2)?;
                let mut v = Vec::new();
                let mut first = SType::Null;
                for (i, a) in args.iter().enumerate() {
                    let (x, t, _) = self.bind(a)?;
                    if i == 0 {
                        first = t;
                    }
                    v.push(x);
                }
                let f = if lname == "week" {
                    D::Week
                } else {
                    D::YearWeek
                };
                date_fn(f, first == SType::Date, v, SType::Int)
            }
            "datediff" | "period_add" | "period_diff" | "makedate" => {
                count(2, 2)?;
                let (a, at, _) = self.bind(&args[0])?;
                let (b, _, _) = self.bind(&args[1])?;
                let (f, ty) = match lname.as_str() {
                    "datediff" => (D::DateDiff, SType::Int),
                    "period_add" => (D::PeriodAdd, SType::Int),
                    "period_diff" => (D::PeriodDiff, SType::Int),
                    _ => (D::MakeDate, SType::Date),
                };
                date_fn(f, at == SType::Date, vec![a, b], ty)
            }
            "time" => {
                count(1, 1)?;
                let (x, t, _) = self.bind(&args[0])?;
                let fsp = fsp_of(&x, t)?;
                date_fn(D::TimeOf(fsp), false, vec![x], SType::Time(fsp))
            }
            "timediff" => {
                count(2, 2)?;
                let (a, at, _) = self.bind(&args[0])?;
                let (b, bt, _) = self.bind(&args[1])?;
                if at == SType::Date || bt == SType::Date {
                    return Err(Error::NotSupported("TIMEDIFF of a DATE".into()));
                }
                let fsp = fsp_of(&a, at)?.max(fsp_of(&b, bt)?);
                date_fn(D::TimeDiff(fsp), false, vec![a, b], SType::Time(fsp))
            }
            "addtime" | "subtime" => {
                count(2, 2)?;
                let (a, at, _) = self.bind(&args[0])?;
                let (b, bt, _) = self.bind(&args[1])?;
                if matches!(bt, SType::Date | SType::DateTime(_)) {
                    return Err(Error::NotSupported(format!(
                        "{} with a date as its second argument",
                        name.to_ascii_uppercase()
                    )));
                }
                let fsp = fsp_of(&a, at)?.max(fsp_of(&b, bt)?);
                // A DATETIME (or DATE) gives a DATETIME, a TIME a TIME; anything else a
                // string shown as whichever the first argument reads as.
                let (ty, text) = match at {
                    SType::Date | SType::DateTime(_) => (SType::DateTime(fsp), false),
                    SType::Time(_) => (SType::Time(fsp), false),
                    _ => (SType::Text, true),
                };
                let f = D::AddTime {
                    sub: name.eq_ignore_ascii_case("subtime"),
                    fsp,
                    text,
                };
                date_fn(f, at == SType::Date, vec![a, b], ty)
            }
            "sec_to_time" => {
                count(1, 1)?;
                let (x, t, _) = self.bind(&args[0])?;
                let fsp = match t {
                    SType::Int | SType::UInt => 0,
                    t => fsp_of(&x, t)?,
                };
                date_fn(D::SecToTime(fsp), false, vec![x], SType::Time(fsp))
            }
            "time_to_sec" => {
                count(1, 1)?;
                let (x, t, _) = self.bind(&args[0])?;
                let fsp = match t {
                    SType::Date | SType::DateTime(_) => 0,
                    t => fsp_of(&x, t)?,
                };
                let ty = if fsp == 0 {
                    SType::Int
                } else {
                    SType::Decimal(fsp)
                };
                date_fn(D::TimeToSec(fsp), false, vec![x], ty)
            }
            "maketime" => {
                count(3, 3)?;
                let mut v = Vec::new();
                let mut fsp = 0;
                for (i, a) in args.iter().enumerate() {
                    let (x, t, _) = self.bind(a)?;
                    if i == 2 {
                        fsp = match t {
                            SType::Int | SType::UInt => 0,
                            t => fsp_of(&x, t)?,
                        };
                    }
                    v.push(x);
                }
                date_fn(D::MakeTime(fsp), false, v, SType::Time(fsp))
            }
            "date_format" | "time_format" => {
                count(2, 2)?;
                let (a, at, _) = self.bind(&args[0])?;
                let (b, _, _) = self.bind(&args[1])?;
                let f = if lname == "date_format" {
                    D::DateFormat
                } else {
                    D::TimeFormat
                };
                date_fn(f, at == SType::Date, vec![a, b], SType::Text)
            }
            "str_to_date" => {
                count(2, 2)?;
                let (a, _, _) = self.bind(&args[0])?;
                let (b, _, _) = self.bind(&args[1])?;
                let Expr::Literal(Value::Bytes(fmt)) = &b else {
                    return Err(Error::NotSupported(
                        "STR_TO_DATE with a format that is not a constant string".into(),
                    ));
                };
                let Some(kind) = datefmt::parsed_kind(&String::from_utf8_lossy(fmt)) else {
                    return Err(Error::NotSupported(
                        "STR_TO_DATE with week specifiers (%U %u %V %v %X %x %w)".into(),
                    ));
                };
                let ty = match kind {
                    datefmt::Parsed::Date => SType::Date,
                    datefmt::Parsed::DateTime(p) => SType::DateTime(p),
                    datefmt::Parsed::Time(p) => SType::Time(p),
                };
                date_fn(D::StrToDate(kind), false, vec![a, b], ty)
            }
            "convert_tz" => {
                count(3, 3)?;
                let mut v = Vec::new();
                let mut fsp = 0;
                let mut first = SType::Null;
                for (i, a) in args.iter().enumerate() {
                    let (x, t, _) = self.bind(a)?;
                    if i == 0 {
                        fsp = fsp_of(&x, t)?;
                        first = t;
                    }
                    v.push(x);
                }
                date_fn(
                    D::ConvertTz(fsp),
                    first == SType::Date,
                    v,
                    SType::DateTime(fsp),
                )
            }
            "now" | "current_timestamp" | "localtime" | "localtimestamp" => {
                count(0, 1)?;
                let p = precision_arg(name, args)?;
                date_fn(D::Now(p), false, vec![], SType::DateTime(p))
            }
            "utc_timestamp" => {
                count(0, 1)?;
                let p = precision_arg(name, args)?;
                date_fn(D::UtcNow(p), false, vec![], SType::DateTime(p))
            }
            "utc_date" => {
                count(0, 0)?;
                date_fn(D::UtcDate, false, vec![], SType::Date)
            }
            "utc_time" => {
                count(0, 1)?;
                let p = precision_arg(name, args)?;
                date_fn(D::UtcTime(p), false, vec![], SType::Time(p))
            }
            "sysdate" => {
                count(0, 1)?;
                let p = precision_arg(name, args)?;
                date_fn(D::SysDate(p), false, vec![], SType::DateTime(p))
            }
            "curdate" | "current_date" => {
                count(0, 0)?;
                date_fn(D::CurDate, false, vec![], SType::Date)
            }
            "curtime" | "current_time" => {
                count(0, 1)?;
                let p = precision_arg(name, args)?;
                date_fn(D::CurTime(p), false, vec![], SType::Time(p))
            }
            "unix_timestamp" => {
                count(0, 1)?;
                let mut v = Vec::new();
                let mut fsp = 0;
                if let Some(a) = args.first() {
                    let (x, t, _) = self.bind(a)?;
                    fsp = fsp_of(&x, t)?;
                    v.push(x);
                }
                // With a fraction MySQL answers a DECIMAL of the argument's precision.
                let ty = if fsp > 0 {
                    SType::Decimal(fsp)
                } else {
                    SType::Int
                };
                date_fn(D::UnixTimestamp(fsp), false, v, ty)
            }
            "from_unixtime" => {
                count(1, 2)?;
                let (x, t, _) = self.bind(&args[0])?;
                // The result's fraction digits are the argument's (6 for a DOUBLE or a
                // string), as MySQL's. A placeholder (a prepared statement's, or a
                // literal the plan cache took out of `VALUES (…)`) has no type until it
                // has a value: its digits are found from the value at run time, so
                // `FROM_UNIXTIME(1623760245.678)` keeps `.678` however it arrives.
                let fsp = match (&x, t) {
                    (Expr::Param(_), _) => None,
                    (_, SType::Int | SType::UInt | SType::Null) => Some(0),
                    (_, SType::Decimal(s)) => Some(s.min(6)),
                    _ => Some(6),
                };
                let shown = fsp.unwrap_or(6);
                let mut v = vec![x];
                if let Some(fmt) = args.get(1) {
                    v.push(self.bind(fmt)?.0);
                    date_fn(D::FromUnixtime(fsp), false, v, SType::Text)
                } else {
                    date_fn(D::FromUnixtime(fsp), false, v, SType::DateTime(shown))
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(bound))
    }

    /// `UTC_DATE`, `UTC_TIME`, `UTC_TIMESTAMP` written without parentheses (sqlparser
    /// reads them as names); None for any other name.
    pub fn bind_date_keyword(&mut self, name: &str) -> Option<Bound> {
        let (f, ty) = match name.to_ascii_lowercase().as_str() {
            "utc_date" => (DateFn::UtcDate, SType::Date),
            "utc_time" => (DateFn::UtcTime(0), SType::Time(0)),
            "utc_timestamp" => (DateFn::UtcNow(0), SType::DateTime(0)),
            _ => return None,
        };
        Some(date_fn(f, false, vec![], ty))
    }
}

/// MySQL compares a DATE or DATETIME with a numeric constant as date-times, the number
/// read as YYYYMMDD[hhmmss] ([`DateTime::from_number`]): `t < 20240101` means before
/// 2024-01-01 00:00:00, not below the number 20240101 (a DATETIME's number is
/// YYYYMMDDhhmmss). `other` is the type of what the constant `e` is compared with; a
/// number that is no date stays a number.
/// An operand compared with a YEAR column: a constant reads as the column would store it
/// (`y = 21` is `y = 2021`, as MySQL converts constants into the column's type); a
/// placeholder (the plan cache's or a prepared statement's) is converted when it has its
/// value. Anything else is left as it is.
pub(crate) fn year_operand(e: Expr) -> Expr {
    match e {
        Expr::Literal(v) => {
            let year = crate::expr::datetime::functions::year_constant(&v);
            Expr::Literal(year.unwrap_or(v))
        }
        Expr::Param(_) => Expr::Func(
            Func::Date {
                f: DateFn::YearConstant,
                date_arg: false,
            },
            vec![e],
        ),
        other => other,
    }
}

pub(crate) fn number_as_temporal(other: SType, e: Expr) -> Expr {
    if !matches!(other, SType::Date | SType::DateTime(_)) {
        return e;
    }
    let n = match &e {
        Expr::Literal(Value::Int(i)) => *i,
        Expr::Literal(Value::UInt(u)) => match i64::try_from(*u) {
            Ok(i) => i,
            Err(_) => return e,
        },
        _ => return e,
    };
    match strata_types::DateTime::from_number(n) {
        Some(dt) => Expr::Literal(Value::DateTime(dt)),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::Scope;

    fn bind(sql: &str) -> Result<Bound> {
        let stmts = crate::parse::parse(&format!("SELECT {sql}"))?;
        let ast::Statement::Query(q) = &stmts[0] else {
            panic!()
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            panic!()
        };
        let ast::SelectItem::UnnamedExpr(e) = &s.projection[0] else {
            panic!()
        };
        let scope = Scope::default();
        Binder::new(&scope, "field list").bind(e)
    }

    #[test]
    fn literal_date_arithmetic_is_folded_unless_it_warns() {
        let (e, t, _) = bind("DATE '1994-01-01' + INTERVAL '1' YEAR").unwrap();
        assert_eq!(t, SType::Date);
        match e {
            Expr::Cached(v) => assert_eq!(
                *v,
                Value::DateTime(temporal::parse_stamp("1995-01-01").unwrap().dt)
            ),
            other => panic!("not folded: {other:?}"),
        }
        // An invalid date warns and gives NULL on each execution: left as written.
        let (e, _, _) = bind("'1994-02-30' + INTERVAL 1 DAY").unwrap();
        assert!(matches!(e, Expr::Func(..)), "{e:?}");
    }

    #[test]
    fn result_types_follow_the_first_argument() {
        assert_eq!(
            bind("DATE '2024-01-31' + INTERVAL 1 MONTH").unwrap().1,
            SType::Date
        );
        assert_eq!(
            bind("DATE '2024-01-31' + INTERVAL 1 HOUR").unwrap().1,
            SType::DateTime(0)
        );
        assert_eq!(
            bind("'2024-01-31' + INTERVAL 1 DAY").unwrap().1,
            SType::Text
        );
        assert_eq!(
            bind("INTERVAL 1 DAY + DATE '2024-01-31'").unwrap().1,
            SType::Date
        );
        assert_eq!(bind("TIME '10:00:00.25'").unwrap().1, SType::Time(2));
        assert_eq!(
            bind("TIMEDIFF('10:00:00.5', '09:00:00')").unwrap().1,
            SType::Time(1)
        );
        assert_eq!(
            bind("STR_TO_DATE('1,2,2024', '%d,%m,%Y')").unwrap().1,
            SType::Date
        );
        assert_eq!(
            bind("EXTRACT(DAY_HOUR FROM '2024-01-02 10:00:00')")
                .unwrap()
                .1,
            SType::Int
        );
    }

    #[test]
    fn refusals_and_syntax() {
        assert_eq!(bind("DATE '2024-13-01'").unwrap_err().code(), 1525);
        assert_eq!(bind("TIMESTAMP '2024-01-01'").unwrap_err().code(), 1525);
        assert_eq!(
            bind("DATE '1998-12-01' - INTERVAL '90' DAY (3)")
                .unwrap_err()
                .code(),
            1064
        );
        assert_eq!(
            bind("INTERVAL 1 DAY - DATE '2024-01-01'")
                .unwrap_err()
                .code(),
            1064
        );
        assert_eq!(bind("NOW(7)").unwrap_err().code(), 1426);
        // (A non-literal date: literal operands would be folded to the value.)
        for (sql, sub) in [("SUBDATE(NOW(), 1)", true), ("ADDDATE(NOW(), 1)", false)] {
            let Expr::Func(Func::Date { f, .. }, _) = bind(sql).unwrap().0 else {
                panic!("{sql}")
            };
            assert!(
                matches!(f, DateFn::AddInterval { sub: s, .. } if s == sub),
                "{sql}"
            );
        }
        assert_eq!(
            bind("TIMESTAMPADD(DAY_HOUR, 1, '2024-01-01')")
                .unwrap_err()
                .code(),
            1064
        );
    }
}
