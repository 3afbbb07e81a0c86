//! Row and clustered-record encodings of the `btree` engine (docs/format/btree.md).
//!
//! A clustered record's value is `[flags][trx_id][roll_ptr][row]`: the header is what
//! MVCC reads (who wrote this version, where the previous one is); the row is a null
//! bitmap followed by each non-NULL column. Integers are zig-zag varints, so sysbench's
//! small ids and counters take one to three bytes instead of eight.

use strata_types::datetime::DateTime;
use strata_types::decimal::Decimal;
use strata_types::member;
use strata_types::time_value;
use strata_types::{ColumnDef, DataType, PhysicalColumn, TableDef, Value};

pub const FLAG_DELETED: u8 = 1;
pub const FLAG_OVERFLOW: u8 = 2;
/// The row starts with the number of columns it was written with (a varint): every
/// version written while the table has instantly added columns (`TableDef::instant`).
pub const FLAG_COLS: u8 = 4;
pub const HEADER: usize = 17;

/// The MVCC header of a clustered record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecHeader {
    pub flags: u8,
    pub trx_id: u64,
    pub roll_ptr: u64,
}

impl RecHeader {
    pub fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.flags);
        out.extend_from_slice(&self.trx_id.to_le_bytes());
        out.extend_from_slice(&self.roll_ptr.to_le_bytes());
    }
    pub fn read(v: &[u8]) -> Option<RecHeader> {
        let h = v.get(..HEADER)?;
        Some(RecHeader {
            flags: h[0],
            trx_id: u64::from_le_bytes(h[1..9].try_into().ok()?),
            roll_ptr: u64::from_le_bytes(h[9..17].try_into().ok()?),
        })
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7F) as u64) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}
fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Columns of more digits than this store the 32-byte form (DECIMAL(39..65)).
const WIDE_FROM: u8 = strata_types::decimal::NARROW;

/// The 32-byte row form of a DECIMAL(39..65) column's value at the column's `scale`
/// (docs/format/btree.md). The SQL layer stores only values within the column's
/// precision, which always fit; anything else would be a bug upstream, written as zero
/// rather than as bytes no read accepts.
fn wide_bytes(d: &Decimal, scale: u8) -> [u8; 32] {
    let b = d.rescale(scale).to_i256_le();
    debug_assert!(
        b.is_some(),
        "a DECIMAL past 65 digits reached the row codec"
    );
    b.unwrap_or([0; 32])
}

pub fn encode_row(def: &TableDef, row: &[Value], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + def.columns.len().div_ceil(8), 0);
    for (i, (v, c)) in row.iter().zip(&def.columns).enumerate() {
        encode_value(c, v, i, start, out);
    }
}

/// Appends column `i`'s value `v` (of column `c`) to a row whose null bitmap starts at
/// `out[start]`.
#[inline(always)]
fn encode_value(c: &ColumnDef, v: &Value, i: usize, start: usize, out: &mut Vec<u8>) {
    if let (DataType::Time { .. }, Value::Bytes(b)) = (&c.data_type, v) {
        // The SQL layer stores only canonical TIME text (time_value::format).
        put_varint(out, zigzag(time_value::parse_canonical(b).unwrap_or(0)));
        return;
    }
    match v {
        Value::Null => out[start + i / 8] |= 1 << (i % 8),
        Value::Int(x) => put_varint(out, zigzag(*x)),
        Value::UInt(x) => put_varint(out, *x),
        Value::Double(x) => out.extend_from_slice(&x.to_bits().to_le_bytes()),
        Value::Decimal(d) => match c.data_type {
            DataType::Decimal { precision, scale } if precision > WIDE_FROM => {
                out.extend_from_slice(&wide_bytes(d, scale));
            }
            DataType::Decimal { scale, .. } => {
                out.extend_from_slice(&d.rescale(scale).mantissa().to_le_bytes())
            }
            _ => out.extend_from_slice(&d.mantissa().to_le_bytes()),
        },
        Value::DateTime(d) => put_varint(out, d.pack()),
        // ENUM/SET: only the member number (position or bitmask); the text comes
        // back from the column's member list.
        Value::Member { number, .. } => put_varint(out, *number),
        // A JSON document is stored as its binary bytes, like a BLOB; the engine
        // does not read them.
        // A BIT value is its (n+7)/8 bytes, likewise length-prefixed.
        Value::Bytes(b) | Value::Json(b) | Value::Bits(b) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
    }
}

/// The physical columns of a table with instantly added or dropped columns
/// (`TableDef::instant`, docs/format/btree.md), resolved once per table: the one place
/// where stored rows, in physical order, meet rows in the table's column order.
#[derive(Clone, Debug)]
pub struct Physical {
    /// How each physical column is stored.
    kinds: Vec<ColKind>,
    /// The table's column each physical column holds; None: dropped.
    to_logical: Vec<Option<usize>>,
    /// Physical columns every row holds.
    cols: usize,
    /// The value of each physical column from `cols` on, in rows older than it.
    defaults: Vec<Value>,
    /// Physical column `i` is column `i`, for all of them: rows encode as plain rows
    /// after their count.
    identity: bool,
}

