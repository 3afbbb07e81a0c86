//! The SQL dialect Strata parses with: sqlparser's MySQL dialect with MySQL 8's
//! operator precedence.
//!
//! sqlparser ranks operators as PostgreSQL does, and several of its ranks give a
//! MySQL statement another meaning — silently, as a different answer:
//! `1 = 1 XOR 2 = 3` read as `1 = (1 XOR 2) = 3` (XOR above comparisons; MySQL puts it
//! between OR and AND), `0 = 1 && 0` as `0 = (1 && 0)` (`&&` at `|`'s rank),
//! `2 * 3 ^ 1` as `(2 * 3) ^ 1` (`^` below `*`; MySQL's `^` binds tightest of the
//! binary operators), `6 & 3 << 1` as `(6 & 3) << 1` (shifts below `&`), `'a' LIKE 'a'
//! = 1` as `'a' LIKE ('a' = 1)` and `1 = 2 BETWEEN 1 AND 3` as `(1 = 2) BETWEEN …`
//! (MySQL's predicates — IN, BETWEEN, LIKE, REGEXP — bind tighter than comparisons),
//! and `j->'$.a' + 1` as `j -> ('$.a' + 1)`.
//!
//! MySQL 8's ranks, loosest first (its grammar's `%left` list and `expr` / `bool_pri`
//! / `predicate` / `bit_expr` / `simple_expr` layers): OR `||` · XOR · AND `&&` · NOT
//! · IS · comparisons · IN BETWEEN LIKE REGEXP MEMBER OF · `|` · `&` · `<<` `>>` · `+`
//! `-` · `*` `/` DIV `%` MOD · `^` · unary `-` `~` · `!` · `->` `->>`. MySQL's `!` is
//! NOT at that top rank (`!1 + 1` is `(!1) + 1`, 1; `NOT 1 + 1` is 0), parsed here
//! ([`StrataDialect::parse_prefix`]) as sqlparser's `BangNot`, which the binder reads as
//! NOT.
//!
//! Everything else is the MySQL dialect's own: [`Dialect::dialect`] answers
//! `MySqlDialect`'s type, so sqlparser's MySQL-only syntax stays on, and each method
//! `MySqlDialect` overrides is passed through (the others are the trait's defaults,
//! which `MySqlDialect` uses too).

use std::any::TypeId;

