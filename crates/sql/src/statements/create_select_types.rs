//! The column types CREATE TABLE … SELECT gives computed select-list expressions, by
//! MySQL 8's rules: an expression is typed as MySQL types its result (`max_length`,
//! precision, scale, unsignedness, collation, NULL-ness: [`Item`]), and the column is
//! made of that as MySQL makes a temporary table's field of it ([`Item::column`]).
//!
//! What is typed: literals, columns of the tables a SELECT reads (outer-joined ones
//! NULL-able), `+ - * /` and unary minus, comparisons and logical operators, COUNT /
//! SUM / AVG / MIN / MAX, CONCAT, UPPER / LOWER, LENGTH / CHAR_LENGTH, NOW() and the
//! other current-time functions, DATE_ADD / DATE_SUB / `± INTERVAL`, CAST, IF /
//! IFNULL / COALESCE / CASE, and the columns of a UNION. Anything else is an error
//! naming the expression's kind ([`Unknown`]), which the caller reports as 1235: a
//! type MySQL would not give is never guessed. Where MySQL's two ways of choosing an
//! integer column (by the result's data type, by its display length) could disagree,
//! the expression is refused the same way.

use super::create_select_calls;
use crate::bind::real_decimals::{self, NOT_FIXED};
use crate::expr::datetime::interval::Unit;
use sqlparser::ast;
use std::sync::Arc;
use strata_types::decimal::{DIV_INCREMENT, MAX_PRECISION, MAX_SCALE};
use strata_types::{Collation, ColumnDef, DataType, TableDef};

/// Longest string (in characters) whose column is a VARCHAR; a longer one is a TEXT
/// (MySQL's `CONVERT_IF_BIGGER_TO_BLOB`).
const MAX_VARCHAR_CHARS: u64 = 512;

/// Bytes a character of a utf8mb4 collation takes at most.
const MB_MAX: u64 = 4;

/// Display characters from which MySQL makes an integer result a BIGINT rather than
/// an INT (`MY_INT32_NUM_DECIMAL_DIGITS - 1`).
const BIGINT_FROM: u32 = 10;

/// Why an expression's type is not derived: the kind of expression, for the 1235.
pub(crate) type Unknown = String;

thread_local! {
    /// Whether the statement being typed runs in a strict sql_mode ([`StrictTyping`]).
    static STRICT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While alive, the typing on this thread is for a strict sql_mode: MySQL 8 makes every
/// string function's result NULL-able then (`Item_str_func::fix_fields`: a value
/// strict mode refuses becomes NULL), so `CONCAT(a, b)` of NOT NULL columns is a
/// NULL-able column.
pub(crate) struct StrictTyping(bool);

impl StrictTyping {
    pub(crate) fn new(strict: bool) -> StrictTyping {
        StrictTyping(STRICT.with(|s| s.replace(strict)))
    }
}

impl Drop for StrictTyping {
    fn drop(&mut self) {
        STRICT.with(|s| s.set(self.0));
    }
}

/// The NULL-ability of a string function's result whose arguments give `nullable`.
pub(crate) fn string_result_nullable(nullable: bool) -> bool {
    nullable || STRICT.with(|s| s.get())
}

/// A table a SELECT reads: the name its columns may be qualified with, its definition,
/// and whether an outer join makes its columns NULL-able.
pub(crate) struct Table {
    pub qualifier: String,
    pub def: Arc<TableDef>,
    pub outer: bool,
    /// A derived table, CTE or view: its columns are the CTAS columns of its query
    /// (`create_select`), and those of them that could not be typed are here with why.
    pub refused: Vec<(String, Unknown)>,
    /// A derived table, CTE or view that MySQL merges into the query reading it (one
    /// SELECT without grouping, DISTINCT, aggregates, window functions or LIMIT):
    /// a base column read through it is MySQL's `Item_view_ref`, not the column.
    pub merged: bool,
    /// Whether it is a derived table, CTE or view (not a base table).
    pub derived: bool,
}

/// The result type of an expression, as MySQL's item holds it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    pub kind: Kind,
    pub nullable: bool,
    /// The exact column type the result keeps (a column, its MIN/MAX, IFNULL of
    /// columns of one type).
    pub exact: Option<DataType>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// An integer: `len` display characters (MySQL's `max_length`), `prec` digits.
    Int {
        len: u32,
        prec: u32,
        unsigned: bool,
    },
    Decimal {
        prec: u32,
        scale: u32,
    },
    /// A DOUBLE: `len` display characters (MySQL's `max_length`, which the column's M
    /// is) and `dec` decimals ([`real_decimals`]; NOT_FIXED a plain DOUBLE).
    Double {
        len: u32,
        dec: u8,
    },
    /// A string of `chars` characters; `column` when its collation is a column's
    /// (implicit), not a literal's (coercible); `fixed` for CHAR columns.
    Str {
        chars: u64,
        coll: Collation,
        column: bool,
        fixed: bool,
    },
    Temporal(DataType),
    Null,
}

impl Item {
    pub(crate) fn new(kind: Kind, nullable: bool) -> Item {
        Item {
            kind,
            nullable,
            exact: None,
        }
    }

    /// A DOUBLE without fixed decimals.
    fn double(nullable: bool) -> Item {
        Item::new(
            Kind::Double {
                len: 23,
                dec: NOT_FIXED,
            },
            nullable,
        )
    }

    /// A DOUBLE of `dec` decimals and MySQL's display length for them.
    fn fixed_double(dec: u8, nullable: bool) -> Item {
        Item::new(
            Kind::Double {
                len: real_decimals::float_length(dec),
                dec,
            },
            nullable,
        )
    }

    /// The decimals the value brings to a DOUBLE result (MySQL's `decimals`): an
    /// integer 0, a DECIMAL its scale, a string or NULL none fixed. None for a date
    /// or time.
    fn real_decimals(&self) -> Option<u8> {
        match self.kind {
            Kind::Int { .. } => Some(0),
            Kind::Decimal { scale, .. } => Some(scale.min(30) as u8),
            Kind::Double { dec, .. } => Some(dec),
            Kind::Str { .. } => Some(NOT_FIXED),
            Kind::Null => Some(0),
            Kind::Temporal(_) => None,
        }
    }

    /// The display characters of the value's integer part, as MySQL counts
    /// `max_length - decimals` for a DOUBLE result. A DECIMAL's count depends on
    /// whether it can be negative (a literal cannot), which is not known here: the
    /// two counts.
    fn int_chars(&self) -> Option<(u32, u32)> {
        match self.kind {
            Kind::Int { len, .. } => Some((len, len)),
            Kind::Decimal { prec, scale } => {
                let unsigned = prec - scale + u32::from(scale > 0);
                Some((unsigned, unsigned + 1))
            }
            Kind::Double { len, dec } if dec < NOT_FIXED => Some((
                len.saturating_sub(u32::from(dec)),
                len.saturating_sub(u32::from(dec)),
            )),
            Kind::Null => Some((0, 0)),
            _ => None,
        }
    }

