//! Simplification of indexing maps: constraints, results and symbols, to a canonical form.
//!
//! Every rule preserves the relation the map denotes (the set of `(source, target)` pairs). A
//! pass applies them in the order below; passes repeat until nothing changes, so the result is
//! idempotent. `x` is an expression, `v` a variable, `c, g` positive constants, `[lo, hi]` a
//! constraint's range and `R(x)` the interval analysis of `x` under the map's ranges.
//!
//! ```text
//! constraints (each one on its own):
//!   x in [lo, hi]                -> x' in [lo, hi]               x' = x simplified like a result
//!   k in [lo, hi]                -> dropped if lo <= k <= hi, else the map is empty   (k constant)
//!   x + k in [lo, hi]            -> x in [lo - k, hi - k]
//!   g x in [lo, hi]              -> x in [ceil(lo / g), floor(hi / g)]    (g = gcd of the coefficients)
//!   -x in [lo, hi]               -> x in [-hi, -lo]              (the first coefficient is positive)
//!   x floordiv c in [lo, hi]     -> x in [lo c, hi c + c - 1]
//!   x ceildiv c in [lo, hi]      -> x in [(lo - 1) c + 1, hi c]
//!   (x + k) mod c in [lo, hi]    -> x mod c in [lo - k, hi - k]  (k in [1, c - 1], shifted by c when
//!                                                                 the interval does not wrap around)
//!   x in [lo, hi]                -> dropped                      if R(x) lies in [lo, hi]
//!                                -> the map is empty             if R(x) misses [lo, hi]
//!                                -> x in [lo, hi] ∩ R(x)         otherwise
//!   v in [lo, hi]                -> range(v) := range(v) ∩ [lo, hi], dropped
//! constraints together:
//!   x in I, x in J               -> x in I ∩ J
//!   a v + y in [lo, hi]          -> range(v) := range(v) ∩ [lo - max R(y), hi - min R(y)] / a
//!                                   (rounded inward; for every plain variable term a v)
//!   x in I over a box of at most SCAN_LIMIT points of its variables: evaluated at every point;
//!     no point satisfies         -> the map is empty
//!     every point satisfies      -> dropped
//!     otherwise                  -> I := [min, max] of the satisfying values, and each variable's
//!                                   range := [min, max] of its value over the satisfying points
//! results and constraints:
//!   e                            -> e.simplify(ranges)           (the range-driven expression simplifier)
//!   given a constraint x mod m in [r, r] (x without constant part), in every other expression,
//!   for each c dividing m and r' = r mod c:
//!   (x + k) floordiv c           -> x floordiv c + floor((r' + k) / c)
//!   (x + k) ceildiv c            -> x floordiv c + ceil((r' + k) / c)
//!   (x + k) mod c                -> (r' + k) mod c
//! dims:
//!   d in [v, v]                  -> the constant v inside every larger expression (`d0 + s0` with
//!                                   d0 in [0, 0] is s0); a result that is d alone stays d, as XLA
//!                                   prints a degenerate dimension
//! symbols:
//!   s in [v, v]                  -> the constant v, and s is removed
//!   s unused                     -> removed                      (its range is not empty)
//!   symbols are renumbered in order of first appearance in the results, then the constraints
//! finally:
//!   constraints are sorted; a map found empty keeps its ranges and results and gets the single
//!   constraint 1 in [0, 0]
//! ```

use morello_core::expr::{Atom, ExprError, IndexExpr, Interval, Point, RangeEnv, Term, Var};

use super::map::var_index;
use super::{Constraint, IndexingError, IndexingMap};

/// Passes after which simplification stops even if a pass still changed something; real maps
/// reach a fixed point in two or three passes.
const MAX_PASSES: usize = 16;

/// The largest box of a constraint's variables that is checked point by point.
const SCAN_LIMIT: u128 = 4096;

