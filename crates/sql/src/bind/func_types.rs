//! Result types of scalar function calls and CAST/CONVERT targets, as MySQL 8 types
//! them: the static type a client sees in the column metadata (a number, a text or
//! binary string, a date) and the collation of a string result. A string function
//! works in, and returns, the collation its string arguments share: binary when any of
//! them is binary (so `REVERSE(blob)` reverses bytes), otherwise theirs.

use super::{arith_type, round_type, unify, SType};
use crate::expr::functions::{CastFn, Func, HashFn, MathFn, RegexpFn, StrFn};
use crate::expr::json::Returns;
use crate::expr::{ArithOp, Expr};
use sqlparser::ast;
use strata_types::{Collation, Error, Result};

/// The collation string arguments share: binary if any is a binary string, else a
/// case-sensitive one if any is, else the general one. Arguments that are not strings
/// (numbers read as text) do not count.
pub fn shared_collation(types: &[SType], colls: &[Collation]) -> Collation {
    let mut out = Collation::GeneralCi;
    for (t, c) in types.iter().zip(colls) {
        match t {
            SType::Binary => return Collation::Binary,
            SType::Text | SType::Null if *c == Collation::Binary => return Collation::Binary,
            SType::Text if *c == Collation::Utf8Bin => out = Collation::Utf8Bin,
            _ => {}
        }
    }
    out
}

/// A string result in collation `c`.
fn string(c: Collation) -> (SType, Collation) {
    if c == Collation::Binary {
        (SType::Binary, c)
    } else {
        (SType::Text, c)
    }
}

/// The function with the collation its arguments decide (string and regular
/// expression functions carry it), and its result's type and collation.
pub fn call_type(
    func: Func,
    types: &[SType],
    colls: &[Collation],
    bound: &[Expr],
) -> Result<(Func, SType, Collation)> {
    use SType::*;
    let text = (Text, Collation::GeneralCi);
    let num = |t: SType| match t {
        Text | Binary | Date | DateTime(_) | Time(_) => SType::DOUBLE,
        t => t,
    };
    let (func, (ty, coll)) = match func {
        Func::Str(f, _) => {
            // Which arguments are the strings the function works on.
            let strings = match f {
                StrFn::Elt | StrFn::MakeSet | StrFn::ExportSet => &types[1..],
                _ => types,
            };
            let c = shared_collation(strings, &colls[types.len() - strings.len()..]);
            use StrFn::*;
            let out = match f {
                Length | CharLength | BitLength | Field | FindInSet | Instr | Locate | Strcmp
                | Ascii | Ord => (Int, Collation::GeneralCi),
                Hex | ToBase64 | Bin | Oct | Conv | Format | Space => text,
                Unhex | FromBase64 => (Binary, Collation::Binary),
                WeightString => {
                    // A number or date weighs as its text's bytes.
                    let c = if types[0] == Text {
                        c
                    } else {
                        Collation::Binary
                    };
                    return Ok((Func::Str(f, c), Binary, Collation::Binary));
                }
                _ => string(c),
            };
            (Func::Str(f, c), out)
        }
        Func::Regexp(f, _) => {
            let c = shared_collation(&types[..2], &colls[..2]);
            let out = match f {
                RegexpFn::Like | RegexpFn::Instr => (Int, Collation::GeneralCi),
                RegexpFn::Substr | RegexpFn::Replace => string(c),
            };
            (Func::Regexp(f, c), out)
        }
        Func::Math(f) => {
            use MathFn::*;
            let t = match f {
                Pi => {
                    // MySQL shows PI() with 6 decimals (its declared scale), which a
                    // DOUBLE result here cannot express.
                    return Err(Error::NotSupported("PI()".into()));
                }
                Abs => num(types[0]),
                Sign => Int,
                Round | Truncate => round_type(num(types[0]), bound.get(1)),
                Floor | Ceil => match num(types[0]) {
                    Decimal(_) => Int,
                    // MySQL's CEIL/FLOOR of a DOUBLE shows no decimals.
                    Double(_) => Double(0),
                    t => t,
                },
                Mod => arith_type(ArithOp::Mod, types[0], types[1]),
                Crc32 => UInt,
                BitCount | Interval => Int,
                Pow | Sqrt | Exp | Ln | Log | Log2 | Log10 | Sin | Cos | Tan | Cot | Asin
                | Acos | Atan | Degrees | Radians | Rand => SType::DOUBLE,
            };
            (func, (t, Collation::GeneralCi))
        }
        Func::Hash(f) => {
            let out = match f {
                HashFn::Md5 | HashFn::Sha1 | HashFn::Sha2 | HashFn::Uuid | HashFn::BinToUuid => {
                    text
                }
                HashFn::Crc32 | HashFn::UuidShort => (UInt, Collation::GeneralCi),
                HashFn::UuidToBin => (Binary, Collation::Binary),
                HashFn::IsUuid => (Int, Collation::GeneralCi),
            };
            (func, out)
        }
        Func::Database
        | Func::Version
        | Func::User
        | Func::CurrentUser
        | Func::CurrentRole
        | Func::InetNtoa => (func, text),
        Func::LastInsertId | Func::ConnectionId | Func::InetAton | Func::FoundRows => {
            (func, (UInt, Collation::GeneralCi))
        }
        Func::RowCount | Func::Sleep | Func::Benchmark | Func::UserLock(_) => {
            (func, (Int, Collation::GeneralCi))
        }
        Func::LoadFile => (func, (Binary, Collation::Binary)),
        Func::Gtid(f) => match f {
            crate::expr::functions::gtid::GtidFn::Subtract => (func, text),
            _ => (func, (Int, Collation::GeneralCi)),
        },
        Func::If => {
            let t = unify(types[1], types[2]);
            (func, (t, branch_collation(t, &types[1..], &colls[1..])))
        }
        Func::IfNull | Func::Coalesce | Func::Greatest(_) | Func::Least(_) => {
            let t = types.iter().fold(Null, |a, b| unify(a, *b));
            (func, (t, branch_collation(t, types, colls)))
        }
        Func::NullIf(_) => (func, (types[0], colls[0])),
        Func::Json(f) => {
            if !f.takes(types.len()) {
                return Err(Error::WrongParamCount(f.name().into()));
            }
            let t = match f.returns() {
                Returns::Json => Json,
                Returns::Int => Int,
                Returns::Text => Text,
            };
            (func, (t, Collation::GeneralCi))
        }
        other => (other, text),
    };
    Ok((func, ty, coll))
}

