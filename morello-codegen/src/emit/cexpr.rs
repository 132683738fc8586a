//! Index expressions as C: `IndexExpr` sums over loop variables printed with C's operators.
//!
//! MLIR's `floordiv` and `mod` round toward negative infinity, C's `/` and `%` toward zero; they
//! agree when the dividend is non-negative. Every dividend is checked with the range analysis:
//!
//! ```text
//! e floordiv c  ->  (e) / c                    if e >= 0 on the loop ranges
//!                   morello_floordiv(e, c)     otherwise (a helper that rounds down)
//! e mod c       ->  (e) % c                    if e >= 0
//!                   morello_mod(e, c)          otherwise
//! e ceildiv c   ->  ((e) + c - 1) / c          if e >= 0
//!                   -morello_floordiv(-(e), c) otherwise
//! ```
//!
//! Loop variables are the symbols `s_j` of the expressions; their C names come from the caller.

use std::fmt::Write as _;

use morello_core::expr::{Atom, IndexExpr, RangeEnv, Var};

use super::helpers::Helper;
use crate::error::CodegenError;

/// Prints expressions over loop symbols as C, recording the helpers it needs.
pub(crate) struct CExprPrinter<'a> {
    /// The C name of each symbol `s_j`.
    pub names: &'a [String],
    /// The ranges of the symbols (and of any dims still in the expression).
    pub env: &'a RangeEnv,
}

impl CExprPrinter<'_> {
    /// The C text of `expr`, and the helpers it calls.
    pub fn print(&self, expr: &IndexExpr, helpers: &mut Vec<Helper>) -> Result<String, CodegenError> {
        let mut out = String::new();
        for (i, term) in expr.terms().iter().enumerate() {
            let atom = self.atom(&term.atom, helpers)?;
            let magnitude = term.coeff.unsigned_abs();
            let sign = match (i, term.coeff < 0) {
                (0, true) => "-",
                (0, false) => "",
                (_, true) => " - ",
                (_, false) => " + ",
            };
            out.push_str(sign);
            if magnitude == 1 {
                out.push_str(&atom);
            } else if matches!(term.atom, Atom::Var(_)) {
                let _ = write!(out, "{magnitude} * {atom}");
            } else {
                let _ = write!(out, "{magnitude} * ({atom})");
            }
        }
        let constant = expr.constant_part();
        match (out.is_empty(), constant) {
            (true, c) => out = c.to_string(),
            (false, 0) => {}
            (false, c) if c < 0 => {
                let _ = write!(out, " - {}", c.unsigned_abs());
            }
            (false, c) => {
                let _ = write!(out, " + {c}");
            }
        }
        Ok(out)
    }

    fn atom(&self, atom: &Atom, helpers: &mut Vec<Helper>) -> Result<String, CodegenError> {
        let (inner, c) = match atom {
            Atom::Var(Var::Symbol(j)) => {
                return self.names.get(*j as usize).cloned().ok_or_else(|| unbound(Var::Symbol(*j)));
            }
            Atom::Var(v) => return Err(unbound(*v)),
            Atom::FloorDiv(e, c) | Atom::CeilDiv(e, c) | Atom::Mod(e, c) => (e, *c),
        };
        let non_negative = inner
            .range(self.env)
            .map_err(|e| CodegenError::Internal { reason: format!("range of `{inner}`: {e}") })?
            .lo
            >= 0;
        let text = self.print(inner, helpers)?;
        let bare = inner.as_var().is_some() || inner.as_constant().is_some();
        let wrapped = if bare { text.clone() } else { format!("({text})") };
        Ok(match (atom, non_negative) {
            (Atom::FloorDiv(..), true) => format!("{wrapped} / {c}"),
            (Atom::Mod(..), true) => format!("{wrapped} % {c}"),
            (Atom::CeilDiv(..), true) => format!("({text} + {}) / {c}", c - 1),
            (Atom::FloorDiv(..), false) => {
                helpers.push(Helper::FloorDiv);
                format!("morello_floordiv({text}, {c})")
            }
            (Atom::Mod(..), false) => {
                helpers.push(Helper::Mod);
                format!("morello_mod({text}, {c})")
            }
            (_, false) => {
                helpers.push(Helper::FloorDiv);
                format!("-morello_floordiv(-({text}), {c})")
            }
            (Atom::Var(_), _) => unreachable!("variables returned above"),
        })
    }
}

fn unbound(var: Var) -> CodegenError {
    CodegenError::Internal { reason: format!("index variable {var} is not a loop variable in scope") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::expr::Interval;

    fn print(text: &str, lo: i64) -> (String, Vec<Helper>) {
        let expr: IndexExpr = text.parse().expect("parses");
        let names = vec!["m_0".to_string(), "k_1".to_string()];
        let env = RangeEnv::from_dims_and_symbols(&[], &[Interval::new(lo, 7), Interval::new(0, 3)]);
        let mut helpers = Vec::new();
        let c = CExprPrinter { names: &names, env: &env }.print(&expr, &mut helpers).expect("prints");
        (c, helpers)
    }

    #[test]
    fn affine_sums_print_as_plain_arithmetic() {
        assert_eq!(print("s0 * 64 + s1 * 4 + 3", 0).0, "64 * m_0 + 4 * k_1 + 3");
        assert_eq!(print("s1 - s0 * 2 - 1", 0).0, "-2 * m_0 + k_1 - 1");
        assert_eq!(print("0", 0).0, "0");
    }

    #[test]
    fn divisions_of_non_negative_values_use_c_operators() {
        assert_eq!(print("(s0 floordiv 4) * 24 + s0 mod 4", 0).0, "24 * (m_0 / 4) + m_0 % 4");
        assert_eq!(print("(s0 + s1) ceildiv 2", 0).0, "(m_0 + k_1 + 1) / 2");
    }

    #[test]
    fn divisions_that_may_be_negative_use_helpers() {
        let (c, helpers) = print("(s0 - 2) floordiv 4 + (s0 - 2) mod 4", 0);
        assert_eq!(c, "morello_floordiv(m_0 - 2, 4) + morello_mod(m_0 - 2, 4)");
        assert_eq!(helpers, [Helper::FloorDiv, Helper::Mod]);
        assert_eq!(print("s0 floordiv 2", -3).0, "morello_floordiv(m_0, 2)");
    }
}