impl Physical {
    /// None for a table without instant columns (its rows carry no count).
    pub fn of(def: &TableDef) -> Option<Physical> {
        let inst = def.instant.as_ref()?;
        let phys = inst.physical(def.columns.len());
        let mut kinds = Vec::with_capacity(phys.len());
        let mut to_logical = Vec::with_capacity(phys.len());
        for p in &phys {
            match p {
                PhysicalColumn::Column(l) => {
                    // Out of range only in a corrupt catalog (`check` refuses it at open);
                    // a decode then finds no column there and fails.
                    kinds.push(
                        def.columns
                            .get(*l)
                            .map_or(ColKind::Bytes, |c| ColKind::of(&c.data_type)),
                    );
                    to_logical.push(Some(*l));
                }
                PhysicalColumn::Dropped(t) => {
                    kinds.push(ColKind::of(t));
                    to_logical.push(None);
                }
            }
        }
        let identity = to_logical.len() == def.columns.len()
            && to_logical.iter().enumerate().all(|(i, l)| *l == Some(i));
        Some(Physical {
            kinds,
            to_logical,
            cols: inst.cols,
            defaults: inst.defaults.clone(),
            identity,
        })
    }

    /// Whether `def`'s instant entry describes its columns consistently: each column
    /// held by exactly one physical column, one default per physical column past
    /// `cols`. An error names what is wrong (the table is corrupt).
    pub fn check(def: &TableDef) -> std::result::Result<(), String> {
        let Some(inst) = &def.instant else {
            return Ok(());
        };
        let phys = inst.physical(def.columns.len());
        if inst.cols + inst.defaults.len() != phys.len() || inst.cols > phys.len() {
            return Err(format!(
                "the instant entry has {} physical columns, {} + {} defaults",
                phys.len(),
                inst.cols,
                inst.defaults.len()
            ));
        }
        let mut seen = vec![false; def.columns.len()];
        for p in &phys {
            if let PhysicalColumn::Column(l) = p {
                match seen.get_mut(*l) {
                    Some(s) if !*s => *s = true,
                    _ => return Err(format!("physical layout names column {l} wrongly")),
                }
            }
        }
        if seen.iter().any(|s| !s) {
            return Err("a column has no physical column".into());
        }
        Ok(())
    }

    /// The number of physical columns.
    pub fn len(&self) -> usize {
        self.to_logical.len()
    }

    pub fn is_empty(&self) -> bool {
        self.to_logical.is_empty()
    }
}

/// The flag a version of a row of `def` is written with: [`FLAG_COLS`] when the table
/// has instantly added or dropped columns (its rows then start with their column count).
pub fn row_flags(def: &TableDef) -> u8 {
    if def.instant.is_some() {
        FLAG_COLS
    } else {
        0
    }
}

/// [`encode_row`] as a clustered record of `def` holds it: with a [`Physical`] layout
/// (`Physical::of(def)`), the physical column count first, then the physical columns
/// (a dropped one NULL).
pub fn encode_record_row(
    def: &TableDef,
    phys: Option<&Physical>,
    row: &[Value],
    out: &mut Vec<u8>,
) {
    let Some(ph) = phys else {
        return encode_row(def, row, out);
    };
    put_varint(out, ph.len() as u64);
    if ph.identity {
        return encode_row(def, row, out);
    }
    let start = out.len();
    out.resize(start + ph.len().div_ceil(8), 0);
    for (p, l) in ph.to_logical.iter().enumerate() {
        match l.and_then(|l| Some((def.columns.get(l)?, row.get(l)?))) {
            Some((c, v)) => encode_value(c, v, p, start, out),
            None => out[start + p / 8] |= 1 << (p % 8),
        }
    }
}

/// Decodes the row bytes of a clustered record whose header flags are `flags`: a record
/// of a table that never had an instant change is decoded as always; otherwise
/// (`phys`: `Physical::of(def)`) the row holds as many physical columns as it was
/// written with ([`FLAG_COLS`], or the count before the first instant change), each put
/// in its column's place, dropped ones stepped over, and the columns added after it
/// read their recorded default (NULL where `cols` does not ask for them). `row` comes
/// out in the table's column order. None when the bytes are malformed.
pub fn decode_record_into(
    def: &TableDef,
    kinds: &[ColKind],
    phys: Option<&Physical>,
    flags: u8,
    b: &[u8],
    row: &mut Vec<Value>,
    cols: Option<&[bool]>,
) -> Option<()> {
    match phys {
        None if flags & FLAG_COLS == 0 => decode_kinds_into(def, kinds, b, row, cols),
        // A count in a table without instant columns.
        None => None,
        Some(ph) => decode_physical_into(def, ph, flags, b, row, cols),
    }
}

