//! The result column an aggregate gives, where its bound type alone would describe it
//! otherwise (GROUP_CONCAT's length and BLOB-ness, the JSON aggregates).

use crate::bind::{AggFunc, AggSpec};
use strata_types::output::flags;
use strata_types::{ColumnMeta, FieldType};

/// Result metadata MySQL gives a bare GROUP_CONCAT or JSON aggregate in the select list,
/// where its static type (text) would describe it otherwise: GROUP_CONCAT is TEXT/BLOB
/// unless `group_concat_max_len` is at most 512 (then VARCHAR/VARBINARY), the JSON
/// aggregates are JSON.
pub fn result_meta(spec: &AggSpec, m: &ColumnMeta, group_concat_max_len: u64) -> ColumnMeta {
    let mut m = m.clone();
    match spec.func {
        AggFunc::GroupConcat => {
            m.length = group_concat_max_len.min(u32::MAX as u64) as u32;
            if group_concat_max_len > 512 {
                m.field_type = FieldType::Blob;
                m.flags |= flags::BLOB;
            }
        }
        AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
            m.field_type = FieldType::Json;
            m.length = u32::MAX;
            m.flags |= flags::BLOB | flags::BINARY;
        }
        _ => {}
    }
    m
}
