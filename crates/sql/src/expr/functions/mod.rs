//! Scalar functions by name: the name table ([`lookup`]) and the dispatch ([`call`]).
//! The binder looks a name up and checks the argument count (its result type is chosen
//! in `bind/func_types.rs`); [`call`] evaluates. Each family lives in its own file:
//! session information (`info.rs`), control flow (`control.rs`), strings (`string.rs`
//! building and cutting, `string_search.rs` positions and lists, `string_code.rs`
//! encodings and number bases), numbers (`math.rs`, MySQL's generator in `rand.rs`),
//! digests (`hash.rs`), UUIDs (`uuid.rs`), GTID sets (`gtid.rs`), regular expressions (`regexp.rs`), CAST and
//! CONVERT (`cast.rs`), IPv4 (`network.rs`). Date/time functions are in
//! `expr/datetime/`.

pub(crate) mod cast;
mod control;
pub mod gtid;
mod hash;
mod info;
mod math;
mod network;
pub mod rand;
mod regexp;
mod string;
mod string_code;
mod string_search;
mod user_lock;
mod uuid;

pub use cast::CastFn;
pub use math::MathFn;
pub use regexp::RegexpFn;
pub use string::{StrFn, TrimSide};

use crate::expr::{EvalCtx, Expr};
use strata_types::{Collation, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Database,
    Version,
    LastInsertId,
    ConnectionId,
    User,
    /// CURRENT_USER(): the account the session authenticated as (`user@host pattern`).
    CurrentUser,
    /// CURRENT_ROLE(): the session's active roles (`NONE` without any).
    CurrentRole,
    InetAton,
    InetNtoa,
    If,
    IfNull,
    /// NULLIF, GREATEST and LEAST compare their arguments under the collation the
    /// binder aggregates from them (`bind::pick_coll`, as a comparison does).
    NullIf(Collation),
    Coalesce,
    Greatest(Collation),
    Least(Collation),
    FoundRows,
    RowCount,
    /// A string function, with the collation of its arguments: it decides whether the
    /// function works on characters or bytes (`binary`) and how LOCATE, FIELD,
    /// FIND_IN_SET and STRCMP compare.
    Str(StrFn, Collation),
    /// A numeric function (`math.rs`).
    Math(MathFn),
    /// MD5, SHA1, SHA2, CRC32 (`hash.rs`) and the UUID functions (`uuid.rs`).
    Hash(HashFn),
    /// REGEXP / RLIKE and the REGEXP_* functions, with the collation of the arguments
    /// (case-insensitive unless it is a binary or `_bin` one).
    Regexp(RegexpFn, Collation),
    /// CAST(x AS type), CONVERT(x, type), CONVERT(x USING cs) (`cast.rs`).
    Cast(CastFn),
    /// A date/time function (`expr/datetime/functions.rs`); `date_arg` when its first argument is a
    /// DATE-typed expression.
    Date {
        f: crate::expr::datetime::functions::DateFn,
        date_arg: bool,
    },
    /// CHAR(n, …): the bytes of each integer, big-endian. With `USING utf8mb4` (`text`)
    /// the result is text, NULL when the bytes are not UTF-8.
    Char {
        text: bool,
    },
    /// Not callable by name: the binder wraps a decimal-typed IF, IFNULL, COALESCE,
    /// GREATEST, LEAST or CASE in it, so that its value is a DECIMAL shown at the
    /// expression's declared scale whichever branch it came from, as MySQL converts
    /// every branch to the result type (`IF(1, 2, 1.25)` is `2.00`).
    ShowScale(u8),
    /// Not callable by name: the binder wraps a DOUBLE-typed IF, IFNULL, COALESCE,
    /// GREATEST, LEAST or CASE in it, so that an integer or decimal branch's value is a
    /// double as MySQL converts it (`IF(c, int_col, double_col) * 2.5` multiplies
    /// doubles, not exact decimals; `/` of it is a double quotient).
    ShowDouble,
    /// Not callable by name: the binder wraps a signed-integer-typed IF, IFNULL,
    /// COALESCE, GREATEST, LEAST or CASE in it, so that a value from an UNSIGNED branch
    /// is signed where it fits (`COALESCE(unsigned_col, int_col) - 5` may be negative,
    /// as in MySQL, where it would otherwise be an UNSIGNED subtraction and 1690).
    ShowSigned,
    /// Not callable by name: the binder wraps a FLOAT column read as text (CAST AS
    /// CHAR, CONCAT) in it, so it reads as MySQL shows a FLOAT (`0.1`, not the
    /// f64 widening `0.10000000149011612`).
    ShowFloat,
    /// Not callable by name: the binder wraps a FLOAT(M,D) / DOUBLE(M,D) column read as
    /// text in it, so it reads with its D decimals as MySQL shows it (`3.00`).
    ShowFixed(u8),
    /// Not callable by name: the binder wraps a GREATEST/LEAST of dates and strings in
    /// it (a string result compared as dates), so the value picked shows as the date
    /// argument's type does, as MySQL 8's `Item_func_min_max::str_op` formats it: a
    /// DATE (`DATE_ONLY`) or a DATETIME of this many fraction digits
    /// (`LEAST(datetime_col, '2020-01-01')` is `2020-01-01 00:00:00`, not the string).
    ShowPickedDate(u8),
    /// A JSON function, `->`, `->>`, MEMBER OF or CAST AS JSON (`expr/json/`).
    Json(crate::expr::json::JsonFn),
    /// Not callable by name: `@name := expr`, bound with the lower-case name as its
    /// first argument (a literal) and expr as its second; its value is expr's.
    AssignUserVariable,
    /// SLEEP(seconds): 0, or 1 when KILL QUERY or `max_execution_time` cut it short.
    Sleep,
    /// BENCHMARK(count, expr): evaluates expr count times; 0 (`info.rs`).
    Benchmark,
    /// LOAD_FILE(name): the file's bytes, or NULL outside `secure_file_priv`, without
    /// the FILE privilege, or above `max_allowed_packet` (`info.rs`).
    LoadFile,
    /// GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK
    /// (`user_lock.rs`).
    UserLock(user_lock::UserLockFn),
    /// GTID_SUBTRACT, GTID_SUBSET, WAIT_FOR_EXECUTED_GTID_SET (`gtid.rs`).
    Gtid(gtid::GtidFn),
}