/// The collation of IF/IFNULL/COALESCE/GREATEST/LEAST: the shared one of its string
/// branches.
fn branch_collation(t: SType, types: &[SType], colls: &[Collation]) -> Collation {
    match t {
        SType::Text | SType::Binary => shared_collation(types, colls),
        _ => Collation::GeneralCi,
    }
}

/// The CAST/CONVERT target: the conversion, its static type and collation.
pub fn cast_target(dt: &ast::DataType) -> Result<(CastFn, SType, Collation)> {
    use ast::DataType as D;
    let char_len = |l: &Option<ast::CharacterLength>| match l {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => {
            Some((*length).min(u32::MAX as u64) as u32)
        }
        _ => None,
    };
    let fsp = |p: &Option<u64>| -> Result<u8> {
        match p {
            None => Ok(0),
            Some(p) if *p <= 6 => Ok(*p as u8),
            Some(p) => Err(Error::TooBigPrecision {
                precision: *p,
                func: "CAST".into(),
            }),
        }
    };
    Ok(match dt {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => {
            (CastFn::Signed, SType::Int, Collation::GeneralCi)
        }
        D::Unsigned | D::UnsignedInteger => (CastFn::Unsigned, SType::UInt, Collation::GeneralCi),
        D::Char(l) | D::Varchar(l) | D::Nvarchar(l) => {
            (CastFn::Char(char_len(l)), SType::Text, Collation::GeneralCi)
        }
        D::Text => (CastFn::Char(None), SType::Text, Collation::GeneralCi),
        D::Binary(n) => (
            CastFn::Binary(n.map(|n| n.min(u32::MAX as u64) as u32)),
            SType::Binary,
            Collation::Binary,
        ),
        D::Varbinary(_) | D::Blob(_) => (CastFn::Binary(None), SType::Binary, Collation::Binary),
        D::Double(_) | D::DoublePrecision | D::Real => {
            (CastFn::Double, SType::DOUBLE, Collation::GeneralCi)
        }
        D::Float(info) => match info {
            ast::ExactNumberInfo::Precision(p) if *p > 24 => {
                (CastFn::Double, SType::DOUBLE, Collation::GeneralCi)
            }
            // Single precision: a double rounded to an f32, its result column FLOAT
            // (the planner's metadata), shown with FLOAT's digits.
            _ => (CastFn::Float, SType::DOUBLE, Collation::GeneralCi),
        },
        D::Decimal(info) | D::Numeric(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s as u64),
            };
            if p > 65 || s > 30 || s > p {
                return Err(Error::NotSupported(format!(
                    "CAST AS DECIMAL({p},{s}) (at most 65 digits, 30 after the point)"
                )));
            }
            (
                CastFn::Decimal(p as u8, s as u8),
                SType::Decimal(s as u8),
                Collation::GeneralCi,
            )
        }
        D::Datetime(p) | D::Timestamp(p, _) => {
            // With fraction digits the value is its text (as the date/time library
            // emits a DATETIME(fsp)); the type stays DATETIME.
            let f = fsp(p)?;
            (
                CastFn::DateTime(f),
                SType::DateTime(f),
                Collation::GeneralCi,
            )
        }
        D::Date => (CastFn::Date, SType::Date, Collation::GeneralCi),
        D::Time(p, _) => {
            let f = fsp(p)?;
            (CastFn::Time(f), SType::Time(f), Collation::GeneralCi)
        }
        D::JSON => return Err(Error::NotSupported("CAST AS JSON".into())),
        other => return Err(Error::NotSupported(format!("CAST AS {other}"))),
    })
}