/// The rare path of [`decode_record_into`], kept apart so the common one stays small.
#[inline(never)]
fn decode_physical_into(
    def: &TableDef,
    ph: &Physical,
    flags: u8,
    b: &[u8],
    row: &mut Vec<Value>,
    cols: Option<&[bool]>,
) -> Option<()> {
    let (n, body) = if flags & FLAG_COLS != 0 {
        let mut at = 0;
        let n = get_varint(b, &mut at)?;
        (usize::try_from(n).ok()?, b.get(at..)?)
    } else {
        (ph.cols, b)
    };
    if n > ph.len() {
        return None;
    }
    let nl = def.columns.len();
    row.truncate(nl);
    row.resize(nl, Value::Null);
    let wanted = |l: usize| cols.is_none_or(|m| m.get(l).copied().unwrap_or(true));
    let nulls = body.get(..n.div_ceil(8))?;
    let mut at = nulls.len();
    for p in 0..n {
        let k = ph.kinds[p];
        let null = nulls[p / 8] & (1 << (p % 8)) != 0;
        let target = ph.to_logical[p].filter(|&l| wanted(l));
        match target {
            Some(l) if !null => {
                read_into(k, def.columns.get(l)?, body, &mut at, row.get_mut(l)?)?;
            }
            _ => {
                if !null {
                    skip_kind(k, body, &mut at)?;
                }
                if let Some(slot) = ph.to_logical[p].and_then(|l| row.get_mut(l)) {
                    *slot = Value::Null;
                }
            }
        }
    }
    // Physical columns added after this row was written.
    for p in n..ph.len() {
        if let Some(l) = ph.to_logical[p] {
            let v = if wanted(l) {
                ph.defaults.get(p.checked_sub(ph.cols)?)?.clone()
            } else {
                Value::Null
            };
            *row.get_mut(l)? = v;
        }
    }
    Some(())
}

/// None when the bytes are malformed (the caller reports corruption).
pub fn decode_row(def: &TableDef, b: &[u8]) -> Option<Vec<Value>> {
    let mut row = Vec::with_capacity(def.columns.len());
    decode_row_into(def, b, &mut row, None)?;
    Some(row)
}

/// How one column's value is stored, resolved from its type once per table (a scan
/// then dispatches on a one-byte kind per column instead of matching the type enum,
/// and finds the unsigned flag, decimal scale or fraction digits beside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColKind {
    Int,
    UInt,
    Double,
    Decimal(u8),
    /// DECIMAL(39..65): the 32-byte two's-complement mantissa, at this scale.
    DecimalWide(u8),
    Date,
    /// DATETIME / TIMESTAMP with their fraction digits.
    DateTime(u8),
    Time(u8),
    Year,
    Enum,
    Set,
    Json,
    Bits,
    /// Character and byte strings: a length, then the bytes.
    Bytes,
}

impl ColKind {
    pub fn of(t: &DataType) -> ColKind {
        if t.is_integer() {
            return if t.is_unsigned() {
                ColKind::UInt
            } else {
                ColKind::Int
            };
        }
        match *t {
            DataType::Float { .. } | DataType::Double { .. } => ColKind::Double,
            DataType::Decimal { precision, scale } if precision > WIDE_FROM => {
                ColKind::DecimalWide(scale)
            }
            DataType::Decimal { scale, .. } => ColKind::Decimal(scale),
            DataType::Date => ColKind::Date,
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } => ColKind::DateTime(fsp),
            DataType::Time { fsp } => ColKind::Time(fsp),
            DataType::Year => ColKind::Year,
            DataType::Enum(_) => ColKind::Enum,
            DataType::Set(_) => ColKind::Set,
            DataType::Json => ColKind::Json,
            DataType::Bit(_) => ColKind::Bits,
            _ => ColKind::Bytes,
        }
    }
}

/// The [`ColKind`] of each column of `def`, in order (what [`decode_kinds_into`] reads).
pub fn col_kinds(def: &TableDef) -> Vec<ColKind> {
    def.columns
        .iter()
        .map(|c| ColKind::of(&c.data_type))
        .collect()
}

/// Steps over the stored bytes of one non-NULL column of kind `k` without building its
/// value (what [`decode_row_into`] does for a column the read does not need).
fn skip_kind(k: ColKind, b: &[u8], at: &mut usize) -> Option<()> {
    match k {
        ColKind::Double => *at += 8,
        ColKind::Decimal(_) => *at += 16,
        ColKind::DecimalWide(_) => *at += 32,
        ColKind::Int
        | ColKind::UInt
        | ColKind::Date
        | ColKind::DateTime(_)
        | ColKind::Time(_)
        | ColKind::Year
        | ColKind::Enum
        | ColKind::Set => {
            get_varint(b, at)?;
        }
        ColKind::Json | ColKind::Bits | ColKind::Bytes => {
            let n = get_varint(b, at)? as usize;
            *at = at.checked_add(n)?;
        }
    }
    (*at <= b.len()).then_some(())
}

/// [`decode_row`] into `row`, whose strings' buffers are reused where the new value is
/// a string too (a scan decodes every row into the same vector: no allocation per
/// string column and row). With `cols`, only the columns it marks are decoded; the
/// others are stepped over and come out NULL (a query that reads 4 of lineitem's 16
/// columns builds 4 values per row). None when the bytes are malformed; `row` is then
/// unspecified.
pub fn decode_row_into(
    def: &TableDef,
    b: &[u8],
    row: &mut Vec<Value>,
    cols: Option<&[bool]>,
) -> Option<()> {
    decode_kinds_into(def, &col_kinds(def), b, row, cols)
}