/// Digest and identifier functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashFn {
    Md5,
    Sha1,
    Sha2,
    Crc32,
    Uuid,
    UuidShort,
    UuidToBin,
    BinToUuid,
    IsUuid,
}

impl Func {
    /// Whether two calls with the same arguments may give different values (RAND(),
    /// UUID(), UUID_SHORT(), SYSDATE(), `@v := …`): rewrites must neither merge nor
    /// duplicate such calls.
    pub fn is_volatile(self) -> bool {
        matches!(
            self,
            Func::Math(MathFn::Rand)
                | Func::Hash(HashFn::Uuid | HashFn::UuidShort)
                | Func::AssignUserVariable
                | Func::Sleep
                | Func::Benchmark
                | Func::LoadFile
                | Func::UserLock(_)
                | Func::Gtid(gtid::GtidFn::WaitForExecuted)
                | Func::Date {
                    f: crate::expr::datetime::functions::DateFn::SysDate(_),
                    ..
                }
        )
    }
}

/// (function, minimum args, maximum args) for a SQL function name. String and regular
/// expression functions come back with the general collation; the binder replaces it
/// with the arguments' collation.
pub fn lookup(name: &str) -> Option<(Func, usize, usize)> {
    use Func::*;
    let lname = name.to_ascii_lowercase();
    if let Some((f, min, max)) = string::lookup(&lname) {
        return Some((Str(f, Collation::GeneralCi), min, max));
    }
    if let Some((f, min, max)) = math::lookup(&lname) {
        return Some((Math(f), min, max));
    }
    if let Some((f, min, max)) = regexp::lookup(&lname) {
        return Some((Regexp(f, Collation::GeneralCi), min, max));
    }
    if let Some((f, min, max)) = crate::expr::json::lookup(&lname) {
        return Some((Json(f), min, max));
    }
    Some(match lname.as_str() {
        "database" | "schema" => (Database, 0, 0),
        "version" => (Version, 0, 0),
        "last_insert_id" => (LastInsertId, 0, 1),
        "connection_id" => (ConnectionId, 0, 0),
        "user" | "session_user" | "system_user" => (User, 0, 0),
        "current_user" => (CurrentUser, 0, 0),
        "current_role" => (CurrentRole, 0, 0),
        "inet_aton" => (InetAton, 1, 1),
        "inet_ntoa" => (InetNtoa, 1, 1),
        "if" => (If, 3, 3),
        "ifnull" => (IfNull, 2, 2),
        "nullif" => (NullIf(Collation::GeneralCi), 2, 2),
        "coalesce" => (Coalesce, 1, usize::MAX),
        "greatest" => (Greatest(Collation::GeneralCi), 2, usize::MAX),
        "least" => (Least(Collation::GeneralCi), 2, usize::MAX),
        "found_rows" => (FoundRows, 0, 0),
        "row_count" => (RowCount, 0, 0),
        "sleep" => (Sleep, 1, 1),
        "benchmark" => (Benchmark, 2, 2),
        "load_file" => (LoadFile, 1, 1),
        "get_lock" => (UserLock(user_lock::UserLockFn::Get), 2, 2),
        "release_lock" => (UserLock(user_lock::UserLockFn::Release), 1, 1),
        "release_all_locks" => (UserLock(user_lock::UserLockFn::ReleaseAll), 0, 0),
        "is_free_lock" => (UserLock(user_lock::UserLockFn::IsFree), 1, 1),
        "is_used_lock" => (UserLock(user_lock::UserLockFn::IsUsed), 1, 1),
        "gtid_subtract" => (Gtid(gtid::GtidFn::Subtract), 2, 2),
        "gtid_subset" => (Gtid(gtid::GtidFn::Subset), 2, 2),
        "wait_for_executed_gtid_set" => (Gtid(gtid::GtidFn::WaitForExecuted), 1, 2),
        "md5" => (Hash(HashFn::Md5), 1, 1),
        "sha1" | "sha" => (Hash(HashFn::Sha1), 1, 1),
        "sha2" => (Hash(HashFn::Sha2), 2, 2),
        "crc32" => (Hash(HashFn::Crc32), 1, 1),
        "uuid" => (Hash(HashFn::Uuid), 0, 0),
        "uuid_short" => (Hash(HashFn::UuidShort), 0, 0),
        "uuid_to_bin" => (Hash(HashFn::UuidToBin), 1, 2),
        "bin_to_uuid" => (Hash(HashFn::BinToUuid), 1, 2),
        "is_uuid" => (Hash(HashFn::IsUuid), 1, 1),
        _ => return None,
    })
}