/// `CAST(x AS CHAR[(n)] CHARACTER SET cs)` / `CONVERT(x, CHAR[(n)] CHARACTER SET cs)`:
/// `CHARACTER SET binary` makes it `BINARY[(n)]` (as in MySQL); a utf8 character set is
/// `CHAR[(n)]`; any other character set is what [`convert_using`] says of it (1235 for
/// the ones Strata does not keep text in, 1115 unknown).
pub fn cast_target_with_charset(
    dt: &ast::DataType,
    charset: &str,
) -> Result<(CastFn, SType, Collation)> {
    let ast::DataType::Char(len) = dt else {
        return Err(Error::NotSupported(format!(
            "CAST AS {dt} CHARACTER SET {charset}"
        )));
    };
    if charset.eq_ignore_ascii_case("binary") {
        let n = match len {
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                Some((*length).min(u32::MAX as u64) as u32)
            }
            _ => None,
        };
        return Ok((CastFn::Binary(n), SType::Binary, Collation::Binary));
    }
    convert_using(charset)?;
    cast_target(dt)
}

/// CONVERT(x USING charset): text in that character set's default collation.
pub fn convert_using(charset: &str) -> Result<(CastFn, SType, Collation)> {
    match charset.to_ascii_lowercase().as_str() {
        "utf8mb4" | "utf8" | "utf8mb3" => {
            Ok((CastFn::Char(None), SType::Text, Collation::GeneralCi))
        }
        "binary" => Ok((CastFn::Binary(None), SType::Binary, Collation::Binary)),
        "latin1" | "ascii" | "ucs2" | "utf16" | "utf32" | "gbk" | "sjis" | "big5" => {
            Err(Error::NotSupported(format!(
                "CONVERT(… USING {charset}) (Strata keeps text as utf8mb4)"
            )))
        }
        _ => Err(Error::UnknownCharset(charset.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::functions::lookup;
    use strata_types::Value;

    fn typed(name: &str, args: &[(SType, Collation)]) -> Result<(Func, SType, Collation)> {
        let (f, _, _) = lookup(name).expect("known function");
        let types: Vec<SType> = args.iter().map(|a| a.0).collect();
        let colls: Vec<Collation> = args.iter().map(|a| a.1).collect();
        let bound: Vec<Expr> = args.iter().map(|_| Expr::Literal(Value::Int(2))).collect();
        call_type(f, &types, &colls, &bound)
    }

    const TEXT: (SType, Collation) = (SType::Text, Collation::GeneralCi);
    const BIN: (SType, Collation) = (SType::Binary, Collation::Binary);
    const INT: (SType, Collation) = (SType::Int, Collation::GeneralCi);

    #[test]
    fn string_results_follow_their_arguments_collation() {
        let (f, t, c) = typed("reverse", &[BIN]).unwrap();
        assert_eq!(
            (f, t, c),
            (
                Func::Str(StrFn::Reverse, Collation::Binary),
                SType::Binary,
                Collation::Binary
            )
        );
        let (_, t, c) = typed("lpad", &[(SType::Text, Collation::Utf8Bin), INT, TEXT]).unwrap();
        assert_eq!((t, c), (SType::Text, Collation::Utf8Bin));
        assert_eq!(typed("locate", &[TEXT, TEXT]).unwrap().1, SType::Int);
        assert_eq!(typed("unhex", &[TEXT]).unwrap().1, SType::Binary);
        assert_eq!(typed("hex", &[BIN]).unwrap().1, SType::Text);
        // ELT's index does not decide the collation; its strings do.
        assert_eq!(typed("elt", &[INT, BIN]).unwrap().2, Collation::Binary);
        assert_eq!(
            typed("regexp_substr", &[TEXT, TEXT]).unwrap().0,
            Func::Regexp(RegexpFn::Substr, Collation::GeneralCi)
        );
    }

    #[test]
    fn numeric_and_digest_results() {
        assert_eq!(typed("crc32", &[TEXT]).unwrap().1, SType::UInt);
        assert_eq!(
            typed("sign", &[(SType::Decimal(2), Collation::GeneralCi)])
                .unwrap()
                .1,
            SType::Int
        );
        assert_eq!(typed("abs", &[TEXT]).unwrap().1, SType::DOUBLE);
        assert_eq!(typed("pow", &[INT, INT]).unwrap().1, SType::DOUBLE);
        assert_eq!(typed("md5", &[TEXT]).unwrap().1, SType::Text);
        assert_eq!(typed("uuid_to_bin", &[TEXT]).unwrap().1, SType::Binary);
        assert_eq!(typed("pi", &[]).unwrap_err().code(), 1235);
    }

    #[test]
    fn cast_targets() {
        use sqlparser::ast::DataType as D;
        assert_eq!(
            cast_target(&D::Binary(Some(4))).unwrap().0,
            CastFn::Binary(Some(4))
        );
        assert_eq!(
            cast_target(&D::Float(ast::ExactNumberInfo::None))
                .unwrap()
                .0,
            CastFn::Float
        );
        assert_eq!(
            cast_target(&D::Float(ast::ExactNumberInfo::Precision(53)))
                .unwrap()
                .1,
            SType::DOUBLE
        );
        assert_eq!(cast_target(&D::JSON).unwrap_err().code(), 1235);
        assert_eq!(cast_target(&D::Datetime(Some(7))).unwrap_err().code(), 1426);
        assert_eq!(convert_using("latin1").unwrap_err().code(), 1235);
        assert_eq!(convert_using("nope").unwrap_err().code(), 1115);
        assert_eq!(convert_using("binary").unwrap().1, SType::Binary);
        let char3 = D::Char(Some(ast::CharacterLength::IntegerLength {
            length: 3,
            unit: None,
        }));
        assert_eq!(
            cast_target_with_charset(&char3, "BINARY").unwrap().0,
            CastFn::Binary(Some(3))
        );
        assert_eq!(
            cast_target_with_charset(&char3, "utf8mb4").unwrap().0,
            CastFn::Char(Some(3))
        );
        assert_eq!(
            cast_target_with_charset(&D::Char(None), "latin1")
                .unwrap_err()
                .code(),
            1235
        );
        assert_eq!(
            cast_target_with_charset(&D::Char(None), "koi8")
                .unwrap_err()
                .code(),
            1115
        );
    }
}
