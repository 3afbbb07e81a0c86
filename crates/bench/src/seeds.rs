//! The seeds' published figures, typed in from the seed posts (/work/shared/seeds/) as
//! reference data. They are printed beside each measured table, labelled as the
//! seed's, and never mixed into what Strata measured.

/// One published cell: a number, or what the post wrote instead ("Too long", "<1").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SeedVal {
    Num(f64),
    Text(&'static str),
}

use SeedVal::{Num, Text};

impl SeedVal {
    pub fn num(self) -> Option<f64> {
        match self {
            Num(v) => Some(v),
            Text(_) => None,
        }
    }

    pub fn show(self) -> String {
        match self {
            Num(v) => crate::report::fmt_num(v),
            Text(t) => t.to_string(),
        }
    }
}

/// A seed's table for one experiment: what its two columns were and its rows, keyed
/// like the measured table's rows (thread count, join column, ...).
#[derive(Clone, Copy, Debug)]
pub struct SeedTable {
    /// Which post, which machine, which unit.
    pub source: &'static str,
    pub a: &'static str,
    pub b: &'static str,
    pub rows: &'static [(&'static str, SeedVal, SeedVal)],
}

impl SeedTable {
    pub fn row(&self, key: &str) -> Option<(SeedVal, SeedVal)> {
        self.rows
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, a, b)| (*a, *b))
    }
}

const S000: &str = "seed 000 (MyISAM mmap, 2006; 4x Xeon 2 GHz HT, Linux 2.4, sysbench; queries/s, transactions/s for OLTP)";

pub const MMAP_SELECT_PRIMARY: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(8894.00), Num(9393.73)),
        ("4", Num(21774.82), Num(22650.34)),
        ("16", Num(26161.71), Num(27233.20)),
        ("64", Num(24330.44), Num(24847.33)),
        ("256", Num(23868.33), Num(24271.74)),
    ],
};

pub const MMAP_SELECT_RANGE: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(1555.05), Num(2516.28)),
        ("4", Num(3055.64), Num(4749.04)),
        ("16", Num(3193.56), Num(4365.28)),
        ("64", Num(3190.75), Num(4301.65)),
        ("256", Num(3183.87), Num(4225.03)),
    ],
};

pub const MMAP_OLTP_RO: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(249.58), Num(272.38)),
        ("4", Num(608.79), Num(737.73)),
        ("16", Num(694.52), Num(799.64)),
        ("64", Num(684.06), Num(781.29)),
        ("256", Num(668.79), Num(767.62)),
    ],
};

pub const MMAP_UPDATE_KEY: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(5266.30), Num(6586.48)),
        ("4", Num(8443.85), Num(11446.37)),
        ("16", Num(8080.29), Num(10974.55)),
        ("64", Num(7654.28), Num(10317.60)),
        ("256", Num(6474.26), Num(8577.43)),
    ],
};

pub const MMAP_UPDATE_NOKEY: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(7665.51), Num(9114.75)),
        ("4", Num(10963.06), Num(14964.02)),
        ("16", Num(10472.81), Num(14028.80)),
        ("64", Num(10013.07), Num(13161.23)),
        ("256", Num(8734.11), Num(10991.45)),
    ],
};

pub const MMAP_OLTP_RW: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(183.48), Num(234.36)),
        ("4", Num(180.00), Num(243.10)),
        ("16", Num(177.23), Num(238.38)),
        ("64", Num(176.17), Num(237.31)),
        ("256", Num(175.86), Num(234.18)),
    ],
};

pub const MMAP_BATCH: SeedTable = SeedTable {
    source: S000,
    a: "Pread",
    b: "Mmap",
    rows: &[
        ("1", Num(13.79), Num(33.53)),
        ("4", Num(29.36), Num(99.15)),
        ("16", Num(20.48), Num(136.89)),
        ("64", Num(20.34), Num(137.98)),
        ("256", Num(20.69), Num(137.97)),
    ],
};

pub const JOIN: SeedTable = SeedTable {
    source: "seed 001 (Join performance of MyISAM and Innodb, 2006; 32-bit Linux, 20,000 rows; seconds per query)",
    a: "MyISAM",
    b: "Innodb",
    rows: &[
        ("id", Num(0.24), Num(0.07)),
        ("i", Num(0.27), Num(0.30)),
        ("c", Num(1.19), Num(0.38)),
    ],
};

const S002: &str = "seed 002 (Fast reads or fast scans?, 2010; 16 cores, MySQL 5.1.45, 2,000,000 rows; queries/s; 512 and 1024 clients not published)";

macro_rules! selfjoin_seed {
    ($name:ident, $myisam:expr, $innodb:expr) => {
        pub const $name: SeedTable = SeedTable {
            source: S002,
            a: "myisam",
            b: "innodb",
            rows: &[
                ("1", Num($myisam[0]), Num($innodb[0])),
                ("2", Num($myisam[1]), Num($innodb[1])),
                ("4", Num($myisam[2]), Num($innodb[2])),
                ("8", Num($myisam[3]), Num($innodb[3])),
                ("16", Num($myisam[4]), Num($innodb[4])),
                ("32", Num($myisam[5]), Num($innodb[5])),
                ("64", Num($myisam[6]), Num($innodb[6])),
                ("128", Num($myisam[7]), Num($innodb[7])),
                ("256", Num($myisam[8]), Num($innodb[8])),
            ],
        };
    };
}