/// A value's text form, as string functions read their arguments.
pub(crate) fn text(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.write_text(&mut out);
    out
}

/// The i-th argument's value (NULL past the end, for optional arguments).
pub(crate) fn arg(args: &[Expr], i: usize, row: &[Value], cx: &EvalCtx) -> Result<Value> {
    match args.get(i) {
        Some(e) => e.eval(row, cx),
        None => Ok(Value::Null),
    }
}

pub fn call(f: Func, args: &[Expr], row: &[Value], cx: &EvalCtx) -> Result<Value> {
    use Func::*;
    match f {
        Database | Version | LastInsertId | ConnectionId | User | CurrentUser | CurrentRole
        | FoundRows | RowCount | AssignUserVariable | Sleep | Benchmark | LoadFile => {
            info::call(f, args, row, cx)
        }
        InetAton | InetNtoa => network::call(f, args, row, cx),
        If | IfNull | NullIf(_) | Coalesce | Greatest(_) | Least(_) | ShowScale(_) | ShowDouble
        | ShowSigned | ShowFloat | ShowFixed(_) | ShowPickedDate(_) => {
            control::call(f, args, row, cx)
        }
        Str(f, coll) => string::call(f, coll, args, row, cx),
        Math(f) => math::call(f, args, row, cx),
        Hash(f) => match f {
            HashFn::Uuid
            | HashFn::UuidShort
            | HashFn::UuidToBin
            | HashFn::BinToUuid
            | HashFn::IsUuid => uuid::call(f, args, row, cx),
            _ => hash::call(f, args, row, cx),
        },
        Regexp(f, coll) => regexp::call(f, coll, args, row, cx),
        Cast(f) => cast::call(f, args, row, cx),
        Date { f, date_arg } => crate::expr::datetime::functions::eval(f, date_arg, args, row, cx),
        Char { text } => string_code::char_fn(text, args, row, cx),
        Json(f) => crate::expr::json::call(f, args, row, cx),
        UserLock(f) => user_lock::call(f, args, row, cx),
        Gtid(f) => gtid::call(f, args, row, cx),
    }
}

#[cfg(test)]
pub(crate) mod test_env {
    //! Helpers for the families' unit tests: evaluating a function on literals against
    //! the shared test session ([`crate::expr::test_env`]).
    use super::*;

    pub use crate::expr::test_env::TestEnv;

    /// Evaluates `f` on literal arguments.
    pub fn run(f: Func, args: Vec<Value>, env: &TestEnv) -> Value {
        try_run(f, args, env).expect("evaluates")
    }

    pub fn try_run(f: Func, args: Vec<Value>, env: &TestEnv) -> Result<Value> {
        let args: Vec<Expr> = args.into_iter().map(Expr::Literal).collect();
        call(f, &args, &[], &EvalCtx::new(&[], env))
    }

    /// Text of a result, `NULL` for NULL.
    pub fn show(v: Value) -> String {
        if v.is_null() {
            "NULL".into()
        } else {
            v.to_text()
        }
    }
}