    pub(crate) fn int(len: u32, prec: u32, unsigned: bool, nullable: bool) -> Item {
        Item::new(
            Kind::Int {
                len,
                prec,
                unsigned,
            },
            nullable,
        )
    }

    /// The digits and scale a number counts as in DECIMAL arithmetic (MySQL's
    /// `decimal_precision()`, `decimals`).
    fn digits(&self) -> Option<(u32, u32)> {
        match self.kind {
            Kind::Int { prec, .. } => Some((prec, 0)),
            Kind::Decimal { prec, scale } => Some((prec, scale)),
            _ => None,
        }
    }

    /// The characters the value takes as a string (CONCAT's and CAST AS CHAR's
    /// operand).
    pub(crate) fn chars(&self) -> Option<u64> {
        match &self.kind {
            Kind::Str { chars, .. } => Some(*chars),
            Kind::Int { len, .. } => Some(u64::from(*len)),
            Kind::Decimal { prec, scale } => Some(u64::from(prec + u32::from(*scale > 0) + 1)),
            Kind::Null => Some(0),
            _ => None,
        }
    }

    /// The column MySQL makes of the result (`create_tmp_field_from_item`): an
    /// integer of fewer than 10 display characters INT, else BIGINT; a DECIMAL of the
    /// result's precision and scale; DOUBLE; a string VARCHAR, CHAR(0) when empty,
    /// TEXT past 512 characters; a date or time its type; NULL BINARY(0).
    pub fn column(&self, name: &str) -> Result<ColumnDef, Unknown> {
        let (data_type, coll) = match &self.kind {
            Kind::Int { len, unsigned, .. } => {
                let t = match self.exact {
                    Some(t) if t.is_integer() => t,
                    _ if *len >= BIGINT_FROM => DataType::BigInt {
                        unsigned: *unsigned,
                    },
                    _ => DataType::Int {
                        unsigned: *unsigned,
                    },
                };
                (t, Collation::Binary)
            }
            Kind::Decimal { prec, scale } => (
                DataType::Decimal {
                    precision: (*prec).min(u32::from(MAX_PRECISION)) as u8,
                    scale: (*scale).min(u32::from(MAX_SCALE)) as u8,
                },
                Collation::Binary,
            ),
            Kind::Double { len, dec } => match self.exact {
                Some(t @ (DataType::Float { .. } | DataType::Double { .. })) => {
                    (t, Collation::Binary)
                }
                // Fixed decimals: DOUBLE(M,D), M the display length.
                _ if *dec < NOT_FIXED => (
                    DataType::Double {
                        fixed: Some(((*len).clamp(u32::from(*dec).max(1), 255) as u8, *dec)),
                    },
                    Collation::Binary,
                ),
                _ => (DataType::Double { fixed: None }, Collation::Binary),
            },
            Kind::Str {
                chars, coll, fixed, ..
            } => {
                let t = if *chars > MAX_VARCHAR_CHARS {
                    DataType::Text(text_limit(chars * MB_MAX))
                } else if let Some(t @ (DataType::Char(_) | DataType::VarChar(_))) = self.exact {
                    t
                } else if *fixed || *chars == 0 {
                    DataType::Char(*chars as u32)
                } else {
                    DataType::VarChar(*chars as u32)
                };
                (t, *coll)
            }
            Kind::Temporal(t) => (*t, Collation::Binary),
            Kind::Null => {
                return Ok(ColumnDef::plain(
                    name,
                    DataType::Binary(0),
                    true,
                    Collation::Binary,
                ))
            }
        };
        if let DataType::Decimal { precision, scale } = data_type {
            if precision < scale {
                return Err("a DECIMAL of more scale than precision".into());
            }
        }
        Ok(ColumnDef::plain(name, data_type, self.nullable, coll))
    }
}

/// The smallest TEXT kind holding `bytes` bytes.
fn text_limit(bytes: u64) -> u32 {
    [255u64, 65_535, 16_777_215]
        .into_iter()
        .find(|l| bytes <= *l)
        .unwrap_or(u64::from(u32::MAX)) as u32
}

/// The result type of `e`, whose columns are those of `tables`.
pub(crate) fn type_of(e: &ast::Expr, tables: &[Table]) -> Result<Item, Unknown> {
    use ast::Expr as E;
    match e {
        E::Nested(inner) => type_of(inner, tables),
        E::Value(v) => literal(&v.value),
        E::Identifier(i) => {
            if i.quote_style.is_none() {
                if let Some(t) = current_time(&i.value.to_ascii_lowercase(), Some(0)) {
                    return Ok(t);
                }
            }
            column(None, &i.value, tables)
        }
        E::CompoundIdentifier(parts) => match parts.as_slice() {
            [q, c] => column(Some(&q.value), &c.value, tables),
            _ => Err("a column named with its database".into()),
        },
        E::UnaryOp { op, expr } => {
            let x = type_of(expr, tables)?;
            match op {
                ast::UnaryOperator::Plus => Ok(x),
                ast::UnaryOperator::Minus => negate(x),
                ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                    Ok(Item::int(1, 1, false, x.nullable))
                }
                _ => Err(format!("the operator {op}")),
            }
        }
        E::BinaryOp { left, op, right } => binary(left, op, right, tables),
        E::IsNull(x) | E::IsNotNull(x) => {
            type_of(x, tables)?;
            Ok(Item::int(1, 1, false, false))
        }
        E::Function(f) => function(f, tables),
        E::Cast {
            kind: ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
        } => cast(expr, data_type, tables),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            if let Some(o) = operand {
                type_of(o, tables)?;
            }
            let mut branches = Vec::new();
            for w in conditions {
                type_of(&w.condition, tables)?;
                branches.push(type_of(&w.result, tables)?);
            }
            let nullable_else = match else_result {
                Some(x) => {
                    branches.push(type_of(x, tables)?);
                    false
                }
                None => true,
            };
            let nullable = nullable_else || branches.iter().any(|b| b.nullable);
            aggregate(&branches, nullable, false, "CASE")
        }
        // SUBSTRING(s FROM p FOR n) and TRIM([… FROM] s) have forms of their own.
        E::Substring {
            expr,
            substring_from: Some(from),
            substring_for,
            ..
        } => {
            let mut args: Vec<&ast::Expr> = vec![expr, from];
            args.extend(substring_for.as_deref());
            call_of("substring", &args, tables)
        }
        E::Trim {
            expr,
            trim_characters: None,
            ..
        } => call_of("trim", &[expr], tables),
        E::Subquery(_) | E::Exists { .. } | E::InSubquery { .. } => Err("a subquery".into()),
        other => Err(format!("the expression `{other}`")),
    }
}