use sqlparser::ast::{Expr, Statement, UnaryOperator};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The ranks, one constant per MySQL level (sqlparser's scale: higher binds tighter;
/// its fixed points are OR 5, AND 10, NOT 15, IS 17 and comparisons 20).
mod rank {
    pub const XOR: u8 = 7;
    pub const AND: u8 = 10;
    pub const PREDICATE: u8 = 22;
    pub const BIT_OR: u8 = 24;
    pub const BIT_AND: u8 = 25;
    pub const SHIFT: u8 = 26;
    pub const PLUS_MINUS: u8 = 30;
    pub const MUL_DIV: u8 = 40;
    pub const BIT_XOR: u8 = 45;
    /// A unary `-`, `+` or `~` takes its operand at this rank, above every binary
    /// operator but the JSON arrows: `-2 ^ 1` is `(-2) ^ 1`.
    pub const UNARY: u8 = 47;
    pub const JSON_ARROW: u8 = 48;
}

/// sqlparser's MySQL dialect with MySQL 8's operator precedence.
#[derive(Debug, Default, Clone, Copy)]
pub struct StrataDialect {
    mysql: MySqlDialect,
}

impl Dialect for StrataDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        let rank = match &parser.peek_token_ref().token {
            Token::Caret => rank::BIT_XOR,
            Token::Mul | Token::Div | Token::Mod | Token::DuckIntDiv => rank::MUL_DIV,
            Token::Word(w) if w.keyword == Keyword::DIV => rank::MUL_DIV,
            Token::Plus | Token::Minus => rank::PLUS_MINUS,
            Token::ShiftLeft | Token::ShiftRight => rank::SHIFT,
            Token::Ampersand => rank::BIT_AND,
            Token::Pipe => rank::BIT_OR,
            Token::Overlap => rank::AND,
            Token::Arrow | Token::LongArrow => rank::JSON_ARROW,
            _ => return None,
        };
        Some(Ok(rank))
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        match prec {
            Precedence::Xor => rank::XOR,
            Precedence::Between | Precedence::Like => rank::PREDICATE,
            Precedence::Pipe => rank::BIT_OR,
            Precedence::Ampersand => rank::BIT_AND,
            Precedence::Caret => rank::BIT_XOR,
            // Only the operands of unary `-`, `+` (MulDivModOp) and `~` (PlusMinus) are
            // parsed at these ranks: the binary operators are ranked above.
            Precedence::MulDivModOp | Precedence::PlusMinus => rank::UNARY,
            other => self.mysql.prec_value(other),
        }
    }

    /// `!expr`: NOT of the operand at the unary operators' rank (sqlparser's own `!`
    /// takes NOT's rank, which would read `!1 + 1` as `!(1 + 1)`).
    /// `!!expr` arrives as one token (PostgreSQL's prefix factorial): two NOTs.
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let nots = match parser.peek_token_ref().token {
            Token::ExclamationMark => 1,
            Token::DoubleExclamationMark => 2,
            _ => return None,
        };
        parser.next_token();
        Some(parser.parse_subexpr(rank::UNARY).map(|e| {
            (0..nots).fold(e, |e, _| Expr::UnaryOp {
                op: UnaryOperator::BangNot,
                expr: Box::new(e),
            })
        }))
    }

    // Passed through: every method MySqlDialect overrides.
    fn is_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.mysql.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.mysql.is_delimited_identifier_start(ch)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.mysql.identifier_quote_style(identifier)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.mysql.supports_string_literal_backslash_escape()
    }
    fn supports_string_literal_concatenation(&self) -> bool {
        self.mysql.supports_string_literal_concatenation()
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        self.mysql.ignores_wildcard_escapes()
    }
    fn supports_numeric_prefix(&self) -> bool {
        self.mysql.supports_numeric_prefix()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        self.mysql.supports_bitwise_shift_operators()
    }
    fn supports_multiline_comment_hints(&self) -> bool {
        self.mysql.supports_multiline_comment_hints()
    }
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        self.mysql.parse_infix(parser, expr, precedence)
    }
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.mysql.parse_statement(parser)
    }
    fn require_interval_qualifier(&self) -> bool {
        self.mysql.require_interval_qualifier()
    }
    fn supports_limit_comma(&self) -> bool {
        self.mysql.supports_limit_comma()
    }
    fn supports_create_table_select(&self) -> bool {
        self.mysql.supports_create_table_select()
    }
    fn supports_insert_set(&self) -> bool {
        self.mysql.supports_insert_set()
    }
    fn supports_user_host_grantee(&self) -> bool {
        self.mysql.supports_user_host_grantee()
    }
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.mysql.is_table_factor_alias(explicit, kw, parser)
    }
    fn supports_table_hints(&self) -> bool {
        self.mysql.supports_table_hints()
    }
    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.mysql.requires_single_line_comment_whitespace()
    }
    fn supports_match_against(&self) -> bool {
        self.mysql.supports_match_against()
    }
    fn supports_select_modifiers(&self) -> bool {
        self.mysql.supports_select_modifiers()
    }
    fn supports_set_names(&self) -> bool {
        self.mysql.supports_set_names()
    }
    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.mysql.supports_comma_separated_set_assignments()
    }
    fn supports_update_order_by(&self) -> bool {
        self.mysql.supports_update_order_by()
    }
    fn supports_data_type_signed_suffix(&self) -> bool {
        self.mysql.supports_data_type_signed_suffix()
    }
    fn supports_cross_join_constraint(&self) -> bool {
        self.mysql.supports_cross_join_constraint()
    }
    fn supports_double_ampersand_operator(&self) -> bool {
        self.mysql.supports_double_ampersand_operator()
    }
    fn supports_binary_kw_as_cast(&self) -> bool {
        self.mysql.supports_binary_kw_as_cast()
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        self.mysql.supports_comment_optimizer_hint()
    }
    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.mysql.supports_constraint_keyword_without_name()
    }
    fn supports_key_column_option(&self) -> bool {
        self.mysql.supports_key_column_option()
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        self.mysql.supports_group_by_with_modifier()
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.mysql.supports_left_associative_joins_without_parens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression tree, without the parentheses written in it.
    fn tree(sql: &str) -> Expr {
        let dialect = StrataDialect::default();
        let mut p = Parser::new(&dialect).try_with_sql(sql).unwrap();
        let mut e = p.parse_expr().unwrap();
        let _ = sqlparser::ast::visit_expressions_mut(&mut e, |e| {
            if let Expr::Nested(inner) = e {
                *e = (**inner).clone();
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        e
    }

    /// `sql` groups as `grouped` does (written with parentheses).
    fn same_as(sql: &str, grouped: &str) {
        assert_eq!(tree(sql), tree(grouped), "{sql} is not {grouped}");
    }

    #[test]
    fn the_check_itself_tells_groupings_apart() {
        assert_ne!(tree("(1 + 2) * 3"), tree("1 + (2 * 3)"));
    }

    #[test]
    fn logical_operators_rank_below_comparisons() {
        same_as("a = 1 XOR b = 2", "(a = 1) XOR (b = 2)");
        same_as("a XOR b AND c", "a XOR (b AND c)");
        same_as("a OR b XOR c", "a OR (b XOR c)");
        same_as("a = 0 && b = 1", "(a = 0) && (b = 1)");
    }

    #[test]
    fn bit_operators_rank_as_mysql() {
        same_as("2 * 3 ^ 1", "2 * (3 ^ 1)");
        same_as("2 ^ 3 * 2", "(2 ^ 3) * 2");
        same_as("5 % 3 ^ 1", "5 % (3 ^ 1)");
        same_as("5 DIV 2 ^ 1", "5 DIV (2 ^ 1)");
        same_as("6 & 3 << 1", "6 & (3 << 1)");
        same_as("1 << 2 ^ 3", "1 << (2 ^ 3)");
        same_as("1 | 6 & 3", "1 | (6 & 3)");
        same_as("1 + 2 << 1", "(1 + 2) << 1");
        same_as("a | b = 3", "(a | b) = 3");
        same_as("-2 ^ 1", "(-2) ^ 1");
        same_as("~1 ^ 1", "(~1) ^ 1");
        same_as("- a * b", "(-a) * b");
    }

    #[test]
    fn predicates_bind_tighter_than_comparisons() {
        same_as("'a' LIKE 'a' = 1", "('a' LIKE 'a') = 1");
        same_as("1 = 2 BETWEEN 1 AND 3", "1 = (2 BETWEEN 1 AND 3)");
        same_as("2 = 1 IN (0)", "2 = (1 IN (0))");
        same_as("a NOT LIKE 'x%' = 0", "(a NOT LIKE 'x%') = 0");
        same_as("a BETWEEN 1 AND 3 AND b", "(a BETWEEN 1 AND 3) AND b");
        same_as("a + 1 BETWEEN b | 1 AND 3", "(a + 1) BETWEEN (b | 1) AND 3");
        same_as("NOT a = b", "NOT (a = b)");
        same_as("a = b IS NULL", "(a = b) IS NULL");
    }

    #[test]
    fn arithmetic_keeps_its_order() {
        same_as("5 - 2 - 1", "(5 - 2) - 1");
        same_as("1 + 2 * 3", "1 + (2 * 3)");
        same_as("8 / 2 / 2", "(8 / 2) / 2");
    }

    #[test]
    fn json_arrows_bind_tightest() {
        same_as("j->'$.a' + 1", "(j->'$.a') + 1");
        same_as("j->>'$.a' = 'x'", "(j->>'$.a') = 'x'");
    }

    #[test]
    fn bang_is_not_at_the_unary_rank() {
        same_as("!a + 1", "(!a) + 1");
        same_as("!a = b", "(!a) = b");
        same_as("!a AND b", "(!a) AND b");
        same_as("!!a", "!(!a)");
        same_as("!j->'$.a'", "!(j->'$.a')");
        same_as("NOT a + 1", "NOT (a + 1)");
        assert!(matches!(
            tree("!a"),
            Expr::UnaryOp {
                op: UnaryOperator::BangNot,
                ..
            }
        ));
        // `!=` is still the comparison.
        assert!(matches!(tree("a != 1"), Expr::BinaryOp { .. }));
    }

    #[test]
    fn mysql_only_syntax_stays_on() {
        // DIV, backquotes and the MySQL dialect's statements still parse.
        same_as("a DIV 2 * 3", "(a DIV 2) * 3");
        assert!(Parser::parse_sql(&StrataDialect::default(), "LOCK TABLES `t` READ").is_ok());
        assert!(Parser::parse_sql(&StrataDialect::default(), "SELECT 1 LIMIT 1, 2").is_ok());
    }
}