impl IndexingMap {
    /// The canonical simplified form of the map (see the module docs of `simplify.rs` for the
    /// rules). It relates exactly the same pairs, and simplifying it again changes nothing.
    ///
    /// ```
    /// use morello_xla::indexing::IndexingMap;
    /// let map: IndexingMap =
    ///     "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]".parse().unwrap();
    /// assert_eq!(map.simplify().unwrap().to_string(), "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]");
    /// ```
    ///
    /// # Errors
    /// [`IndexingError::Arithmetic`] if a rewrite overflows.
    pub fn simplify(&self) -> Result<IndexingMap, IndexingError> {
        let mut current = self.clone();
        for _ in 0..MAX_PASSES {
            let Some(next) = pass(&current)? else {
                return Ok(empty_form(&current));
            };
            if next == current {
                break;
            }
            current = next;
        }
        Ok(current)
    }
}

/// The canonical form of a map known to be empty.
fn empty_form(map: &IndexingMap) -> IndexingMap {
    IndexingMap { constraints: vec![Constraint::unsatisfiable()], ..map.clone() }
}

/// One pass; `None` if the map is found to be empty.
fn pass(map: &IndexingMap) -> Result<Option<IndexingMap>, IndexingError> {
    if map.is_known_empty() {
        return Ok(None);
    }
    let mut ranges = Ranges { dims: map.dim_ranges.clone(), symbols: map.symbol_ranges.clone() };
    let env = map.range_env();
    let mut kept: Vec<Constraint> = Vec::new();
    for constraint in &map.constraints {
        match normalize(constraint, &env)? {
            Normalized::Empty => return Ok(None),
            Normalized::Dropped => {}
            Normalized::OnVariable(var, range) => ranges.narrow(var, range),
            Normalized::Kept(c) => kept.push(c),
        }
    }
    let Some(kept) = merge_duplicates(kept) else { return Ok(None) };
    for constraint in &kept {
        for (var, range) in propagate_bounds(constraint, &ranges.env())? {
            ranges.narrow(var, range);
        }
    }
    if ranges.any_empty() {
        return Ok(None);
    }
    let env = ranges.env();
    let mut scanned = Vec::with_capacity(kept.len());
    for constraint in kept {
        match scan(&constraint, &env, map)? {
            Scan::Unknown => scanned.push(constraint),
            Scan::Empty => return Ok(None),
            Scan::Always => {}
            Scan::Some { range, variables } => {
                for (var, r) in variables {
                    ranges.narrow(var, r);
                }
                scanned.push(Constraint::new(constraint.expr, range));
            }
        }
    }
    if ranges.any_empty() {
        return Ok(None);
    }
    let env = ranges.env();
    let facts: Vec<Option<ModFact>> = scanned.iter().map(ModFact::from_constraint).collect();
    let all_facts: Vec<ModFact> = facts.iter().flatten().cloned().collect();
    let results = map
        .results
        .iter()
        .map(|r| simplify_expr(&fold_point_dims(r, &ranges.dims)?, &env, &all_facts))
        .collect::<Result<Vec<_>, IndexingError>>()?;
    let mut constraints = Vec::with_capacity(scanned.len());
    for (i, c) in scanned.iter().enumerate() {
        let others: Vec<ModFact> =
            facts.iter().enumerate().filter(|(j, _)| *j != i).filter_map(|(_, f)| f.clone()).collect();
        let expr = fold_point_dims(&c.expr, &ranges.dims)?;
        constraints.push(Constraint::new(simplify_expr(&expr, &env, &others)?, c.range));
    }
    let map = IndexingMap { dim_ranges: ranges.dims, symbol_ranges: ranges.symbols, results, constraints };
    let mut map = canonical_symbols(&map)?;
    map.constraints.sort_by(|a, b| (&a.expr, a.range.lo, a.range.hi).cmp(&(&b.expr, b.range.lo, b.range.hi)));
    Ok(Some(map))
}

/// `expr` with every dim whose range is one value replaced by that value, unless `expr` is
/// that dim alone.
fn fold_point_dims(expr: &IndexExpr, dims: &[Interval]) -> Result<IndexExpr, IndexingError> {
    if expr.as_var().is_some() {
        return Ok(expr.clone());
    }
    Ok(expr.substitute(&mut |var| {
        Ok(match var {
            Var::Dim(i) => dims.get(i as usize).filter(|r| r.lo == r.hi).map(|r| IndexExpr::constant(r.lo)),
            Var::Symbol(_) => None,
        })
    })?)
}