/// A literal: an integer as many characters as it has digits, a number with a point a
/// DECIMAL of its digits, one with an exponent a DOUBLE, a string of its characters,
/// TRUE/FALSE an integer, NULL the NULL type.
fn literal(v: &ast::Value) -> Result<Item, Unknown> {
    match v {
        ast::Value::Null => Ok(Item::new(Kind::Null, true)),
        ast::Value::Boolean(_) => Ok(Item::int(1, 1, false, false)),
        ast::Value::Number(n, _) => {
            if n.contains(['e', 'E']) {
                return Ok(Item::double(false));
            }
            if let Some((int, frac)) = n.split_once('.') {
                // A leading zero beyond `0.` counts differently in MySQL and MariaDB.
                if (int.len() > 1 && int.starts_with('0'))
                    || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
                {
                    return Err(format!("the number {n}"));
                }
                let prec = int.len().max(1) + frac.len();
                if prec > usize::from(MAX_PRECISION) || frac.len() > usize::from(MAX_SCALE) {
                    return Err(format!("the number {n}"));
                }
                return Ok(Item::new(
                    Kind::Decimal {
                        prec: prec as u32,
                        scale: frac.len() as u32,
                    },
                    false,
                ));
            }
            if (n.len() > 1 && n.starts_with('0')) || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("the number {n}"));
            }
            match n.parse::<u64>() {
                Ok(v) if v <= i64::MAX as u64 => {
                    let digits = n.len() as u32;
                    Ok(Item::int(digits, digits, false, false))
                }
                _ => Err(format!("the number {n} (past BIGINT)")),
            }
        }
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => Ok(Item::new(
            Kind::Str {
                chars: s.chars().count() as u64,
                coll: Collation::GeneralCi,
                column: false,
                fixed: false,
            },
            false,
        )),
        other => Err(format!("the literal {other}")),
    }
}

/// A column of the query's tables: its type, display length and NULL-ness.
fn column(qualifier: Option<&str>, name: &str, tables: &[Table]) -> Result<Item, Unknown> {
    let mut found = tables.iter().filter_map(|t| {
        if qualifier.is_some_and(|q| !q.eq_ignore_ascii_case(&t.qualifier)) {
            return None;
        }
        let i = t.def.column_index(name)?;
        Some((&t.def.columns[i], t.outer))
    });
    let (Some((c, outer)), None) = (found.next(), found.next()) else {
        // A column of a derived table, CTE or view whose type is not known: why.
        let why = tables.iter().find_map(|t| {
            if qualifier.is_some_and(|q| !q.eq_ignore_ascii_case(&t.qualifier)) {
                return None;
            }
            t.refused
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, why)| why.clone())
        });
        return Err(
            why.unwrap_or_else(|| format!("`{name}` (not a column of a table the query reads)"))
        );
    };
    let nullable = c.nullable || outer;
    let t = c.data_type;
    let kind = match t {
        t if t.is_integer() => {
            let len = t.display_length(Collation::Binary);
            let unsigned = t.is_unsigned();
            Kind::Int {
                len,
                prec: len - u32::from(!unsigned),
                unsigned,
            }
        }
        DataType::Decimal { precision, scale } if !c.real_unsigned => Kind::Decimal {
            prec: u32::from(precision),
            scale: u32::from(scale),
        },
        DataType::Float { fixed } | DataType::Double { fixed } => match fixed {
            Some((m, d)) => Kind::Double {
                len: u32::from(m),
                dec: d,
            },
            None => Kind::Double {
                len: t.display_length(Collation::Binary),
                dec: NOT_FIXED,
            },
        },
        DataType::Char(n) | DataType::VarChar(n) if c.collation != Collation::Binary => Kind::Str {
            chars: u64::from(n),
            coll: c.collation,
            column: true,
            fixed: matches!(t, DataType::Char(_)),
        },
        DataType::Text(limit) if c.collation != Collation::Binary => Kind::Str {
            chars: u64::from(limit) / MB_MAX,
            coll: c.collation,
            column: true,
            fixed: false,
        },
        DataType::Date
        | DataType::DateTime { .. }
        | DataType::Timestamp { .. }
        | DataType::Time { .. } => Kind::Temporal(t),
        other => {
            return Err(format!(
                "the {} column `{name}` in an expression",
                other.sql_name()
            ))
        }
    };
    Ok(Item {
        kind,
        nullable,
        exact: Some(t),
    })
}

/// NOW() / CURDATE() / CURTIME() and their synonyms, with `fsp` fraction digits.
fn current_time(name: &str, fsp: Option<u8>) -> Option<Item> {
    let t = match name {
        "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate" => {
            DataType::DateTime { fsp: fsp? }
        }
        "curdate" | "current_date" if fsp == Some(0) => DataType::Date,
        "curtime" | "current_time" => DataType::Time { fsp: fsp? },
        _ => return None,
    };
    Some(Item::new(Kind::Temporal(t), false))
}

/// `-x`: one more display character (for the sign), the operand's digits.
fn negate(x: Item) -> Result<Item, Unknown> {
    let kind = match x.kind {
        Kind::Int { len, prec, .. } => Kind::Int {
            len: len + 1,
            prec,
            unsigned: false,
        },
        Kind::Decimal { .. } => x.kind,
        Kind::Double { dec, .. } if dec >= NOT_FIXED => x.kind,
        // MySQL 8's display length for it is not known here (MariaDB's is the
        // operand's plus one).
        Kind::Double { .. } => return Err("unary minus of a DOUBLE of fixed decimals".into()),
        _ => return Err("unary minus of a string, date or NULL".into()),
    };
    Ok(Item::new(kind, x.nullable))
}

fn binary(
    left: &ast::Expr,
    op: &ast::BinaryOperator,
    right: &ast::Expr,
    tables: &[Table],
) -> Result<Item, Unknown> {
    use ast::BinaryOperator as B;
    match (left, op, right) {
        (_, B::Plus, ast::Expr::Interval(iv)) | (_, B::Minus, ast::Expr::Interval(iv)) => {
            return add_interval(left, iv, tables)
        }
        (ast::Expr::Interval(iv), B::Plus, _) => return add_interval(right, iv, tables),
        _ => {}
    }
    let l = type_of(left, tables)?;
    let r = type_of(right, tables)?;
    let nullable = l.nullable || r.nullable;
    match op {
        B::Plus | B::Minus | B::Multiply | B::Divide => arithmetic(op, &l, &r),
        B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::And | B::Or | B::Xor => {
            Ok(Item::int(1, 1, false, nullable))
        }
        B::Spaceship => Ok(Item::int(1, 1, false, false)),
        other => Err(format!("the operator {other}")),
    }
}

