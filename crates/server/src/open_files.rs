//! Sizing the server's file descriptors at startup, as MySQL 8 does (`mysqld.cc`'s
//! `adjust_open_files_limit`, `adjust_max_connections`, `adjust_table_cache_size`):
//! ask for `max(10 + max_connections + 2 × table_open_cache, 5 × max_connections,
//! open_files_limit or 5000)` descriptors, raise `RLIMIT_NOFILE`'s soft limit towards
//! that (never past the hard limit, never lower than it was), and when the limit
//! obtained is smaller, lower `max_connections` and then `table_open_cache` to fit,
//! with a warning each. The table cache then keeps at most 2 × `table_open_cache`
//! table files open (`storage::filecache`).

/// MySQL's `TABLE_OPEN_CACHE_DEFAULT`.
pub const TABLE_OPEN_CACHE_DEFAULT: u64 = 4000;
/// MySQL's `TABLE_OPEN_CACHE_MIN`: the table cache is never sized below it.
const TABLE_OPEN_CACHE_MIN: u64 = 400;

/// What the server runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sized {
    pub open_files_limit: u64,
    pub max_connections: u64,
    pub table_open_cache: u64,
}

/// The descriptors to ask for.
fn request(max_connections: u64, table_open_cache: u64, open_files_limit: u64) -> u64 {
    // MyISAM needs two descriptors per table.
    let limit_1 = 10 + max_connections + table_open_cache * 2;
    let limit_2 = max_connections * 5;
    let limit_3 = if open_files_limit == 0 {
        5000
    } else {
        open_files_limit
    };
    limit_1.max(limit_2).max(limit_3)
}

/// MySQL's adjustments, given the limit obtained (`effective`).
fn fit(effective: u64, max_connections: u64, table_open_cache: u64) -> Sized {
    let conn_limit = effective
        .saturating_sub(10 + TABLE_OPEN_CACHE_MIN * 2)
        .max(1);
    let max_connections = max_connections.min(conn_limit);
    let cache_limit =
        (effective.saturating_sub(10 + max_connections) / 2).max(TABLE_OPEN_CACHE_MIN);
    Sized {
        open_files_limit: effective,
        max_connections,
        table_open_cache: table_open_cache.min(cache_limit),
    }
}

/// Raises the soft `RLIMIT_NOFILE` towards `want` (up to the hard limit) and returns
/// the soft limit in force afterwards.
// rlim_t is u64 on Linux but not on every platform the casts are written for.
#[allow(clippy::unnecessary_cast)]
fn raise_nofile(want: u64) -> Result<u64, String> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Err(format!(
            "getrlimit(RLIMIT_NOFILE): {}",
            std::io::Error::last_os_error()
        ));
    }
    let cur = rl.rlim_cur as u64;
    if rl.rlim_cur == libc::RLIM_INFINITY || cur >= want {
        return Ok(if rl.rlim_cur == libc::RLIM_INFINITY {
            want
        } else {
            cur
        });
    }
    let target = if rl.rlim_max == libc::RLIM_INFINITY {
        want
    } else {
        want.min(rl.rlim_max as u64)
    };
    let new = libc::rlimit {
        rlim_cur: target as libc::rlim_t,
        rlim_max: rl.rlim_max,
    };
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
        strata_types::log_warning!(
            "could not raise the open files limit from {cur} to {target}: {}",
            std::io::Error::last_os_error()
        );
        return Ok(cur);
    }
    Ok(target)
}

/// Sizes the descriptors (raising the process's limit), warning about each setting
/// lowered to fit, as MySQL's "Changed limits" warnings.
pub fn size(
    max_connections: u64,
    table_open_cache: u64,
    open_files_limit: u64,
) -> Result<Sized, String> {
    let want = request(max_connections, table_open_cache, open_files_limit);
    let effective = raise_nofile(want)?;
    if effective < want {
        strata_types::log_warning!(
            "Changed limits: max_open_files: {effective} (requested {want})"
        );
    }
    let s = fit(effective, max_connections, table_open_cache);
    if s.max_connections < max_connections {
        strata_types::log_warning!(
            "Changed limits: max_connections: {} (requested {max_connections})",
            s.max_connections
        );
    }
    if s.table_open_cache < table_open_cache {
        strata_types::log_warning!(
            "Changed limits: table_open_cache: {} (requested {table_open_cache})",
            s.table_open_cache
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_as_mysql_sizes_them() {
        // Defaults with a generous limit: nothing changes.
        assert_eq!(request(151, 4000, 0), 8161);
        assert_eq!(
            fit(1_048_576, 151, 4000),
            Sized {
                open_files_limit: 1_048_576,
                max_connections: 151,
                table_open_cache: 4000
            }
        );
        // `ulimit -n 1024`: MySQL 8 starts with max_connections 214 and
        // table_open_cache 400 (its "Changed limits" warnings).
        assert_eq!(
            fit(1024, 1024, 4000),
            Sized {
                open_files_limit: 1024,
                max_connections: 214,
                table_open_cache: 400
            }
        );
        assert_eq!(fit(1024, 151, 4000).table_open_cache, 431);
        // An explicit open_files_limit larger than the computed need wins.
        assert_eq!(request(10, 10, 20000), 20000);
        assert_eq!(request(2000, 400, 0), 10000);
    }
}