/// The ranges of a map being simplified.
struct Ranges {
    dims: Vec<Interval>,
    symbols: Vec<Interval>,
}

impl Ranges {
    fn narrow(&mut self, var: Var, range: Interval) {
        let slot = match var {
            Var::Dim(i) => self.dims.get_mut(i as usize),
            Var::Symbol(j) => self.symbols.get_mut(j as usize),
        };
        if let Some(slot) = slot {
            *slot = intersect(*slot, range);
        }
    }

    fn any_empty(&self) -> bool {
        self.dims.iter().chain(&self.symbols).any(Interval::is_empty)
    }

    fn env(&self) -> RangeEnv {
        RangeEnv::from_dims_and_symbols(&self.dims, &self.symbols)
    }
}

fn intersect(a: Interval, b: Interval) -> Interval {
    Interval::new(a.lo.max(b.lo), a.hi.min(b.hi))
}

/// What one constraint becomes on its own.
enum Normalized {
    /// It can never hold: the map is empty.
    Empty,
    /// It always holds.
    Dropped,
    /// It bounds one variable.
    OnVariable(Var, Interval),
    /// It stays, in normal form.
    Kept(Constraint),
}

fn normalize(constraint: &Constraint, env: &RangeEnv) -> Result<Normalized, IndexingError> {
    let mut expr = constraint.expr.simplify(env)?;
    let mut range = constraint.range;
    loop {
        if range.is_empty() {
            return Ok(Normalized::Empty);
        }
        if let Some(k) = expr.as_constant() {
            return Ok(if range.contains(k) { Normalized::Dropped } else { Normalized::Empty });
        }
        let Some((next_expr, next_range)) = normal_step(&expr, range)? else { break };
        if next_expr == expr && next_range == range {
            break;
        }
        expr = next_expr;
        range = next_range;
    }
    if let Some(var) = expr.as_var() {
        return Ok(Normalized::OnVariable(var, range));
    }
    let r = expr.range(env)?;
    if range.contains_interval(&r) {
        return Ok(Normalized::Dropped);
    }
    let narrowed = intersect(r, range);
    if narrowed.is_empty() {
        return Ok(Normalized::Empty);
    }
    Ok(Normalized::Kept(Constraint::new(expr, narrowed)))
}