/// `+ - * /` as MySQL types them: a DOUBLE when an operand is one (or a string or
/// NULL, read as a double), of the decimals [`real_decimals`] gives it and MySQL's
/// display length (`float_length`; for `/` at most the dividend's integer part plus
/// the decimals); else a DECIMAL when an operand is one or for `/`, of
/// MySQL's precision and scale; else an integer of MySQL's precision, unsigned when
/// an operand is.
fn arithmetic(op: &ast::BinaryOperator, l: &Item, r: &Item) -> Result<Item, Unknown> {
    use ast::BinaryOperator as B;
    let divide = matches!(op, B::Divide);
    // Division by zero is NULL.
    let nullable = l.nullable || r.nullable || divide;
    let real = |i: &Item| matches!(i.kind, Kind::Double { .. } | Kind::Str { .. } | Kind::Null);
    if matches!(l.kind, Kind::Temporal(_)) || matches!(r.kind, Kind::Temporal(_)) {
        return Err("arithmetic on a date or time".into());
    }
    if real(l) || real(r) {
        let (Some(dl), Some(dr)) = (l.real_decimals(), r.real_decimals()) else {
            return Err("arithmetic on a date or time".into());
        };
        if !divide {
            let dec = real_decimals::combined(dl, dr);
            return Ok(if dec < NOT_FIXED {
                Item::fixed_double(dec, nullable)
            } else {
                Item::double(nullable)
            });
        }
        let dec = real_decimals::quotient(dl, dr);
        if dec >= NOT_FIXED {
            return Ok(Item::double(nullable));
        }
        let int_chars = match l.int_chars() {
            Some((a, b)) if a == b => a,
            _ => return Err("a DOUBLE of fixed decimals divided into a DECIMAL".into()),
        };
        let len = (int_chars + u32::from(dec)).min(real_decimals::float_length(dec));
        return Ok(Item::new(Kind::Double { len, dec }, nullable));
    }
    let ((p0, s0), (p1, s1)) = match (l.digits(), r.digits()) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err("arithmetic on these operands".into()),
    };
    let max_p = u32::from(MAX_PRECISION);
    let max_s = u32::from(MAX_SCALE);
    let (prec, scale) = match op {
        B::Plus | B::Minus => {
            let scale = s0.max(s1);
            ((p0 - s0).max(p1 - s1) + 1 + scale, scale)
        }
        B::Multiply => ((p0 + p1).min(max_p), (s0 + s1).min(max_s)),
        _ => {
            let inc = u32::from(DIV_INCREMENT);
            ((p0 + s1 + inc).min(max_p), (s0 + inc).min(max_s))
        }
    };
    let decimal =
        divide || matches!(l.kind, Kind::Decimal { .. }) || matches!(r.kind, Kind::Decimal { .. });
    if decimal {
        return Ok(Item::new(
            Kind::Decimal {
                prec: prec.min(max_p),
                scale,
            },
            nullable,
        ));
    }
    let unsigned = matches!(l.kind, Kind::Int { unsigned: true, .. })
        || matches!(r.kind, Kind::Int { unsigned: true, .. });
    Ok(Item::int(
        prec + u32::from(!unsigned),
        prec,
        unsigned,
        nullable,
    ))
}

/// `x + INTERVAL n unit`, DATE_ADD, DATE_SUB: a DATE stays a DATE for a unit of days or
/// longer, else a DATETIME (with six fraction digits for a unit of microseconds);
/// NULL-able (an out-of-range result is NULL).
fn add_interval(x: &ast::Expr, iv: &ast::Interval, tables: &[Table]) -> Result<Item, Unknown> {
    let unit = crate::bind::datetime::interval_unit(iv).map_err(|_| "this INTERVAL unit")?;
    let micro = matches!(
        unit,
        Unit::Microsecond
            | Unit::SecondMicrosecond
            | Unit::MinuteMicrosecond
            | Unit::HourMicrosecond
            | Unit::DayMicrosecond
    );
    let n = type_of(&iv.value, tables)?;
    // A fractional number of seconds gives the result fraction digits of its own.
    if unit == Unit::Second && !matches!(n.kind, Kind::Int { .. }) {
        return Err("an INTERVAL of seconds that is not an integer".into());
    }
    let date_unit = matches!(
        unit,
        Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
    );
    let fsp_of = |f: u8| if micro { 6 } else { f };
    let t = match type_of(x, tables)?.kind {
        Kind::Temporal(DataType::Date) if date_unit => DataType::Date,
        Kind::Temporal(DataType::Date) => DataType::DateTime { fsp: fsp_of(0) },
        Kind::Temporal(DataType::DateTime { fsp } | DataType::Timestamp { fsp }) => {
            DataType::DateTime { fsp: fsp_of(fsp) }
        }
        _ => return Err("DATE_ADD/DATE_SUB of a string, a time or a number".into()),
    };
    Ok(Item::new(Kind::Temporal(t), true))
}

/// The plain arguments of a function call (none for `NOW` without parentheses).
fn arguments(f: &ast::Function) -> Result<Vec<&ast::Expr>, Unknown> {
    let list = match &f.args {
        ast::FunctionArguments::None => return Ok(Vec::new()),
        ast::FunctionArguments::List(l) => l,
        ast::FunctionArguments::Subquery(_) => return Err("a subquery".into()),
    };
    if !list.clauses.is_empty() {
        return Err("a function with clauses in its argument list".into());
    }
    list.args
        .iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => Err("*".to_string()),
            _ => Err("a named or qualified-wildcard argument".to_string()),
        })
        .collect()
}