/// [`decode_row_into`] with the columns' kinds resolved beforehand (`kinds` is
/// [`col_kinds`] of `def`; a table keeps it beside its definition).
pub fn decode_kinds_into(
    def: &TableDef,
    kinds: &[ColKind],
    b: &[u8],
    row: &mut Vec<Value>,
    cols: Option<&[bool]>,
) -> Option<()> {
    let n = kinds.len();
    let nulls = b.get(..n.div_ceil(8))?;
    let mut at = nulls.len();
    // Every slot is assigned below; a reused vector keeps its values (and their string
    // buffers) until then.
    row.truncate(n);
    row.resize(n, Value::Null);
    // Past the last column the mask marks nothing is read: those are NULL at once, and
    // the loop below runs only up to it (a scan of lineitem for Q6 stops at its 11th
    // of 16 columns).
    let stop = match cols {
        Some(m) if m.len() >= n => m[..n].iter().rposition(|&x| x).map_or(0, |p| p + 1),
        _ => n,
    };
    let (head, tail) = row.split_at_mut(stop);
    for slot in tail {
        if !slot.is_null() {
            *slot = Value::Null;
        }
    }
    for (i, (&k, slot)) in kinds[..stop].iter().zip(head).enumerate() {
        let null = nulls[i / 8] & (1 << (i % 8)) != 0;
        let wanted = cols.is_none_or(|m| m.get(i).copied().unwrap_or(true));
        if null || !wanted {
            if !null {
                skip_kind(k, b, &mut at)?;
            }
            if !slot.is_null() {
                *slot = Value::Null;
            }
            continue;
        }
        read_into(k, &def.columns[i], b, &mut at, slot)?;
    }
    Some(())
}

