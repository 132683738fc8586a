//! The text form of indexing maps: the seed's header followed by the domain.
//!
//! ```text
//! map    = "(" [dim ("," dim)*] ")" ["[" [symbol ("," symbol)*] "]"] "->" "(" [expr ("," expr)*] ")"
//!          [","] ["domain" ":" entry ([","] entry)*]
//! entry  = expr "in" "[" integer "," integer "]"
//! ```
//!
//! The header names the dims `d0, d1, ...` and the symbols `s0, s1, ...` in order. The domain
//! lists the range of every dim, then of every symbol, in that order, then the constraints; it
//! is omitted only when there is nothing to list. `Display` prints one line; the alternate form
//! (`{:#}`) prints the domain one entry per line. Both parse back to the same map:
//!
//! ```text
//! (d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 29], d0 mod 2 in [1, 1]
//!
//! (d0, d1)[s0] -> (d0, s0)
//! domain:
//! d0 in [0, 9]
//! d1 in [0, 19]
//! s0 in [0, 29]
//! d0 mod 2 in [1, 1]
//! ```

use std::fmt;
use std::str::FromStr;

use morello_core::expr::{ExprParseError, IndexExpr, Interval, Parser, Var, parse_expr_list};

use super::{Constraint, IndexingMap};

impl fmt::Display for IndexingMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names =
            |prefix: char, n: usize| (0..n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join(", ");
        write!(f, "({})", names('d', self.num_dims()))?;
        if self.num_symbols() > 0 {
            write!(f, "[{}]", names('s', self.num_symbols()))?;
        }
        let results: Vec<String> = self.results.iter().map(ToString::to_string).collect();
        write!(f, " -> ({})", results.join(", "))?;
        let mut entries: Vec<String> = Vec::new();
        for (i, r) in self.dim_ranges.iter().enumerate() {
            entries.push(format!("d{i} in {r}"));
        }
        for (j, r) in self.symbol_ranges.iter().enumerate() {
            entries.push(format!("s{j} in {r}"));
        }
        for c in &self.constraints {
            entries.push(format!("{} in {}", c.expr, c.range));
        }
        if entries.is_empty() {
            return Ok(());
        }
        if f.alternate() {
            write!(f, "\ndomain:\n{}", entries.join("\n"))
        } else {
            write!(f, ", domain: {}", entries.join(", "))
        }
    }
}

impl FromStr for IndexingMap {
    type Err = ExprParseError;

    /// Parses either printed form (see the module docs).
    fn from_str(text: &str) -> Result<Self, ExprParseError> {
        let mut parser = Parser::new(text);
        parser.expect_punct('(')?;
        let num_dims = variable_list(&mut parser, ')', 'd')?;
        let num_symbols = if parser.eat_punct('[') { variable_list(&mut parser, ']', 's')? } else { 0 };
        parser.expect_arrow()?;
        parser.peek();
        let results_at = parser.offset();
        let results = parse_expr_list(&mut parser)?;
        let declared = Declared { dims: num_dims, symbols: num_symbols };
        for r in &results {
            declared.check(r, results_at)?;
        }
        parser.eat_punct(',');
        let entries = if parser.eat_word("domain") {
            parser.expect_punct(':')?;
            domain_entries(&mut parser)?
        } else {
            Vec::new()
        };
        if !parser.at_end() {
            return Err(parser.unexpected("`domain:` or the end of the map"));
        }
        let mut entries = entries.into_iter();
        let mut ranges = |kind: fn(u32) -> Var, n: usize| -> Result<Vec<Interval>, ExprParseError> {
            (0..n)
                .map(|i| {
                    let var = kind(u32::try_from(i).unwrap_or(u32::MAX));
                    match entries.next() {
                        Some(entry) if entry.expr.as_var() == Some(var) => Ok(entry.range),
                        Some(entry) => Err(ExprParseError {
                            message: format!("expected the range of {var} here (`{var} in [lo, hi]`)"),
                            offset: entry.offset,
                        }),
                        None => Err(ExprParseError {
                            message: format!("the domain lacks the range of {var} (`{var} in [lo, hi]`)"),
                            offset: text.len(),
                        }),
                    }
                })
                .collect()
        };
        let dim_ranges = ranges(Var::Dim, num_dims)?;
        let symbol_ranges = ranges(Var::Symbol, num_symbols)?;
        let mut constraints = Vec::new();
        for entry in entries {
            declared.check(&entry.expr, entry.offset)?;
            constraints.push(Constraint::new(entry.expr, entry.range));
        }
        Ok(IndexingMap { dim_ranges, symbol_ranges, results, constraints })
    }
}

struct Declared {
    dims: usize,
    symbols: usize,
}

impl Declared {
    fn check(&self, expr: &IndexExpr, offset: usize) -> Result<(), ExprParseError> {
        for var in expr.vars() {
            let ok = match var {
                Var::Dim(i) => (i as usize) < self.dims,
                Var::Symbol(j) => (j as usize) < self.symbols,
            };
            if !ok {
                return Err(ExprParseError {
                    message: format!("{var} is not declared in the map's header"),
                    offset,
                });
            }
        }
        Ok(())
    }
}

/// Parses the rest of `(d0, d1, ...)` or `[s0, s1, ...]` after the opening bracket, requiring
/// the names in order; returns the count.
fn variable_list(parser: &mut Parser<'_>, close: char, prefix: char) -> Result<usize, ExprParseError> {
    let mut count = 0usize;
    if parser.eat_punct(close) {
        return Ok(count);
    }
    loop {
        let expected = format!("{prefix}{count}");
        if !parser.eat_word(&expected) {
            return Err(parser.unexpected(&format!("`{expected}`")));
        }
        count += 1;
        if parser.eat_punct(close) {
            return Ok(count);
        }
        parser.expect_punct(',')?;
    }
}

struct Entry {
    expr: IndexExpr,
    range: Interval,
    offset: usize,
}

fn domain_entries(parser: &mut Parser<'_>) -> Result<Vec<Entry>, ExprParseError> {
    let mut entries = Vec::new();
    while !parser.at_end() {
        // `at_end` skipped the whitespace, so the offset is the entry's first character.
        let offset = parser.offset();
        let expr = parser.parse_expr()?;
        if !parser.eat_word("in") {
            return Err(parser.unexpected("`in`"));
        }
        parser.expect_punct('[')?;
        let lo = parser.parse_int()?;
        parser.expect_punct(',')?;
        let hi = parser.parse_int()?;
        parser.expect_punct(']')?;
        entries.push(Entry { expr, range: Interval::new(lo, hi), offset });
        parser.eat_punct(',');
    }
    Ok(entries)
}