/// One rewrite of `expr in range` toward normal form, or `None` if a bound would overflow (the
/// constraint is then kept as it is).
fn normal_step(expr: &IndexExpr, range: Interval) -> Result<Option<(IndexExpr, Interval)>, ExprError> {
    // x + k in [lo, hi] -> x in [lo - k, hi - k]
    let k = expr.constant_part();
    if k != 0 {
        let (Some(lo), Some(hi)) = (range.lo.checked_sub(k), range.hi.checked_sub(k)) else {
            return Ok(None);
        };
        return Ok(Some((expr.add_constant(-k)?, Interval::new(lo, hi))));
    }
    // g x in [lo, hi] -> x in [ceil(lo / g), floor(hi / g)]
    let g = expr.terms().iter().fold(0, |g, t| gcd(g, t.coeff));
    if g > 1 {
        let terms = expr.terms().iter().map(|t| Term { coeff: t.coeff / g, atom: t.atom.clone() });
        let divided = IndexExpr::from_terms(terms, 0)?;
        let lo = range.lo.div_euclid(g) + i64::from(range.lo.rem_euclid(g) != 0);
        return Ok(Some((divided, Interval::new(lo, range.hi.div_euclid(g)))));
    }
    // -x in [lo, hi] -> x in [-hi, -lo]
    if expr.terms().first().is_some_and(|t| t.coeff < 0) {
        let (Some(lo), Some(hi)) = (range.hi.checked_neg(), range.lo.checked_neg()) else { return Ok(None) };
        return Ok(Some((expr.neg()?, Interval::new(lo, hi))));
    }
    let [term] = expr.terms() else { return Ok(None) };
    if term.coeff != 1 {
        return Ok(None);
    }
    Ok(match &term.atom {
        // x floordiv c in [lo, hi] -> x in [lo c, hi c + c - 1]
        Atom::FloorDiv(x, c) => {
            let lo = range.lo.checked_mul(*c);
            let hi = range.hi.checked_mul(*c).and_then(|h| h.checked_add(c - 1));
            lo.zip(hi).map(|(lo, hi)| ((**x).clone(), Interval::new(lo, hi)))
        }
        // x ceildiv c in [lo, hi] -> x in [(lo - 1) c + 1, hi c]
        Atom::CeilDiv(x, c) => {
            let lo = range.lo.checked_sub(1).and_then(|l| l.checked_mul(*c)).and_then(|l| l.checked_add(1));
            let hi = range.hi.checked_mul(*c);
            lo.zip(hi).map(|(lo, hi)| ((**x).clone(), Interval::new(lo, hi)))
        }
        // (x + k) mod c in [lo, hi] -> x mod c in [lo - k, hi - k] (mod c, when it does not wrap)
        Atom::Mod(x, c) => {
            let range = intersect(range, Interval::new(0, c - 1));
            let k = x.constant_part().rem_euclid(*c);
            let base = x.add_constant(-x.constant_part())?.modulo(*c)?;
            if range.is_empty() {
                Some((expr.clone(), range))
            } else if k == 0 {
                Some((base, range))
            } else if range.lo - k >= 0 {
                Some((base, Interval::new(range.lo - k, range.hi - k)))
            } else if range.hi - k < 0 {
                Some((base, Interval::new(range.lo - k + c, range.hi - k + c)))
            } else {
                Some((expr.clone(), range))
            }
        }
        Atom::Var(_) => None,
    })
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

/// Merges constraints on the same expression; `None` if two of them cannot both hold.
fn merge_duplicates(mut constraints: Vec<Constraint>) -> Option<Vec<Constraint>> {
    constraints.sort_by(|a, b| a.expr.cmp(&b.expr));
    let mut merged: Vec<Constraint> = Vec::with_capacity(constraints.len());
    for c in constraints {
        match merged.last_mut() {
            Some(last) if last.expr == c.expr => {
                last.range = intersect(last.range, c.range);
                if last.range.is_empty() {
                    return None;
                }
            }
            _ => merged.push(c),
        }
    }
    Some(merged)
}

/// Bounds on each plain variable term `a v` of a constraint `a v + y in [lo, hi]`:
/// `a v in [lo - max R(y), hi - min R(y)]`, divided by `a` and rounded inward.
fn propagate_bounds(constraint: &Constraint, env: &RangeEnv) -> Result<Vec<(Var, Interval)>, IndexingError> {
    let mut out = Vec::new();
    for term in constraint.expr.terms() {
        let Atom::Var(var) = term.atom else { continue };
        let rest = constraint.expr.sub(&IndexExpr::var(var).mul(term.coeff)?)?;
        let Ok(r) = rest.range(env) else { continue };
        let (lo, hi) = (
            i128::from(constraint.range.lo) - i128::from(r.hi),
            i128::from(constraint.range.hi) - i128::from(r.lo),
        );
        let a = i128::from(term.coeff);
        let (lo, hi) = if a > 0 { (lo, hi) } else { (-hi, -lo) };
        let a = a.abs();
        let lo = lo.div_euclid(a) + i128::from(lo.rem_euclid(a) != 0);
        let hi = hi.div_euclid(a);
        let clamp = |v: i128| i64::try_from(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX))).unwrap_or(0);
        out.push((var, Interval::new(clamp(lo), clamp(hi))));
    }
    Ok(out)
}

/// What checking a constraint at every point of its variables' box found.
enum Scan {
    /// The box is too large (or evaluation overflowed): nothing is known.
    Unknown,
    /// No point satisfies the constraint.
    Empty,
    /// Every point satisfies it.
    Always,
    /// Some points do: the tight range of the satisfying values, and of each variable.
    Some { range: Interval, variables: Vec<(Var, Interval)> },
}

