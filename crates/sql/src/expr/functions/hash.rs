//! Digests: MD5, SHA1/SHA, SHA2(x, 224|256|384|512) as lower-case hex text, and CRC32
//! (in `math.rs`, since it is a number). SHA2 with another length is NULL with warning
//! 1583, as MySQL.

use super::{arg, text, HashFn};
use crate::expr::int_context::int_arg;
use crate::expr::{EvalCtx, Expr, WarnLevel};
use md5::Digest;
use strata_types::{Result, Value};

fn hex(bytes: &[u8]) -> Value {
    Value::str(&bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

pub(super) fn call(f: HashFn, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    let v = arg(args, 0, row, cx)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let data = text(&v);
    Ok(match f {
        HashFn::Md5 => hex(&md5::Md5::digest(&data)),
        HashFn::Sha1 => hex(&sha1::Sha1::digest(&data)),
        HashFn::Sha2 => {
            let bits = arg(args, 1, row, cx)?;
            match int_arg(&bits, cx) {
                None => Value::Null,
                Some(224) => hex(&sha2::Sha224::digest(&data)),
                Some(0) | Some(256) => hex(&sha2::Sha256::digest(&data)),
                Some(384) => hex(&sha2::Sha384::digest(&data)),
                Some(512) => hex(&sha2::Sha512::digest(&data)),
                Some(_) => {
                    cx.env.warn(
                        WarnLevel::Warning,
                        1583,
                        "Incorrect parameters in the call to native function 'sha2'".into(),
                    );
                    Value::Null
                }
            }
        }
        HashFn::Crc32 => Value::UInt(crc32fast::hash(&data) as u64),
        other => unreachable!("{other:?} is not a digest"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_env::{run, show, TestEnv};
    use super::super::Func;
    use super::*;

    #[test]
    fn digests_are_lower_case_hex() {
        let env = TestEnv::default();
        let h = |f, args| show(run(Func::Hash(f), args, &env));
        assert_eq!(
            h(HashFn::Md5, vec![Value::str("abc")]),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(
            h(HashFn::Sha1, vec![Value::str("abc")]),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            h(HashFn::Sha2, vec![Value::str("abc"), Value::Int(224)]),
            "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"
        );
        assert_eq!(h(HashFn::Md5, vec![Value::Null]), "NULL");
        assert_eq!(
            h(HashFn::Sha2, vec![Value::str("abc"), Value::Int(7)]),
            "NULL"
        );
        assert_eq!(env.codes(), vec![1583]);
    }
}
