//! The range-driven simplifier for index expressions.
//!
//! Every rule is an identity on integers, with its side condition; `x`, `y`, `m` are
//! expressions, `c, b, g, c'` positive constants, and ranges come from the [`RangeEnv`]
//! (a rule whose condition cannot be shown is not applied). The simplifier rewrites bottom-up
//! and repeats whole passes until nothing changes, so it is idempotent.
//!
//! ```text
//! floordiv:
//!   x floordiv 1                  -> x
//!   k floordiv c                  -> floor(k / c)                      (k constant)
//!   (c m + x) floordiv c          -> m + x floordiv c                  (multiples leave the division)
//!   x floordiv c                  -> q          if x in [q c, q c + c - 1]
//!   (x floordiv b) floordiv c     -> x floordiv (b c)
//!   (g y + r) floordiv (g c')     -> (y + t) floordiv c'   if r in [t g, t g + g - 1]
//! ceildiv:
//!   x ceildiv 1                   -> x
//!   k ceildiv c                   -> ceil(k / c)                       (k constant)
//!   (c m + x) ceildiv c           -> m + x ceildiv c
//!   x ceildiv c                   -> q          if x in [(q - 1) c + 1, q c]
//! mod:
//!   x mod 1                       -> 0
//!   k mod c                       -> k - c floor(k / c)                (k constant)
//!   (c m + x) mod c               -> x mod c
//!   x mod c                       -> x - q c    if x in [q c, q c + c - 1]
//!   (x mod b) mod c               -> x mod c    if c divides b
//!   (g y + r) mod (g c')          -> g ((y + t) mod c') + r - t g   if r in [t g, t g + g - 1]
//! sums:
//!   a x + b x                     -> (a + b) x                         (like terms merge)
//!   b c (x floordiv c) + b (x mod c) -> b x
//! ```

use super::{Atom, ExprError, IndexExpr, RangeEnv, Term, ceil_div, checked_mul, floor_div};

/// Passes after which the simplifier stops even if a pass still changed something. Real
/// expressions reach a fixed point in two or three passes.
const MAX_PASSES: usize = 32;

pub(super) fn simplify(expr: &IndexExpr, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    let mut current = expr.clone();
    for _ in 0..MAX_PASSES {
        let next = pass(&current, env)?;
        if next == current {
            break;
        }
        current = next;
    }
    Ok(current)
}

/// One bottom-up pass: simplify every atom, rebuild the sum, then apply the sum rules.
fn pass(expr: &IndexExpr, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    let mut result = IndexExpr::constant(expr.constant);
    for term in &expr.terms {
        let atom = simplify_atom(&term.atom, env)?;
        result = result.add(&atom.mul(term.coeff)?)?;
    }
    merge_div_mod_pairs(result)
}

fn simplify_atom(atom: &Atom, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    match atom {
        Atom::Var(v) => Ok(IndexExpr::var(*v)),
        Atom::FloorDiv(e, c) => floordiv_rules(pass(e, env)?, *c, env),
        Atom::CeilDiv(e, c) => ceildiv_rules(pass(e, env)?, *c, env),
        Atom::Mod(e, c) => mod_rules(pass(e, env)?, *c, env),
    }
}

/// Splits `e = c * m + x`, moving every term whose coefficient is a multiple of `c` (and the
/// multiple of `c` in the constant) into `m`; `x` keeps the rest, its constant in `[0, c - 1]`.
fn split_multiples(e: &IndexExpr, c: i64) -> Result<(IndexExpr, IndexExpr), ExprError> {
    let mut m_terms = Vec::new();
    let mut x_terms = Vec::new();
    for term in &e.terms {
        if term.coeff % c == 0 {
            m_terms.push(Term { coeff: term.coeff / c, atom: term.atom.clone() });
        } else {
            x_terms.push(term.clone());
        }
    }
    let m = IndexExpr::from_terms(m_terms, floor_div(e.constant, c))?;
    let x = IndexExpr::from_terms(x_terms, e.constant.rem_euclid(c))?;
    Ok((m, x))
}

/// The block index `q` when every value of `x` lies in one block `[q c, q c + c - 1]`.
fn single_block(x: &IndexExpr, c: i64, env: &RangeEnv) -> Option<i64> {
    let r = x.range(env).ok()?;
    let q = floor_div(r.lo, c);
    (q == floor_div(r.hi, c)).then_some(q)
}

/// `x` as `g y + r` where `g > 1` divides `c` and every coefficient of `y`, and the rest `r`
/// lies in one block `[t g, t g + g - 1]`. Returned as `(g, y + t, r - t g)`.
struct GcdSplit {
    g: i64,
    quotient: IndexExpr,
    remainder: IndexExpr,
}

fn gcd_split(x: &IndexExpr, c: i64, env: &RangeEnv) -> Result<Option<GcdSplit>, ExprError> {
    let mut order: Vec<&Term> = x.terms.iter().collect();
    order.sort_by_key(|t| std::cmp::Reverse(t.coeff.unsigned_abs()));
    let mut g = c;
    for split in 1..=order.len() {
        g = gcd(g, order[split - 1].coeff);
        if g <= 1 {
            return Ok(None);
        }
        let big = &order[..split];
        let rest = IndexExpr::from_terms(order[split..].iter().map(|t| (*t).clone()), x.constant)?;
        let Some(t) = single_block(&rest, g, env) else { continue };
        let big_over_g = big.iter().map(|term| Term { coeff: term.coeff / g, atom: term.atom.clone() });
        let quotient = IndexExpr::from_terms(big_over_g, t)?;
        let remainder = rest.add_constant(checked_mul(-t, g)?)?;
        return Ok(Some(GcdSplit { g, quotient, remainder }));
    }
    Ok(None)
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(i64::MAX)
}