fn scan(constraint: &Constraint, env: &RangeEnv, map: &IndexingMap) -> Result<Scan, IndexingError> {
    let vars: Vec<Var> = constraint.expr.vars().into_iter().collect();
    let mut boxes = Vec::with_capacity(vars.len());
    let mut count: u128 = 1;
    for &var in &vars {
        let Some(r) = env.get(var) else { return Ok(Scan::Unknown) };
        if r.is_empty() {
            return Ok(Scan::Empty);
        }
        count = count.saturating_mul(interval_size(r));
        boxes.push(r);
    }
    if count > SCAN_LIMIT {
        return Ok(Scan::Unknown);
    }
    let mut dims = vec![0i64; map.num_dims()];
    let mut symbols = vec![0i64; map.num_symbols()];
    let mut values: Vec<i64> = boxes.iter().map(|r| r.lo).collect();
    let mut satisfied: Option<Interval> = None;
    let mut var_hull: Vec<Option<Interval>> = vec![None; vars.len()];
    let mut all = true;
    loop {
        for (var, &v) in vars.iter().zip(&values) {
            match var {
                Var::Dim(i) => dims[*i as usize] = v,
                Var::Symbol(j) => symbols[*j as usize] = v,
            }
        }
        let Ok(value) = constraint.expr.eval(&Point { dims: &dims, symbols: &symbols }) else {
            return Ok(Scan::Unknown);
        };
        if constraint.range.contains(value) {
            satisfied = Some(hull(satisfied, value));
            for (slot, &v) in var_hull.iter_mut().zip(&values) {
                *slot = Some(hull(*slot, v));
            }
        } else {
            all = false;
        }
        if !advance(&mut values, &boxes) {
            break;
        }
    }
    let Some(range) = satisfied else { return Ok(Scan::Empty) };
    if all {
        return Ok(Scan::Always);
    }
    let variables = vars.into_iter().zip(var_hull).filter_map(|(v, r)| r.map(|r| (v, r))).collect();
    Ok(Scan::Some { range, variables })
}

fn hull(acc: Option<Interval>, v: i64) -> Interval {
    match acc {
        Some(r) => Interval::new(r.lo.min(v), r.hi.max(v)),
        None => Interval::point(v),
    }
}

/// The number of values in a non-empty interval.
pub(super) fn interval_size(r: Interval) -> u128 {
    if r.is_empty() { 0 } else { (i128::from(r.hi) - i128::from(r.lo) + 1).unsigned_abs() }
}

/// Steps an odometer over the box (last variable fastest); `false` after the last point.
pub(super) fn advance(values: &mut [i64], boxes: &[Interval]) -> bool {
    for i in (0..values.len()).rev() {
        if values[i] < boxes[i].hi {
            values[i] += 1;
            return true;
        }
        values[i] = boxes[i].lo;
    }
    false
}

/// A fact `x mod c == r` taken from a constraint, with `x` free of constants.
#[derive(Debug, Clone)]
struct ModFact {
    x: IndexExpr,
    modulus: i64,
    remainder: i64,
}