/// Reads one non-NULL value of kind `k` (column `c`) at `b[*at]` into `slot`, reusing
/// its string buffer when it holds a string.
#[inline(always)]
fn read_into(k: ColKind, c: &ColumnDef, b: &[u8], at: &mut usize, slot: &mut Value) -> Option<()> {
    *slot = match k {
        ColKind::Int => Value::Int(unzigzag(get_varint(b, at)?)),
        ColKind::UInt => Value::UInt(get_varint(b, at)?),
        ColKind::Double => {
            let s = b.get(*at..*at + 8)?;
            *at += 8;
            Value::Double(f64::from_bits(u64::from_le_bytes(s.try_into().ok()?)))
        }
        ColKind::Decimal(scale) => {
            let s = b.get(*at..*at + 16)?;
            *at += 16;
            Value::Decimal(Decimal::new(i128::from_le_bytes(s.try_into().ok()?), scale))
        }
        ColKind::DecimalWide(scale) => {
            let s = b.get(*at..*at + 32)?;
            *at += 32;
            Value::Decimal(Decimal::from_i256_le(s.try_into().ok()?, scale)?)
        }
        ColKind::Date => Value::DateTime(DateTime::unpack(get_varint(b, at)?).as_date()),
        ColKind::DateTime(fsp) => Value::DateTime(DateTime {
            fsp,
            ..DateTime::unpack(get_varint(b, at)?)
        }),
        ColKind::Time(fsp) => {
            let m = unzigzag(get_varint(b, at)?);
            Value::str(&time_value::format(m, fsp))
        }
        ColKind::Year => Value::Int(unzigzag(get_varint(b, at)?)),
        ColKind::Enum => member::enum_value(&c.members, get_varint(b, at)?),
        ColKind::Set => member::set_value(&c.members, get_varint(b, at)?),
        ColKind::Json | ColKind::Bits | ColKind::Bytes => {
            let len = get_varint(b, at)? as usize;
            let s = b.get(*at..at.checked_add(len)?)?;
            *at += len;
            match k {
                ColKind::Json => Value::Json(s.to_vec()),
                ColKind::Bits => Value::Bits(s.to_vec()),
                _ => {
                    if let Value::Bytes(old) = slot {
                        old.clear();
                        old.extend_from_slice(s);
                        return Some(());
                    }
                    Value::Bytes(s.to_vec())
                }
            }
        }
    };
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nullable column of `data_type` with no default, for the decode tests' tables.
    fn col(name: &str, data_type: DataType) -> strata_types::ColumnDef {
        strata_types::ColumnDef::plain(name, data_type, true, strata_types::Collation::Binary)
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for i in [0i64, 1, -1, 63, -64, 1 << 40, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, zigzag(i));
            let mut at = 0;
            assert_eq!(unzigzag(get_varint(&b, &mut at).unwrap()), i);
            assert_eq!(at, b.len());
        }
        assert!(get_varint(&[0x80; 11], &mut 0).is_none());
    }

    /// DECIMAL(39..65) columns take 32 bytes each, every digit kept; a DECIMAL(38) beside
    /// them keeps its 16; a masked decode steps over the wide ones.
    #[test]
    fn wide_decimal_columns_round_trip() {
        let dec = |p, s| DataType::Decimal {
            precision: p,
            scale: s,
        };
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("a", dec(65, 30)),
                col("b", dec(38, 2)),
                col("c", dec(40, 2)),
                col("d", dec(65, 0)),
                col("e", DataType::Int { unsigned: false }),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let d = |t: &str, s: u8| Value::Decimal(Decimal::parse(t).unwrap().rescale(s));
        for row in [
            vec![
                d(
                    "-99999999999999999999999999999999999.999999999999999999999999999999",
                    30,
                ),
                d("-999999999999999999999999999999999999.99", 2),
                d("1.5", 2),
                d(
                    "99999999999999999999999999999999999999999999999999999999999999999",
                    0,
                ),
                Value::Int(7),
            ],
            vec![
                d("0.000000000000000000000000000001", 30),
                Value::Null,
                d("-1701411834604692317316873037158841057.28", 2),
                d("0", 0),
                Value::Int(-1),
            ],
        ] {
            let mut b = Vec::new();
            encode_row(&def, &row, &mut b);
            let nulls = row.iter().filter(|v| v.is_null()).count();
            assert_eq!(b.len(), 1 + 32 * 3 + 16 * (1 - nulls) + 1);
            let back = decode_row(&def, &b).unwrap();
            assert_eq!(back, row);
            for (x, y) in back.iter().zip(&row) {
                assert_eq!(x.to_text(), y.to_text());
            }
            // Only the last column: the wide ones are stepped over.
            let mut only = Vec::new();
            let mask = [false, false, false, false, true];
            decode_row_into(&def, &b, &mut only, Some(&mask)).unwrap();
            assert_eq!(only[4], row[4]);
            assert!(only[..4].iter().all(|v| v.is_null()));
        }
        assert_eq!(ColKind::of(&dec(39, 0)), ColKind::DecimalWide(0));
        assert_eq!(ColKind::of(&dec(38, 0)), ColKind::Decimal(0));
    }

    #[test]
    fn temporal_columns_round_trip_with_fractions() {
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("a", DataType::DateTime { fsp: 6 }),
                col("b", DataType::Time { fsp: 3 }),
                col("c", DataType::Year),
                col("d", DataType::Timestamp { fsp: 2 }),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let dt = DateTime::parse("2020-01-01 10:00:00.123456").unwrap();
        let row = vec![
            Value::DateTime(dt),
            Value::str("-838:59:59.500"),
            Value::Int(0),
            Value::DateTime(DateTime::parse("2038-01-19 03:14:07.25").unwrap()),
        ];
        let mut b = Vec::new();
        encode_row(&def, &row, &mut b);
        let back = decode_row(&def, &b).unwrap();
        assert_eq!(back, row);
        assert_eq!(back[0].to_text(), "2020-01-01 10:00:00.123456");
        assert_eq!(back[1].to_text(), "-838:59:59.500");
        assert_eq!(back[3].to_text(), "2038-01-19 03:14:07.25");
    }

    /// A masked decode builds only the marked columns, steps over the others of every
    /// stored kind (varints, fixed-width numbers, strings, temporals, NULLs) and so
    /// lands on the right bytes for each later column; unmarked ones come out NULL.
    #[test]
    fn masked_decode_steps_over_unread_columns() {
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("i", DataType::Int { unsigned: false }),
                col("s", DataType::VarChar(20)),
                col(
                    "d",
                    DataType::Decimal {
                        precision: 15,
                        scale: 2,
                    },
                ),
                col("f", DataType::Double { fixed: None }),
                col("n", DataType::Int { unsigned: false }),
                col("dt", DataType::Date),
                col("t", DataType::Time { fsp: 0 }),
                col("last", DataType::VarChar(20)),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let row = vec![
            Value::Int(-300),
            Value::str("a string of some length"),
            Value::Decimal(Decimal::new(12345, 2)),
            Value::Double(2.5),
            Value::Null,
            Value::DateTime(DateTime::parse("1995-03-15").unwrap().as_date()),
            Value::str("10:11:12"),
            Value::str("end"),
        ];
        let mut b = Vec::new();
        encode_row(&def, &row, &mut b);
        for mask in [
            vec![false, false, false, false, false, false, false, true],
            vec![true, false, true, false, true, false, true, false],
            vec![false, true, false, true, false, true, false, true],
            vec![true; 8],
        ] {
            // Decoded into a vector holding other values first, as a scan reuses it.
            let mut got = vec![Value::str("old"); 8];
            decode_row_into(&def, &b, &mut got, Some(&mask)).unwrap();
            for (i, want) in row.iter().enumerate() {
                let expect = if mask[i] { want.clone() } else { Value::Null };
                assert_eq!(got[i], expect, "column {i} with mask {mask:?}");
            }
        }
        // A mask shorter than the row reads the columns past its end.
        let mut got = Vec::new();
        decode_row_into(&def, &b, &mut got, Some(&[false])).unwrap();
        assert_eq!(got[0], Value::Null);
        assert_eq!(got[1..], row[1..]);
        // Truncated bytes are malformed when a column read or stepped over runs past
        // them; columns after the last one marked are not looked at.
        let last_only = [false, false, false, false, false, false, false, true];
        assert!(decode_row_into(&def, &b[..b.len() - 2], &mut got, Some(&last_only)).is_none());
        let first_only = [true, false, false, false, false, false, false, false];
        decode_row_into(&def, &b[..b.len() - 2], &mut got, Some(&first_only)).unwrap();
        assert_eq!(got[0], row[0]);
        assert!(got[1..].iter().all(Value::is_null));
    }

    /// Each type resolves to the kind its bytes are stored as, and a row decoded
    /// through the kinds into a vector that held a longer or a shorter row of other
    /// values (a scan's reused scratch row) comes out exactly as encoded.
    #[test]
    fn kinds_follow_types_and_reused_vectors_decode_exactly() {
        assert_eq!(
            ColKind::of(&DataType::TinyInt { unsigned: true }),
            ColKind::UInt
        );
        assert_eq!(
            ColKind::of(&DataType::BigInt { unsigned: false }),
            ColKind::Int
        );
        assert_eq!(
            ColKind::of(&DataType::Float { fixed: None }),
            ColKind::Double
        );
        assert_eq!(
            ColKind::of(&DataType::Decimal {
                precision: 15,
                scale: 2
            }),
            ColKind::Decimal(2)
        );
        assert_eq!(
            ColKind::of(&DataType::Timestamp { fsp: 3 }),
            ColKind::DateTime(3)
        );
        assert_eq!(ColKind::of(&DataType::Time { fsp: 1 }), ColKind::Time(1));
        assert_eq!(ColKind::of(&DataType::Char(10)), ColKind::Bytes);
        assert_eq!(ColKind::of(&DataType::Blob(65535)), ColKind::Bytes);
        assert_eq!(ColKind::of(&DataType::Bit(3)), ColKind::Bits);
        assert_eq!(ColKind::of(&DataType::Json), ColKind::Json);
        let def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("u", DataType::Int { unsigned: true }),
                col("s", DataType::VarChar(20)),
                col("b", DataType::Bit(9)),
                col("j", DataType::Json),
                col("y", DataType::Year),
                col("d", DataType::Date),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let kinds = col_kinds(&def);
        let row = vec![
            Value::UInt(u64::MAX),
            Value::str("xyz"),
            Value::Bits(vec![1, 255]),
            Value::Json(vec![0, 1, 2]),
            Value::Int(2024),
            Value::DateTime(DateTime::parse("2001-02-03").unwrap().as_date()),
        ];
        let mut b = Vec::new();
        encode_row(&def, &row, &mut b);
        for before in [
            vec![Value::str("a much longer string held before"); 9],
            vec![Value::Int(1)],
            Vec::new(),
        ] {
            let mut got = before;
            decode_kinds_into(&def, &kinds, &b, &mut got, None).unwrap();
            assert_eq!(got, row);
        }
        // A NULL in the bitmap and a string slot that held a number.
        let with_null = vec![
            Value::Null,
            Value::str(""),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ];
        b.clear();
        encode_row(&def, &with_null, &mut b);
        let mut got = vec![Value::Int(5); 6];
        decode_kinds_into(&def, &kinds, &b, &mut got, None).unwrap();
        assert_eq!(got, with_null);
    }

    /// Rows written before instant ADD COLUMNs (no count, fewer columns, a shorter null
    /// bitmap) read the added columns' recorded defaults; rows written after carry their
    /// count and read exactly as written; a mask leaves unasked added columns NULL; a
    /// count beyond the table's columns, or a short row of a table without instant
    /// columns, is malformed.
    #[test]
    fn rows_older_than_instant_columns_read_recorded_defaults() {
        let mut def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: (0..7)
                .map(|i| col(&format!("c{i}"), DataType::Int { unsigned: false }))
                .chain([col("s", DataType::VarChar(10))])
                .collect(),
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let old_row: Vec<Value> = (0..7).map(Value::Int).chain([Value::str("old")]).collect();
        let mut old_bytes = Vec::new();
        assert_eq!(row_flags(&def), 0);
        encode_record_row(&def, Physical::of(&def).as_ref(), &old_row, &mut old_bytes);
        // Two columns added instantly: 10 columns, a two-byte null bitmap from now on.
        def.columns
            .push(col("n", DataType::Int { unsigned: false }));
        def.columns.push(col("v", DataType::VarChar(10)));
        def.instant = Some(strata_types::InstantColumns {
            cols: 8,
            defaults: vec![Value::Int(5), Value::Null],
            layout: None,
            versions: None,
        });
        let kinds = col_kinds(&def);
        let ph = Physical::of(&def);
        let mut got = vec![Value::str("scratch"); 12];
        decode_record_into(&def, &kinds, ph.as_ref(), 0, &old_bytes, &mut got, None).unwrap();
        let mut want = old_row.clone();
        want.extend([Value::Int(5), Value::Null]);
        assert_eq!(got, want);
        // A later row: count first, flag set, every column as written.
        assert_eq!(row_flags(&def), FLAG_COLS);
        let new_row: Vec<Value> = (10..17)
            .map(Value::Int)
            .chain([Value::str("new"), Value::Int(7), Value::str("v")])
            .collect();
        let mut new_bytes = Vec::new();
        encode_record_row(&def, ph.as_ref(), &new_row, &mut new_bytes);
        assert_eq!(new_bytes[0], 10);
        decode_record_into(
            &def,
            &kinds,
            ph.as_ref(),
            FLAG_COLS,
            &new_bytes,
            &mut got,
            None,
        )
        .unwrap();
        assert_eq!(got, new_row);
        // A third column added: both older forms read its default, the 10-column row
        // its own values for the first two.
        def.columns.push(col("w", DataType::Int { unsigned: true }));
        def.instant.as_mut().unwrap().defaults.push(Value::UInt(9));
        let kinds = col_kinds(&def);
        let ph = Physical::of(&def);
        decode_record_into(
            &def,
            &kinds,
            ph.as_ref(),
            FLAG_COLS,
            &new_bytes,
            &mut got,
            None,
        )
        .unwrap();
        assert_eq!(got[..10], new_row[..]);
        assert_eq!(got[10], Value::UInt(9));
        decode_record_into(&def, &kinds, ph.as_ref(), 0, &old_bytes, &mut got, None).unwrap();
        assert_eq!(got[8..], [Value::Int(5), Value::Null, Value::UInt(9)]);
        // A mask: asked-for added columns read the default, the others NULL.
        let mut mask = vec![false; 11];
        mask[1] = true;
        mask[8] = true;
        decode_record_into(
            &def,
            &kinds,
            ph.as_ref(),
            0,
            &old_bytes,
            &mut got,
            Some(&mask),
        )
        .unwrap();
        assert_eq!(got.len(), 11);
        assert_eq!(got[1], Value::Int(1));
        assert_eq!(got[8], Value::Int(5));
        assert!(got[10].is_null() && got[0].is_null());
        // Malformed: a count above the table's columns; a short row where the table
        // has no instant columns.
        let mut bad = vec![12u8];
        bad.extend_from_slice(&new_bytes[1..]);
        assert!(
            decode_record_into(&def, &kinds, ph.as_ref(), FLAG_COLS, &bad, &mut got, None)
                .is_none()
        );
        let mut plain = def.clone();
        plain.instant = None;
        assert!(
            decode_record_into(&plain, &kinds, None, FLAG_COLS, &new_bytes, &mut got, None)
                .is_none()
        );
    }

    /// Instant DROP of a middle column and ADD … FIRST / AFTER, twice over: rows of each
    /// generation (no count, and counts of every earlier physical width) decode into
    /// the table's column order, dropped columns' bytes stepped over, added columns
    /// reading their recorded default in older rows; new rows store the physical
    /// columns with a NULL in each dropped slot; a mask applies to the table's columns;
    /// inconsistent layouts are refused by `Physical::check`.
    #[test]
    fn physical_layouts_map_rows_to_the_table_order() {
        use strata_types::InstantColumns;
        let int = || DataType::Int { unsigned: false };
        let mut def = TableDef {
            options: Default::default(),
            db: "d".into(),
            name: "t".into(),
            engine: "btree".into(),
            columns: vec![
                col("id", int()),
                col("a", DataType::VarChar(10)),
                col("b", int()),
                col("c", DataType::VarChar(10)),
            ],
            indexes: vec![],
            auto_increment_start: 1,
            comment: String::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            instant: None,
            default_collation: Default::default(),
        };
        let decode = |def: &TableDef, flags: u8, b: &[u8], mask: Option<&[bool]>| {
            let ph = Physical::of(def);
            let mut got = vec![Value::str("scratch"); 9];
            decode_record_into(def, &col_kinds(def), ph.as_ref(), flags, b, &mut got, mask)
                .map(|()| got)
        };
        let encode = |def: &TableDef, row: &[Value]| {
            let mut b = Vec::new();
            encode_record_row(def, Physical::of(def).as_ref(), row, &mut b);
            (row_flags(def), b)
        };
        let g0 = encode(
            &def,
            &[
                Value::Int(1),
                Value::str("a1"),
                Value::Int(10),
                Value::str("c1"),
            ],
        );
        assert_eq!(g0.0, 0);
        // ALTER 1: DROP a, ADD x INT DEFAULT 7 FIRST, ADD y VARCHAR DEFAULT NULL AFTER b.
        // New order: x id b y c; sources from the old columns.
        let s1 = [None, Some(0), Some(2), None, Some(3)];
        let inst = InstantColumns::after_alter(&def, &s1, &[Value::Int(7), Value::Null]);
        assert_eq!(inst.cols, 4);
        assert_eq!(inst.versions, Some(1));
        assert_eq!(
            inst.layout,
            Some(vec![
                PhysicalColumn::Column(1),
                PhysicalColumn::Dropped(DataType::VarChar(10)),
                PhysicalColumn::Column(2),
                PhysicalColumn::Column(4),
                PhysicalColumn::Column(0),
                PhysicalColumn::Column(3),
            ])
        );
        let def1 = TableDef {
            columns: vec![
                col("x", int()),
                col("id", int()),
                col("b", int()),
                col("y", DataType::VarChar(10)),
                col("c", DataType::VarChar(10)),
            ],
            instant: Some(inst),
            ..def.clone()
        };
        Physical::check(&def1).unwrap();
        assert_eq!(
            decode(&def1, g0.0, &g0.1, None).unwrap(),
            [
                Value::Int(7),
                Value::Int(1),
                Value::Int(10),
                Value::Null,
                Value::str("c1")
            ]
        );
        let r1 = [
            Value::Int(8),
            Value::Int(2),
            Value::Int(20),
            Value::str("y2"),
            Value::str("c2"),
        ];
        let g1 = encode(&def1, &r1);
        assert_eq!(g1.0, FLAG_COLS);
        // Six physical columns, the dropped one (bit 1) NULL.
        assert_eq!(g1.1[0], 6);
        assert_eq!(g1.1[1] & 0b10, 0b10);
        assert_eq!(decode(&def1, g1.0, &g1.1, None).unwrap(), r1);
        // ALTER 2: DROP y (added instantly), ADD z INT DEFAULT 5 AFTER id: x id z b c.
        let s2 = [Some(0), Some(1), None, Some(2), Some(4)];
        let inst = InstantColumns::after_alter(&def1, &s2, &[Value::Int(5)]);
        assert_eq!(inst.cols, 4);
        assert_eq!(inst.defaults, [Value::Int(7), Value::Null, Value::Int(5)]);
        let def2 = TableDef {
            columns: vec![
                col("x", int()),
                col("id", int()),
                col("z", int()),
                col("b", int()),
                col("c", DataType::VarChar(10)),
            ],
            instant: Some(inst),
            ..def.clone()
        };
        Physical::check(&def2).unwrap();
        let r2 = [
            Value::Int(9),
            Value::Int(3),
            Value::Int(33),
            Value::Null,
            Value::str("c3"),
        ];
        let g2 = encode(&def2, &r2);
        assert_eq!(g2.1[0], 7);
        for (g, want) in [
            (
                &g0,
                [
                    Value::Int(7),
                    Value::Int(1),
                    Value::Int(5),
                    Value::Int(10),
                    Value::str("c1"),
                ],
            ),
            (
                &g1,
                [
                    Value::Int(8),
                    Value::Int(2),
                    Value::Int(5),
                    Value::Int(20),
                    Value::str("c2"),
                ],
            ),
            (&g2, r2.clone()),
        ] {
            assert_eq!(decode(&def2, g.0, &g.1, None).unwrap(), want);
            // Only c and z asked for: the others NULL.
            let mask = [false, false, true, false, true];
            let got = decode(&def2, g.0, &g.1, Some(&mask)).unwrap();
            assert_eq!(got.len(), 5);
            for i in 0..5 {
                let w = if mask[i] {
                    want[i].clone()
                } else {
                    Value::Null
                };
                assert_eq!(got[i], w, "column {i}");
            }
        }
        // The same through the value form other engines use.
        let inst2 = def2.instant.as_ref().unwrap();
        let phys_row = inst2.physical_row(&r2);
        assert_eq!(phys_row.len(), 7);
        assert_eq!(inst2.logical_row(5, &phys_row).unwrap(), r2);
        assert_eq!(
            inst2
                .logical_row(
                    5,
                    &[
                        Value::Int(1),
                        Value::str("a1"),
                        Value::Int(10),
                        Value::str("c1")
                    ]
                )
                .unwrap(),
            [
                Value::Int(7),
                Value::Int(1),
                Value::Int(5),
                Value::Int(10),
                Value::str("c1")
            ]
        );
        // A count past the physical columns is malformed.
        let mut bad = g2.1.clone();
        bad[0] = 8;
        assert!(decode(&def2, FLAG_COLS, &bad, None).is_none());
        // Inconsistent layouts: a column twice, a column missing, defaults short.
        let mut broken = def2.clone();
        let l = broken.instant.as_mut().unwrap().layout.as_mut().unwrap();
        l[0] = PhysicalColumn::Column(2);
        assert!(Physical::check(&broken).is_err());
        let mut broken = def2.clone();
        broken.instant.as_mut().unwrap().layout.as_mut().unwrap()[0] =
            PhysicalColumn::Dropped(int());
        assert!(Physical::check(&broken).is_err());
        let mut broken = def2.clone();
        broken.instant.as_mut().unwrap().defaults.pop();
        assert!(Physical::check(&broken).is_err());
        // A pure ADD at the end keeps today's form: no layout.
        def.columns.push(col("e", int()));
        let end = InstantColumns::after_alter(
            &TableDef {
                columns: def.columns[..4].to_vec(),
                ..def.clone()
            },
            &[Some(0), Some(1), Some(2), Some(3), None],
            &[Value::Int(1)],
        );
        assert_eq!(end.layout, None);
        assert_eq!((end.cols, end.defaults), (4, vec![Value::Int(1)]));
    }

    #[test]
    fn header_round_trips() {
        let h = RecHeader {
            flags: FLAG_DELETED,
            trx_id: 77,
            roll_ptr: 99,
        };
        let mut b = Vec::new();
        h.write(&mut b);
        assert_eq!(RecHeader::read(&b), Some(h));
        assert!(RecHeader::read(&b[..5]).is_none());
    }
}