fn function(f: &ast::Function, tables: &[Table]) -> Result<Item, Unknown> {
    let name = crate::parse::object_name_parts(&f.name)
        .join(".")
        .to_ascii_lowercase();
    if f.over.is_some() {
        // The ranking functions are BIGINTs, never NULL; the others' types are not
        // derived here.
        return match name.as_str() {
            "row_number" | "rank" | "dense_rank" => Ok(Item::int(21, 20, false, false)),
            _ => Err(format!("the window function {}", name.to_uppercase())),
        };
    }
    if f.filter.is_some() || !f.within_group.is_empty() {
        return Err(format!("{} with FILTER/WITHIN GROUP", name.to_uppercase()));
    }
    // COUNT(*) / COUNT(x) / COUNT(DISTINCT …): a BIGINT, never NULL.
    if name == "count" {
        return Ok(Item::int(21, 20, false, false));
    }
    let args = arguments(f).map_err(|what| format!("{}({what})", name.to_uppercase()))?;
    let one = |args: &[&ast::Expr]| -> Result<Item, Unknown> {
        match args {
            [a] => type_of(a, tables),
            _ => Err(format!(
                "{} of {} arguments",
                name.to_uppercase(),
                args.len()
            )),
        }
    };
    match name.as_str() {
        "sum" | "avg" => {
            let x = one(&args)?;
            let kind = match (x.digits(), &x.kind) {
                (Some((p, s)), _) if name == "sum" => Kind::Decimal {
                    prec: (p + 22).min(u32::from(MAX_PRECISION)),
                    scale: s,
                },
                (Some((p, s)), _) => {
                    let inc = u32::from(DIV_INCREMENT);
                    Kind::Decimal {
                        prec: (p + inc).min(u32::from(MAX_PRECISION)),
                        scale: (s + inc).min(u32::from(MAX_SCALE)),
                    }
                }
                // SUM keeps a DOUBLE's decimals, AVG adds four (MySQL's display
                // length: float_length, for AVG at most the operand's plus four).
                (None, Kind::Double { len, dec }) if *dec < NOT_FIXED => {
                    if name == "sum" {
                        Kind::Double {
                            len: real_decimals::float_length(*dec),
                            dec: *dec,
                        }
                    } else {
                        let dec = real_decimals::averaged(*dec);
                        Kind::Double {
                            len: (len + u32::from(DIV_INCREMENT))
                                .min(real_decimals::float_length(dec)),
                            dec,
                        }
                    }
                }
                (None, Kind::Double { .. } | Kind::Str { .. } | Kind::Null) => {
                    Item::double(true).kind
                }
                _ => return Err(format!("{} of a date or time", name.to_uppercase())),
            };
            Ok(Item::new(kind, true))
        }
        "min" | "max" => {
            let mut x = one(&args)?;
            x.nullable = true;
            // Of a DOUBLE expression of fixed decimals (not a column, which keeps its
            // type): MySQL's display length for them.
            if let (Kind::Double { len, dec }, None) = (&mut x.kind, x.exact) {
                if *dec < NOT_FIXED {
                    *len = real_decimals::float_length(*dec);
                }
            }
            Ok(x)
        }
        "concat" if !args.is_empty() => {
            let items = args
                .iter()
                .map(|a| type_of(a, tables))
                .collect::<Result<Vec<_>, _>>()?;
            let mut chars = 0u64;
            for i in &items {
                chars += i.chars().ok_or("CONCAT of a date, time or double")?;
            }
            let coll = string_collation(&items)?;
            Ok(Item::new(
                Kind::Str {
                    chars,
                    coll,
                    column: false,
                    fixed: false,
                },
                string_result_nullable(items.iter().any(|i| i.nullable)),
            ))
        }
        "upper" | "lower" | "ucase" | "lcase" => {
            let x = one(&args)?;
            match x.kind {
                Kind::Str { chars, coll, .. } => Ok(Item::new(
                    Kind::Str {
                        chars,
                        coll,
                        column: true,
                        fixed: false,
                    },
                    string_result_nullable(x.nullable),
                )),
                _ => Err(format!("{} of a number or date", name.to_uppercase())),
            }
        }
        "length" | "char_length" | "character_length" | "octet_length" => {
            let x = one(&args)?;
            Ok(Item::int(10, 10, false, x.nullable))
        }
        "date_add" | "date_sub" => match args.as_slice() {
            [x, ast::Expr::Interval(iv)] => add_interval(x, iv, tables),
            _ => Err(format!("{} without an INTERVAL", name.to_uppercase())),
        },
        // The aggregated type of the arguments (MySQL's `aggregate_type`), NULL when
        // one is.
        "greatest" | "least" if args.len() >= 2 => {
            let items = args
                .iter()
                .map(|a| type_of(a, tables))
                .collect::<Result<Vec<_>, _>>()?;
            let nullable = items.iter().any(|i| i.nullable);
            aggregate(&items, nullable, false, &name.to_uppercase())
        }
        "ifnull" => match args.as_slice() {
            [a, b] => {
                let (a, b) = (type_of(a, tables)?, type_of(b, tables)?);
                let nullable = b.nullable;
                aggregate(&[a, b], nullable, false, "IFNULL")
            }
            _ => Err("IFNULL without two arguments".into()),
        },
        "coalesce" if !args.is_empty() => {
            let items = args
                .iter()
                .map(|a| type_of(a, tables))
                .collect::<Result<Vec<_>, _>>()?;
            let nullable = items.iter().all(|i| i.nullable);
            aggregate(&items, nullable, false, "COALESCE")
        }
        "if" => match args.as_slice() {
            [c, a, b] => {
                type_of(c, tables)?;
                let (a, b) = (type_of(a, tables)?, type_of(b, tables)?);
                let nullable = a.nullable || b.nullable;
                aggregate(&[a, b], nullable, false, "IF")
            }
            _ => Err("IF without three arguments".into()),
        },
        other => {
            if let Some(typed) = create_select_calls::call(other, &args, tables) {
                return typed;
            }
            let fsp = match args.as_slice() {
                [] => Some(0),
                [ast::Expr::Value(v)] => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<u8>().ok().filter(|p| *p <= 6),
                    _ => None,
                },
                _ => None,
            };
            current_time(other, fsp).ok_or_else(|| format!("the function {}", other.to_uppercase()))
        }
    }
}

/// A function of [`create_select_calls`] (its type, or why it has none).
fn call_of(name: &str, args: &[&ast::Expr], tables: &[Table]) -> Result<Item, Unknown> {
    create_select_calls::call(name, args, tables)
        .unwrap_or_else(|| Err(format!("the function {}", name.to_uppercase())))
}

/// The collation of a string function's result: the shared one of its column
/// operands, else (literals and numbers only) the connection's.
pub(crate) fn string_collation(items: &[Item]) -> Result<Collation, Unknown> {
    let mut out: Option<Collation> = None;
    for i in items {
        if let Kind::Str { coll, column, .. } = i.kind {
            if coll == Collation::Binary {
                return Err("a binary string operand".into());
            }
            if column {
                if out.is_some_and(|c| c != coll) {
                    return Err("string operands of different collations".into());
                }
                out = Some(coll);
            }
        }
    }
    Ok(out.unwrap_or(Collation::GeneralCi))
}

/// CAST(x AS type): CHAR(n) a string of n characters (of x's length without one),
/// SIGNED/UNSIGNED a BIGINT, DECIMAL(p,s), DOUBLE, and DATE/DATETIME/TIME (NULL-able:
/// a value that is no date is NULL).
fn cast(x: &ast::Expr, to: &ast::DataType, tables: &[Table]) -> Result<Item, Unknown> {
    use crate::expr::functions::CastFn;
    let (f, _, _) =
        crate::bind::func_types::cast_target(to).map_err(|_| format!("CAST AS {to}"))?;
    let x = type_of(x, tables)?;
    let nullable = x.nullable;
    let kind = match f {
        CastFn::Char(n) => {
            let chars = match n {
                Some(n) => u64::from(n),
                None => x.chars().ok_or("CAST AS CHAR of a date, time or double")?,
            };
            // CAST AS CHAR is one of MySQL's string functions: NULL-able in strict mode.
            return Ok(Item::new(
                Kind::Str {
                    chars,
                    coll: Collation::GeneralCi,
                    column: true,
                    fixed: false,
                },
                string_result_nullable(nullable),
            ));
        }
        CastFn::Signed | CastFn::Unsigned => {
            let len = x
                .chars()
                .ok_or("CAST AS SIGNED/UNSIGNED of a date, time or double")?;
            // MySQL keeps the operand's length (at most 21); under 10 characters its
            // column could be INT or BIGINT.
            if len < u64::from(BIGINT_FROM) {
                return Err(format!("CAST AS {to} of a value of {len} characters"));
            }
            let unsigned = matches!(f, CastFn::Unsigned);
            let len = len.min(21) as u32;
            Kind::Int {
                len,
                prec: len - u32::from(!unsigned),
                unsigned,
            }
        }
        CastFn::Decimal(p, s) => Kind::Decimal {
            prec: u32::from(p),
            scale: u32::from(s),
        },
        CastFn::Double => Item::double(false).kind,
        CastFn::Date => return Ok(Item::new(Kind::Temporal(DataType::Date), true)),
        CastFn::DateTime(fsp) => {
            return Ok(Item::new(Kind::Temporal(DataType::DateTime { fsp }), true))
        }
        CastFn::Time(fsp) => return Ok(Item::new(Kind::Temporal(DataType::Time { fsp }), true)),
        _ => return Err(format!("CAST AS {to}")),
    };
    Ok(Item::new(kind, nullable))
}

