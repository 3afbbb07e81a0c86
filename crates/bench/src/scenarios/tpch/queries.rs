//! The 22 TPC-H queries with the specification's default substitution parameters, one
//! `.sql` file each under `sql/`, written in MySQL syntax: date arithmetic as
//! `DATE '…' + INTERVAL 'n' UNIT`, Q13's derived table naming its columns with aliases,
//! Q15's view `revenue0` as a CTE. Whether each query's ORDER BY orders its rows
//! totally decides how results are compared: rows of the others are sorted first,
//! since two correct servers may return tied rows in any order.

/// One TPC-H query.
pub struct Query {
    /// 1..=22.
    pub number: u32,
    /// The file's text: comment lines, then one statement without a semicolon.
    text: &'static str,
    /// The ORDER BY fixes the order of every row (no ties possible), so results are
    /// compared row by row as returned.
    pub total_order: bool,
}

/// The queries in the specification's order.
pub const QUERIES: [Query; 22] = [
    q(1, include_str!("sql/q01.sql"), true),
    q(2, include_str!("sql/q02.sql"), true),
    // Ties in revenue (with the same date) could come in any order.
    q(3, include_str!("sql/q03.sql"), false),
    q(4, include_str!("sql/q04.sql"), true),
    q(5, include_str!("sql/q05.sql"), false),
    q(6, include_str!("sql/q06.sql"), true),
    q(7, include_str!("sql/q07.sql"), true),
    q(8, include_str!("sql/q08.sql"), true),
    q(9, include_str!("sql/q09.sql"), true),
    q(10, include_str!("sql/q10.sql"), false),
    q(11, include_str!("sql/q11.sql"), false),
    q(12, include_str!("sql/q12.sql"), true),
    q(13, include_str!("sql/q13.sql"), true),
    q(14, include_str!("sql/q14.sql"), true),
    q(15, include_str!("sql/q15.sql"), true),
    q(16, include_str!("sql/q16.sql"), true),
    q(17, include_str!("sql/q17.sql"), true),
    q(18, include_str!("sql/q18.sql"), false),
    q(19, include_str!("sql/q19.sql"), true),
    q(20, include_str!("sql/q20.sql"), true),
    q(21, include_str!("sql/q21.sql"), true),
    q(22, include_str!("sql/q22.sql"), true),
];

const fn q(number: u32, text: &'static str, total_order: bool) -> Query {
    Query {
        number,
        text,
        total_order,
    }
}

impl Query {
    /// The statement to send at scale factor `sf`: comment lines dropped, Q11's
    /// FRACTION (0.0001 / SF, as the specification scales it) written in.
    pub fn sql(&self, sf: f64) -> String {
        let body: Vec<&str> = self
            .text
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect();
        body.join("\n")
            .trim()
            .trim_end_matches(';')
            .replace("{FRACTION}", &fraction(sf))
    }

    pub fn name(&self) -> String {
        format!("Q{}", self.number)
    }
}

/// 0.0001 / SF as a decimal literal without float noise (0.1 gives 0.001, not
/// 0.0009999999999999998).
fn fraction(sf: f64) -> String {
    let s = format!("{:.12}", 0.0001 / sf);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}

/// The queries `--queries` names (all when None), in the specification's order.
pub fn selected(list: Option<&[u32]>) -> Result<Vec<&'static Query>, String> {
    match list {
        None => Ok(QUERIES.iter().collect()),
        Some(l) => {
            if let Some(bad) = l.iter().find(|n| !(1..=22).contains(*n)) {
                return Err(format!(
                    "--queries: {bad} is not a TPC-H query number (1..22)"
                ));
            }
            Ok(QUERIES.iter().filter(|q| l.contains(&q.number)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_is_one_statement() {
        for q in &QUERIES {
            let sql = q.sql(1.0);
            assert!(
                sql.starts_with("SELECT") || sql.starts_with("WITH"),
                "{}",
                q.name()
            );
            assert!(!sql.contains(';') && !sql.contains("--"), "{}", q.name());
            assert!(!sql.contains('{'), "{}", q.name());
        }
        let numbers: Vec<u32> = QUERIES.iter().map(|q| q.number).collect();
        assert_eq!(numbers, (1..=22).collect::<Vec<u32>>());
    }

    #[test]
    fn q11_fraction_scales_with_the_scale_factor() {
        assert!(QUERIES[10].sql(1.0).contains("* 0.0001\n"));
        assert!(QUERIES[10].sql(0.1).contains("* 0.001\n"));
        assert!(QUERIES[10].sql(0.01).contains("* 0.01\n"));
    }

    #[test]
    fn selection() {
        let s = selected(Some(&[6, 1])).unwrap();
        assert_eq!(s.iter().map(|q| q.number).collect::<Vec<_>>(), [1, 6]);
        assert!(selected(Some(&[23])).is_err());
        assert_eq!(selected(None).unwrap().len(), 22);
    }
}