impl ModFact {
    fn from_constraint(c: &Constraint) -> Option<ModFact> {
        if c.range.lo != c.range.hi || c.expr.constant_part() != 0 {
            return None;
        }
        match c.expr.terms() {
            [term] if term.coeff == 1 => match &term.atom {
                Atom::Mod(x, m) if x.constant_part() == 0 => {
                    Some(ModFact { x: (**x).clone(), modulus: *m, remainder: c.range.lo })
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Simplifies under the ranges, then with the modulus facts, then again if the facts changed
/// anything.
fn simplify_expr(e: &IndexExpr, env: &RangeEnv, facts: &[ModFact]) -> Result<IndexExpr, IndexingError> {
    let simple = e.simplify(env)?;
    if facts.is_empty() {
        return Ok(simple);
    }
    let rewritten = apply_facts(&simple, facts)?;
    if rewritten == simple { Ok(simple) } else { Ok(rewritten.simplify(env)?) }
}

fn apply_facts(e: &IndexExpr, facts: &[ModFact]) -> Result<IndexExpr, ExprError> {
    let mut acc = IndexExpr::constant(e.constant_part());
    for term in e.terms() {
        let replaced = match &term.atom {
            Atom::Var(v) => IndexExpr::var(*v),
            Atom::FloorDiv(x, c) => {
                let x = apply_facts(x, facts)?;
                match Known::find(&x, *c, facts) {
                    // (base + k) floordiv c -> base floordiv c + floor((r + k) / c)
                    Some(known) if known.k != 0 => {
                        known.base.floordiv(*c)?.add_constant(known.r_plus_k()?.div_euclid(*c))?
                    }
                    _ => x.floordiv(*c)?,
                }
            }
            Atom::CeilDiv(x, c) => {
                let x = apply_facts(x, facts)?;
                match Known::find(&x, *c, facts) {
                    // (base + k) ceildiv c -> base floordiv c + ceil((r + k) / c)
                    Some(known) => {
                        let up = IndexExpr::constant(known.r_plus_k()?).ceildiv(*c)?.constant_part();
                        known.base.floordiv(*c)?.add_constant(up)?
                    }
                    None => x.ceildiv(*c)?,
                }
            }
            Atom::Mod(x, c) => {
                let x = apply_facts(x, facts)?;
                match Known::find(&x, *c, facts) {
                    // (base + k) mod c -> (r + k) mod c
                    Some(known) => IndexExpr::constant(known.r_plus_k()?.rem_euclid(*c)),
                    None => x.modulo(*c)?,
                }
            }
        };
        acc = acc.add(&replaced.mul(term.coeff)?)?;
    }
    Ok(acc)
}

/// `x = base + k` where a fact gives `base mod c == r` (from a fact modulo a multiple of `c`).
struct Known {
    base: IndexExpr,
    r: i64,
    k: i64,
}

impl Known {
    fn find(x: &IndexExpr, c: i64, facts: &[ModFact]) -> Option<Known> {
        let k = x.constant_part();
        let base = x.add_constant(-k).ok()?;
        let fact = facts.iter().find(|f| f.x == base && f.modulus % c == 0)?;
        Some(Known { base, r: fact.remainder.rem_euclid(c), k })
    }

    fn r_plus_k(&self) -> Result<i64, ExprError> {
        self.r.checked_add(self.k).ok_or(ExprError::Overflow("a sum"))
    }
}

/// Replaces one-point symbols by their value, removes unused symbols, and renumbers the rest in
/// order of first appearance.
fn canonical_symbols(map: &IndexingMap) -> Result<IndexingMap, IndexingError> {
    let mut order: Vec<u32> = Vec::new();
    let exprs = map.results.iter().chain(map.constraints.iter().map(|c| &c.expr));
    for e in exprs {
        first_appearance(e, &mut order);
    }
    let is_point = |j: u32| map.symbol_ranges.get(j as usize).is_some_and(|r| r.lo == r.hi);
    order.retain(|&j| !is_point(j));
    let unchanged =
        order.len() == map.num_symbols() && order.iter().enumerate().all(|(i, &j)| i == j as usize);
    if unchanged {
        return Ok(map.clone());
    }
    let mut rename = |var: Var| -> Result<Option<IndexExpr>, ExprError> {
        let Var::Symbol(j) = var else { return Ok(None) };
        if is_point(j) {
            return Ok(Some(IndexExpr::constant(map.symbol_ranges[j as usize].lo)));
        }
        let new = order.iter().position(|&o| o == j).map(var_index).unwrap_or(j);
        Ok(Some(IndexExpr::symbol(new)))
    };
    let results = map.results.iter().map(|r| r.substitute(&mut rename)).collect::<Result<Vec<_>, _>>()?;
    let constraints = map
        .constraints
        .iter()
        .map(|c| Ok(Constraint::new(c.expr.substitute(&mut rename)?, c.range)))
        .collect::<Result<Vec<_>, ExprError>>()?;
    let symbol_ranges = order.iter().map(|&j| map.symbol_ranges[j as usize]).collect();
    Ok(IndexingMap { dim_ranges: map.dim_ranges.clone(), symbol_ranges, results, constraints })
}

fn first_appearance(e: &IndexExpr, order: &mut Vec<u32>) {
    for term in e.terms() {
        match &term.atom {
            Atom::Var(Var::Symbol(j)) => {
                if !order.contains(j) {
                    order.push(*j);
                }
            }
            Atom::Var(Var::Dim(_)) => {}
            Atom::FloorDiv(x, _) | Atom::CeilDiv(x, _) | Atom::Mod(x, _) => first_appearance(x, order),
        }
    }
}