/// The integer type of a branch, by size (TINYINT 0 … BIGINT 4): its column's, or
/// BIGINT for an expression of 10 or more characters (MySQL's LONGLONG items); None
/// for a shorter expression, whose MySQL type is not known here.
fn int_rank(i: &Item) -> Option<u8> {
    match (i.exact, &i.kind) {
        (Some(DataType::TinyInt { .. }), _) => Some(0),
        (Some(DataType::SmallInt { .. }), _) => Some(1),
        (Some(DataType::MediumInt { .. }), _) => Some(2),
        (Some(DataType::Int { .. }), _) => Some(3),
        (Some(DataType::BigInt { .. }), _) => Some(4),
        (_, Kind::Int { len, .. }) if *len >= BIGINT_FROM => Some(4),
        _ => None,
    }
}

/// Branches of signed and unsigned integers, as MySQL 8's `Item::aggregate_type`: the
/// largest type, one size up when an unsigned branch has it (a signed type that holds
/// both ranges), and DECIMAL(`prec`, 0) when that branch is a BIGINT UNSIGNED, which
/// no integer type holds beside negative values.
fn mixed_sign_integers(
    typed: &[&Item],
    prec: u32,
    nullable: bool,
    what: &str,
) -> Result<Item, Unknown> {
    // A BIGINT UNSIGNED branch decides it whatever the others are.
    let wide = typed
        .iter()
        .any(|i| matches!(i.kind, Kind::Int { unsigned: true, .. }) && int_rank(i) == Some(4));
    if wide {
        return Ok(Item::new(Kind::Decimal { prec, scale: 0 }, nullable));
    }
    let ranks: Option<Vec<(u8, bool)>> = typed
        .iter()
        .map(|i| match i.kind {
            Kind::Int { unsigned, .. } => int_rank(i).map(|r| (r, unsigned)),
            _ => None,
        })
        .collect();
    let Some(ranks) = ranks else {
        return Err(format!(
            "{what} over signed and unsigned integers of short expressions"
        ));
    };
    let merged = ranks.iter().map(|r| r.0).max().unwrap_or(4);
    let bumped = merged + u8::from(ranks.iter().any(|&(r, u)| u && r == merged));
    let data_type = match bumped {
        0 => DataType::TinyInt { unsigned: false },
        1 => DataType::SmallInt { unsigned: false },
        2 => DataType::MediumInt { unsigned: false },
        3 => DataType::Int { unsigned: false },
        4 => DataType::BigInt { unsigned: false },
        _ => return Ok(Item::new(Kind::Decimal { prec, scale: 0 }, nullable)),
    };
    let len = if bumped == 4 { 20 } else { 11 };
    Ok(Item {
        kind: Kind::Int {
            len,
            prec: len - 1,
            unsigned: false,
        },
        nullable,
        exact: Some(data_type),
    })
}

/// The type of IF / IFNULL / COALESCE / CASE over `items`, or of a UNION's column
/// (`union`): MySQL's aggregation of the branches' types. Branches of one column type
/// keep it; integers become a BIGINT when 10 or more characters long (shorter ones of
/// different types are refused: MySQL's two ways of choosing the column may differ);
/// integers and DECIMALs a DECIMAL of the widest integer part and scale; with a
/// DOUBLE a DOUBLE; strings of one collation a VARCHAR of the longest (a UNION's CHAR
/// columns a CHAR); DATE and DATETIME a DATETIME. NULL branches only add NULL-ness.
pub(crate) fn aggregate(
    items: &[Item],
    nullable: bool,
    union: bool,
    what: &str,
) -> Result<Item, Unknown> {
    let typed: Vec<&Item> = items
        .iter()
        .filter(|i| !matches!(i.kind, Kind::Null))
        .collect();
    let Some(first) = typed.first() else {
        return Ok(Item::new(Kind::Null, true));
    };
    let refused = || format!("{what} over values of different types");
    let same_exact = first.exact.is_some() && typed.iter().all(|i| i.exact == first.exact);
    let numbers = typed.iter().all(|i| {
        matches!(
            i.kind,
            Kind::Int { .. } | Kind::Decimal { .. } | Kind::Double { .. }
        )
    });
    if numbers {
        if typed.iter().any(|i| matches!(i.kind, Kind::Double { .. })) {
            let exact = if same_exact { first.exact } else { None };
            // The largest decimals, and the widest integer part plus them (MySQL's
            // aggregation of float properties); none fixed when a branch has none.
            let dec = typed
                .iter()
                .filter_map(|i| i.real_decimals())
                .fold(0, real_decimals::combined);
            let kind = if dec >= NOT_FIXED {
                Item::double(nullable).kind
            } else {
                let mut low = 0;
                let mut high = 0;
                for i in &typed {
                    let (a, b) = i.int_chars().ok_or_else(refused)?;
                    low = low.max(a);
                    high = high.max(b);
                }
                if low != high && exact.is_none() {
                    return Err(format!(
                        "{what} over a DOUBLE of fixed decimals and a wider DECIMAL"
                    ));
                }
                Kind::Double {
                    len: high + u32::from(dec),
                    dec,
                }
            };
            return Ok(Item {
                kind,
                nullable,
                exact,
            });
        }
        if typed.iter().all(|i| matches!(i.kind, Kind::Int { .. })) {
            let mut len = 0;
            let mut prec = 0;
            let mut unsigned = None;
            for i in &typed {
                if let Kind::Int {
                    len: l,
                    prec: p,
                    unsigned: u,
                } = i.kind
                {
                    len = len.max(l);
                    prec = prec.max(p);
                    if unsigned.is_some_and(|x| x != u) {
                        return mixed_sign_integers(&typed, prec, nullable, what);
                    }
                    unsigned = Some(u);
                }
            }
            let unsigned = unsigned.unwrap_or(false);
            if same_exact {
                return Ok(Item {
                    kind: Kind::Int {
                        len,
                        prec,
                        unsigned,
                    },
                    nullable,
                    exact: first.exact,
                });
            }
            if len < BIGINT_FROM {
                return Err(format!(
                    "{what} over integers of different types shorter than 10 characters"
                ));
            }
            return Ok(Item::int(len, prec, unsigned, nullable));
        }
        let mut int_part = 0;
        let mut scale = 0;
        for i in &typed {
            let (p, s) = i.digits().ok_or_else(refused)?;
            int_part = int_part.max(p - s);
            scale = scale.max(s);
        }
        return Ok(Item::new(
            Kind::Decimal {
                prec: (int_part + scale).min(u32::from(MAX_PRECISION)),
                scale,
            },
            nullable,
        ));
    }
    if typed.iter().all(|i| matches!(i.kind, Kind::Str { .. })) {
        let chars = typed.iter().filter_map(|i| i.chars()).max().unwrap_or(0);
        let coll = string_collation(items)?;
        let fixed = union
            && typed
                .iter()
                .all(|i| matches!(i.kind, Kind::Str { fixed: true, .. }));
        return Ok(Item::new(
            Kind::Str {
                chars,
                coll,
                column: typed
                    .iter()
                    .any(|i| matches!(i.kind, Kind::Str { column: true, .. })),
                fixed,
            },
            nullable,
        ));
    }
    let mut out: Option<DataType> = None;
    for i in &typed {
        let Kind::Temporal(t) = i.kind else {
            return Err(refused());
        };
        out = Some(match (out, t) {
            (None, t) => t,
            (Some(a), b) if a == b => a,
            (
                Some(DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. }),
                DataType::Date | DataType::DateTime { .. } | DataType::Timestamp { .. },
            ) => DataType::DateTime {
                fsp: fsp(out).max(fsp(Some(t))),
            },
            _ => return Err(refused()),
        });
    }
    let t = out.ok_or_else(refused)?;
    Ok(Item {
        kind: Kind::Temporal(t),
        nullable,
        exact: None,
    })
}