selfjoin_seed!(
    SELFJOIN_1,
    [6354., 12061., 23373., 44284., 50778., 49546., 44412., 30444., 18827.],
    [6843., 13157., 24552., 46822., 62588., 57023., 46568., 30582., 18745.]
);
selfjoin_seed!(
    SELFJOIN_10,
    [3890., 7129., 12512., 16450., 12272., 12304., 12441., 12448., 11304.],
    [4240., 8466., 16387., 33221., 53902., 39599., 36214., 28026., 18084.]
);
selfjoin_seed!(
    SELFJOIN_100,
    [1608., 2260., 2263., 1899., 1371., 1399., 1451., 1468., 1442.],
    [1842., 3455., 7249., 14842., 20206., 13875., 13471., 12942., 12344.]
);
selfjoin_seed!(
    SELFJOIN_1000,
    [232., 248., 227., 189., 141., 143., 149., 148., 148.],
    [380., 654., 1222., 2023., 2487., 1866., 1791., 1794., 1942.]
);
selfjoin_seed!(
    SELFJOIN_10000,
    [24., 24., 23., 19., 14., 14., 15., 15., 15.],
    [43., 70., 130., 213., 254., 199., 194., 196., 199.]
);
selfjoin_seed!(
    SELFJOIN_1000_INDEX_ONLY,
    [353., 244., 223., 190., 140., 142., 147., 146., 146.],
    [457., 706., 1354., 2146., 2596., 2044., 1918., 1887., 1953.]
);

/// The seed-002 table for a range of `rows` rows, if the seed published one.
pub fn selfjoin(rows: u64, index_only: bool) -> Option<SeedTable> {
    match (rows, index_only) {
        (1, false) => Some(SELFJOIN_1),
        (10, false) => Some(SELFJOIN_10),
        (100, false) => Some(SELFJOIN_100),
        (1000, false) => Some(SELFJOIN_1000),
        (10000, false) => Some(SELFJOIN_10000),
        (1000, true) => Some(SELFJOIN_1000_INDEX_ONLY),
        _ => None,
    }
}

const S003: &str = "seed 003 (Make MySQL faster in one hour, 2008; 8 cores, MySQL 5.0.37; seconds to complete; base = InnoDB spin-then-wait mutex, pthread_mutex = OS mutex)";

pub const LATCH_JOIN: SeedTable = SeedTable {
    source: S003,
    a: "base",
    b: "pthread_mutex",
    rows: &[
        ("1", Num(2.6), Num(2.5)),
        ("2", Num(3.9), Num(3.7)),
        ("4", Num(8.1), Num(9.1)),
        ("8", Num(182.5), Num(27.8)),
        ("16", Text("Too long"), Num(58.6)),
    ],
};

pub const LATCH_INSERT: SeedTable = SeedTable {
    source: S003,
    a: "base",
    b: "pthread_mutex",
    rows: &[
        ("1", Num(15.5), Num(13.5)),
        ("2", Num(32.4), Num(23.8)),
        ("4", Num(78.2), Num(76.0)),
        ("8", Text("Too long"), Num(378.7)),
        ("16", Text("Too long"), Text("Too long")),
    ],
};

const S004: &str = "seed 004 (tmpfs vs OS page cache, 2009; two 400 MB blob tables, ~83,574 rows each, ext3 vs tmpfs; queries/s)";

pub const PAGECACHE_SCAN: SeedTable = SeedTable {
    source: S004,
    a: "normal",
    b: "tmpfs",
    rows: &[
        // Benchmark (1): 100 queries in 18.224 s and 19.375 s.
        ("OS cache warm", Num(5.0), Num(5.0)),
        // Benchmark (2): 7 min 8.194 s and 26.287 s for 100 queries.
        ("OS cache dropped", Text("<1"), Num(4.0)),
    ],
};

pub const PAGECACHE_ORDER_BY: SeedTable = SeedTable {
    source: S004,
    a: "normal",
    b: "tmpfs",
    rows: &[
        // Benchmark (4): one table, 10 queries in 15.417 s and 15.523 s.
        ("OS cache warm", Num(0.675), Num(0.653)),
        // Benchmark (3): both tables, swapping: 2 min 48.056 s and 8 min 33.659 s.
        ("both tables", Num(0.0598), Num(0.0195)),
    ],
};

const S001_GC: &str = "seed 001 (Group commit and XA, 2006; sysbench update_key; transactions/s)";

pub const GROUPCOMMIT_FLUSH: SeedTable = SeedTable {
    source: S001_GC,
    a: "without --log-bin",
    b: "(not published)",
    rows: &[
        ("1", Num(1218.68), Text("-")),
        ("4", Num(2686.36), Text("-")),
        ("16", Num(3993.59), Text("-")),
        ("64", Num(3630.55), Text("-")),
    ],
};

pub const GROUPCOMMIT_BINLOG: SeedTable = SeedTable {
    source: S001_GC,
    a: "without --log-bin",
    b: "--log-bin",
    rows: &[
        ("1", Num(1218.68), Num(614.94)),
        ("4", Num(2686.36), Num(667.77)),
        ("16", Num(3993.59), Num(666.14)),
        ("64", Num(3630.55), Num(665.18)),
    ],
};

/// The third column of the seed's group-commit table, for the notes.
pub const GROUPCOMMIT_BINLOG_NO_XA: [(&str, f64); 4] = [
    ("1", 1010.44),
    ("4", 1162.60),
    ("16", 1161.56),
    ("64", 1151.36),
];