fn atom_expr(atom: Atom) -> IndexExpr {
    IndexExpr { terms: vec![Term { coeff: 1, atom }], constant: 0 }
}

fn floordiv_rules(e: IndexExpr, c: i64, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    // x floordiv 1 -> x
    if c == 1 {
        return Ok(e);
    }
    // (c m + x) floordiv c -> m + x floordiv c
    let (m, x) = split_multiples(&e, c)?;
    m.add(&floordiv_rest(x, c, env)?)
}

/// `x floordiv c` for an `x` with no multiple of `c` left in it.
fn floordiv_rest(x: IndexExpr, c: i64, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    // k floordiv c -> floor(k / c); x floordiv c -> q if x in [q c, q c + c - 1]
    if let Some(k) = x.as_constant() {
        return Ok(IndexExpr::constant(floor_div(k, c)));
    }
    if let Some(q) = single_block(&x, c, env) {
        return Ok(IndexExpr::constant(q));
    }
    // (y floordiv b) floordiv c -> y floordiv (b c)
    if let ([Term { coeff: 1, atom: Atom::FloorDiv(y, b) }], 0) = (x.terms.as_slice(), x.constant) {
        if let Some(bc) = b.checked_mul(c) {
            return floordiv_rules((**y).clone(), bc, env);
        }
    }
    // (g y + r) floordiv (g c') -> (y + t) floordiv c'  if r in [t g, t g + g - 1]
    if let Some(split) = gcd_split(&x, c, env)? {
        return floordiv_rules(split.quotient, c / split.g, env);
    }
    Ok(atom_expr(Atom::FloorDiv(Box::new(x), c)))
}

fn ceildiv_rules(e: IndexExpr, c: i64, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    // x ceildiv 1 -> x
    if c == 1 {
        return Ok(e);
    }
    // (c m + x) ceildiv c -> m + x ceildiv c
    let (m, x) = split_multiples(&e, c)?;
    // k ceildiv c -> ceil(k / c); x ceildiv c -> q if x in [(q - 1) c + 1, q c]
    let rest = if let Some(k) = x.as_constant() {
        IndexExpr::constant(ceil_div(k, c)?)
    } else {
        match x.range(env) {
            Ok(r) if ceil_div(r.lo, c)? == ceil_div(r.hi, c)? => IndexExpr::constant(ceil_div(r.lo, c)?),
            _ => atom_expr(Atom::CeilDiv(Box::new(x), c)),
        }
    };
    m.add(&rest)
}

fn mod_rules(e: IndexExpr, c: i64, env: &RangeEnv) -> Result<IndexExpr, ExprError> {
    // x mod 1 -> 0
    if c == 1 {
        return Ok(IndexExpr::constant(0));
    }
    // (c m + x) mod c -> x mod c; k mod c -> k - c floor(k / c)
    let (_, x) = split_multiples(&e, c)?;
    if x.as_constant().is_some() {
        return Ok(x);
    }
    // x mod c -> x - q c  if x in [q c, q c + c - 1]
    if let Some(q) = single_block(&x, c, env) {
        return x.add_constant(checked_mul(-q, c)?);
    }
    // (y mod b) mod c -> y mod c  if c divides b
    if let ([Term { coeff: 1, atom: Atom::Mod(y, b) }], 0) = (x.terms.as_slice(), x.constant) {
        if b % c == 0 {
            return mod_rules((**y).clone(), c, env);
        }
    }
    // (g y + r) mod (g c') -> g ((y + t) mod c') + r - t g  if r in [t g, t g + g - 1]
    if let Some(split) = gcd_split(&x, c, env)? {
        let inner = mod_rules(split.quotient, c / split.g, env)?;
        return inner.mul(split.g)?.add(&split.remainder);
    }
    Ok(atom_expr(Atom::Mod(Box::new(x), c)))
}

/// `b c (x floordiv c) + b (x mod c) -> b x`, repeated until no pair is left.
fn merge_div_mod_pairs(mut sum: IndexExpr) -> Result<IndexExpr, ExprError> {
    'search: loop {
        for (mod_index, term) in sum.terms.iter().enumerate() {
            let Atom::Mod(x, c) = &term.atom else { continue };
            let Some(div_coeff) = term.coeff.checked_mul(*c) else { continue };
            let floordiv = Atom::FloorDiv(x.clone(), *c);
            let Some(div_index) = sum.terms.iter().position(|t| t.atom == floordiv && t.coeff == div_coeff)
            else {
                continue;
            };
            let replacement = x.mul(term.coeff)?;
            let rest = sum
                .terms
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != mod_index && *i != div_index)
                .map(|(_, t)| t.clone());
            sum = IndexExpr::from_terms(rest, sum.constant)?.add(&replacement)?;
            continue 'search;
        }
        return Ok(sum);
    }
}
