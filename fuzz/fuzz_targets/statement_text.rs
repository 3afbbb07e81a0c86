//! The statement text the session classifies and normalises before any parse: version
//! comments, splitting of multi-statements, the first word, normalisation into a plan
//! cache key with its literal values, placeholder numbering and its inverse; and the
//! spelling of a statement typed under the lexical sql_modes as the default mode's.
#![no_main]
use libfuzzer_sys::fuzz_target;
use strata_sql::text;

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let _ = text::first_word(sql);
    let _ = text::is_diagnostics_statement(sql);
    let expanded = text::expand_version_comments(sql);
    let _ = text::split_statements(expanded.as_deref().unwrap_or(sql));
    let _ = text::unwrap_executable_comment(sql);
    if let Some((shape, _values)) = text::normalize(sql) {
        let _ = text::first_word(&shape);
    }
    for mode in ["ANSI_QUOTES,NO_BACKSLASH_ESCAPES", "PIPES_AS_CONCAT", ""] {
        if let Ok(m) = strata_types::SqlMode::parse(mode) {
            let _ = text::split_statements(&text::to_default_mode(sql, m).text);
        }
    }
    let numbered = text::number_placeholders(sql);
    let _ = text::unnumber_placeholders(&numbered.0);
});