fn fsp(t: Option<DataType>) -> u8 {
    match t {
        Some(DataType::DateTime { fsp } | DataType::Timestamp { fsp }) => fsp,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                ColumnDef::plain(
                    "k",
                    DataType::Int { unsigned: false },
                    false,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "n",
                    DataType::Int { unsigned: true },
                    true,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "ti",
                    DataType::TinyInt { unsigned: false },
                    true,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "d",
                    DataType::Decimal {
                        precision: 6,
                        scale: 2,
                    },
                    true,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "f",
                    DataType::Double { fixed: None },
                    true,
                    Collation::Binary,
                ),
                ColumnDef::plain("s", DataType::VarChar(10), true, Collation::GeneralCi),
                ColumnDef::plain("c", DataType::Char(4), false, Collation::GeneralCi),
                ColumnDef::plain("dt", DataType::Date, false, Collation::Binary),
                ColumnDef::plain("ts", DataType::DateTime { fsp: 3 }, true, Collation::Binary),
                ColumnDef::plain(
                    "fa",
                    DataType::Double {
                        fixed: Some((10, 2)),
                    },
                    true,
                    Collation::Binary,
                ),
                ColumnDef::plain(
                    "fb",
                    DataType::Float {
                        fixed: Some((7, 3)),
                    },
                    true,
                    Collation::Binary,
                ),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: vec![],
            checks: vec![],
            instant: None,
            default_collation: Default::default(),
        };
        Table {
            qualifier: "t".into(),
            def: Arc::new(def),
            outer: false,
            refused: Vec::new(),
            merged: false,
            derived: false,
        }
    }

    /// The column type and NULL-ness of an expression, or the 1235's text.
    fn ty(sql: &str) -> Result<(String, bool), String> {
        let item = type_of(&crate::parse::test_expr(sql), &[table()])?;
        let c = item.column("x")?;
        Ok((c.data_type.sql_name(), c.nullable))
    }

    fn ok(t: &str, nullable: bool) -> Result<(String, bool), String> {
        Ok((t.to_string(), nullable))
    }

    #[test]
    fn literals() {
        assert_eq!(ty("1"), ok("int", false));
        assert_eq!(ty("123456789"), ok("int", false));
        assert_eq!(ty("1234567890"), ok("bigint", false));
        assert_eq!(ty("-5"), ok("int", false));
        assert_eq!(ty("1.5"), ok("decimal(2,1)", false));
        assert_eq!(ty("0.5"), ok("decimal(2,1)", false));
        assert_eq!(ty("-123.450"), ok("decimal(6,3)", false));
        assert_eq!(ty("1e3"), ok("double", false));
        assert_eq!(ty("'abc'"), ok("varchar(3)", false));
        assert_eq!(ty("''"), ok("char(0)", false));
        assert_eq!(ty("NULL"), ok("binary(0)", true));
        assert_eq!(ty("TRUE"), ok("int", false));
        assert!(ty("99999999999999999999").is_err());
        assert!(ty("00.50").is_err());
    }

    #[test]
    fn arithmetic_as_mysql_8() {
        assert_eq!(ty("1+1"), ok("int", false));
        assert_eq!(ty("33333333333333333 + 3"), ok("bigint", false));
        assert_eq!(ty("k + 1"), ok("bigint", false));
        assert_eq!(ty("ti + 1"), ok("int", true));
        assert_eq!(ty("n + 1"), ok("bigint unsigned", true));
        assert_eq!(ty("k * 2"), ok("bigint", false));
        assert_eq!(ty("1.0 + 1"), ok("decimal(3,1)", false));
        assert_eq!(ty("d + 1"), ok("decimal(7,2)", true));
        assert_eq!(ty("d * d"), ok("decimal(12,4)", true));
        assert_eq!(ty("1 / 3"), ok("decimal(5,4)", true));
        assert_eq!(ty("k / 2"), ok("decimal(14,4)", true));
        assert_eq!(ty("d / 3"), ok("decimal(10,6)", true));
        assert_eq!(ty("f * 2"), ok("double", true));
        assert_eq!(ty("k + '1'"), ok("double", false));
        assert_eq!(ty("-d"), ok("decimal(6,2)", true));
        assert_eq!(ty("k > 1"), ok("int", false));
        assert!(ty("k % 2").is_err());
        assert!(ty("k DIV 2").is_err());
    }

    #[test]
    fn greatest_least_and_ranking_functions() {
        // The arguments' aggregated type: an integer of 11 characters is a BIGINT
        // (MySQL 8's integer function result), one column type kept, NULL-able with
        // a NULL-able argument.
        assert_eq!(ty("GREATEST(k, ti)"), ok("bigint", true));
        assert_eq!(ty("GREATEST(k, k)"), ok("int", false));
        assert_eq!(ty("LEAST(s, 'b')"), ok("varchar(10)", true));
        assert_eq!(ty("LEAST(d, 1)"), ok("decimal(6,2)", true));
        assert_eq!(ty("GREATEST(dt, ts)"), ok("datetime(3)", true));
        assert!(ty("GREATEST(k)").is_err());
        assert!(ty("GREATEST(dt, 'x')").is_err());
        assert_eq!(ty("ROW_NUMBER() OVER ()"), ok("bigint", false));
        assert_eq!(ty("RANK() OVER (ORDER BY k)"), ok("bigint", false));
        assert!(ty("SUM(k) OVER ()").is_err());
    }

    #[test]
    fn doubles_of_fixed_decimals_as_mysql() {
        // + - *: the largest decimals, float_length's display length.
        assert_eq!(ty("fa * 100"), ok("double(19,2)", true));
        assert_eq!(ty("fa + fb"), ok("double(20,3)", true));
        assert_eq!(ty("fa * d"), ok("double(19,2)", true));
        assert_eq!(ty("fa + 1.5"), ok("double(19,2)", true));
        assert_eq!(ty("fa + NULL"), ok("double(19,2)", true));
        assert_eq!(ty("fa * f"), ok("double", true));
        assert_eq!(ty("fa * 1e0"), ok("double", true));
        assert_eq!(ty("fa * '2'"), ok("double", true));
        // `/`: four more, at most the dividend's integer part plus them.
        assert_eq!(ty("fa / 2"), ok("double(14,6)", true));
        assert_eq!(ty("fb / 3"), ok("double(11,7)", true));
        assert_eq!(ty("k / fa"), ok("double(17,6)", true));
        assert_eq!(ty("fa / f"), ok("double", true));
        assert!(ty("d / fa").is_err());
        assert!(ty("-fa").is_err());
        // Aggregates and branches.
        assert_eq!(ty("SUM(fa)"), ok("double(19,2)", true));
        assert_eq!(ty("AVG(fa)"), ok("double(14,6)", true));
        assert_eq!(ty("AVG(fa * 2)"), ok("double(23,6)", true));
        assert_eq!(ty("IF(k > 0, fa, fb)"), ok("double(11,3)", true));
        assert_eq!(ty("IFNULL(fa, k)"), ok("double(13,2)", false));
        assert_eq!(ty("COALESCE(fa, fb, k)"), ok("double(14,3)", false));
        assert_eq!(ty("IF(k > 0, fa, 1.5)"), ok("double(10,2)", true));
        assert_eq!(ty("IF(k > 0, fa, f)"), ok("double", true));
        assert_eq!(ty("IFNULL(fa, fa)"), ok("double(10,2)", true));
        assert_eq!(ty("MAX(IF(k > 0, fa, fb))"), ok("double(20,3)", true));
        assert_eq!(ty("MIN(fa)"), ok("double(10,2)", true));
        assert_eq!(ty("SUM(k / fa)"), ok("double(23,6)", true));
    }

    #[test]
    fn functions_as_mysql_8() {
        assert_eq!(ty("COUNT(*)"), ok("bigint", false));
        assert_eq!(ty("SUM(k)"), ok("decimal(32,0)", true));
        assert_eq!(ty("AVG(k)"), ok("decimal(14,4)", true));
        assert_eq!(ty("SUM(d)"), ok("decimal(28,2)", true));
        assert_eq!(ty("AVG(d)"), ok("decimal(10,6)", true));
        assert_eq!(ty("SUM(k + 1)"), ok("decimal(33,0)", true));
        assert_eq!(ty("SUM(f)"), ok("double", true));
        assert_eq!(ty("MAX(ti)"), ok("tinyint", true));
        assert_eq!(ty("MIN(c)"), ok("char(4)", true));
        assert_eq!(ty("CONCAT(s, '!')"), ok("varchar(11)", true));
        assert_eq!(ty("CONCAT(c, '-', k)"), ok("varchar(16)", false));
        assert_eq!(ty("CONCAT(REPEAT('a', 3))"), ok("varchar(3)", false));
        assert!(ty("CONCAT(SOUNDEX('a'))").is_err());
        assert_eq!(ty("UPPER(c)"), ok("varchar(4)", false));
        assert_eq!(ty("NOW()"), ok("datetime", false));
        assert_eq!(ty("NOW(3)"), ok("datetime(3)", false));
        assert_eq!(ty("CURDATE()"), ok("date", false));
        assert_eq!(ty("DATE_ADD(dt, INTERVAL 1 DAY)"), ok("date", true));
        assert_eq!(ty("DATE_ADD(dt, INTERVAL 1 HOUR)"), ok("datetime", true));
        assert_eq!(ty("ts - INTERVAL 2 MONTH"), ok("datetime(3)", true));
        assert_eq!(ty("CAST(k AS CHAR(5))"), ok("varchar(5)", false));
        assert_eq!(ty("CAST(k AS SIGNED)"), ok("bigint", false));
        assert_eq!(ty("CAST(n AS UNSIGNED)"), ok("bigint unsigned", true));
        assert!(ty("CAST(1 AS SIGNED)").is_err());
        assert_eq!(ty("CAST(k AS DECIMAL(8,3))"), ok("decimal(8,3)", false));
        assert_eq!(ty("CAST(s AS DATE)"), ok("date", true));
        assert!(ty("GROUP_CONCAT(s)").is_err());
    }

    #[test]
    fn branches_aggregate_as_mysql_8() {
        assert_eq!(ty("IFNULL(ti, ti)"), ok("tinyint", true));
        // MySQL 8's Item::aggregate_type: one size up, DECIMAL past BIGINT UNSIGNED.
        assert_eq!(ty("IFNULL(n, k)"), ok("bigint", false));
        assert_eq!(
            ty("IFNULL(CAST(k AS UNSIGNED), k)"),
            ok("decimal(11,0)", false)
        );
        assert_eq!(ty("IFNULL(s, 'abc')"), ok("varchar(10)", false));
        assert_eq!(ty("COALESCE(d, 1)"), ok("decimal(6,2)", false));
        assert_eq!(ty("COALESCE(d, k)"), ok("decimal(12,2)", false));
        assert_eq!(ty("IF(k > 1, f, d)"), ok("double", true));
        assert_eq!(ty("IF(k > 1, 'a', NULL)"), ok("varchar(1)", true));
        assert_eq!(
            ty("CASE WHEN k > 1 THEN dt ELSE ts END"),
            ok("datetime(3)", true)
        );
        assert_eq!(
            ty("CASE k WHEN 1 THEN 'x' ELSE 'yy' END"),
            ok("varchar(2)", false)
        );
        assert!(ty("IF(k > 1, 1, 2)").is_err());
        assert!(ty("IF(k > 1, 'a', 1)").is_err());
    }

    #[test]
    fn union_columns_aggregate_as_mysql_8() {
        let t = [table()];
        let of = |sql: &str| type_of(&crate::parse::test_expr(sql), &t).unwrap();
        let union = |a: &str, b: &str| {
            let items = [of(a), of(b)];
            let nullable = items.iter().any(|i| i.nullable);
            let c = aggregate(&items, nullable, true, "UNION")?.column("x")?;
            Ok::<_, Unknown>((c.data_type.sql_name(), c.nullable))
        };
        assert_eq!(union("c", "c"), ok("char(4)", false));
        assert_eq!(union("c", "s"), ok("varchar(10)", true));
        // A BIGINT UNSIGNED expression beside an INT: DECIMAL of the wider integer part.
        assert_eq!(union("k", "n + 0"), ok("decimal(11,0)", true));
        // INT UNSIGNED beside INT: one size up.
        assert_eq!(union("k", "n"), ok("bigint", true));
        assert_eq!(union("k", "k"), ok("int", false));
        assert_eq!(union("d", "1.5"), ok("decimal(6,2)", true));
        assert_eq!(union("NULL", "dt"), ok("date", true));
        assert!(union("1", "2").is_err());
    }

    #[test]
    fn long_strings_are_text() {
        let long = format!("'{}'", "a".repeat(513));
        assert_eq!(ty(&long), ok("text", false));
        let mut i = Item::new(
            Kind::Str {
                chars: 5_000_000,
                coll: Collation::GeneralCi,
                column: false,
                fixed: false,
            },
            true,
        );
        assert_eq!(
            i.column("x").map(|c| c.data_type.sql_name()),
            Ok("longtext".into())
        );
        i.kind = Kind::Str {
            chars: 20_000,
            coll: Collation::GeneralCi,
            column: false,
            fixed: false,
        };
        assert_eq!(
            i.column("x").map(|c| c.data_type.sql_name()),
            Ok("mediumtext".into())
        );
    }
}
