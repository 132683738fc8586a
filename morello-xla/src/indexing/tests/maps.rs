//! Tests of the map algebra: text form, evaluation, enumeration limits, composition errors, and
//! properties on random maps (round trip, simplification preserves the relation and is
//! idempotent, composition is relational composition).

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::indexing::{Constraint, EnumerationLimits, IndexingError, IndexingMap, compose};
use morello_core::expr::{IndexExpr, Interval};

fn map(text: &str) -> IndexingMap {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn prints_both_forms() {
    let m = map(
        "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 29], (d0 - 1) mod 2 in [0, 0]",
    );
    assert_eq!(
        m.to_string(),
        "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 9], d1 in [0, 19], s0 in [0, 29], (d0 - 1) mod 2 in [0, 0]"
    );
    assert_eq!(
        format!("{m:#}"),
        "(d0, d1)[s0] -> (d0, s0)\ndomain:\nd0 in [0, 9]\nd1 in [0, 19]\ns0 in [0, 29]\n(d0 - 1) mod 2 in [0, 0]"
    );
    assert_eq!(
        m.simplify().unwrap().to_string(),
        "(d0, d1)[s0] -> (d0, s0), domain: d0 in [1, 9], d1 in [0, 19], s0 in [0, 29], d0 mod 2 in [1, 1]"
    );
    assert_eq!(map("() -> ()").to_string(), "() -> ()");
    assert_eq!(
        map("()[s0] -> (s0), domain: s0 in [-3, 3]").to_string(),
        "()[s0] -> (s0), domain: s0 in [-3, 3]"
    );
    // Commas between domain entries are optional, as is the one before `domain`.
    assert_eq!(
        map("(d0) -> (d0) domain: d0 in [0, 1] d0 mod 2 in [0, 0]"),
        map("(d0) -> (d0), domain: d0 in [0, 1], d0 mod 2 in [0, 0]")
    );
}

#[test]
fn parse_errors_say_what_and_where() {
    let cases = [
        ("(d1) -> (d1), domain: d1 in [0, 1]", "expected `d0`, found `d1` at column 2"),
        ("(d0) -> (d0)", "the domain lacks the range of d0 (`d0 in [lo, hi]`) at column 13"),
        ("(d0) -> (d1), domain: d0 in [0, 1]", "d1 is not declared in the map's header at column 9"),
        (
            "(d0)[s0] -> (d0), domain: s0 in [0, 1], d0 in [0, 1]",
            "expected the range of d0 here (`d0 in [lo, hi]`) at column 27",
        ),
        (
            "(d0) -> (d0), domain: d0 in [0, 1], s0 in [0, 0]",
            "s0 is not declared in the map's header at column 37",
        ),
        ("(d0) -> (d0), domain: d0 [0, 1]", "expected `in`, found `[` at column 26"),
        ("(d0) -> (d0), domain: d0 in [0 1]", "expected `,`, found `1` at column 32"),
        ("(d0) (d0)", "expected `->`, found `(` at column 6"),
        ("(d0) -> (d0) extra", "expected `domain:` or the end of the map, found `extra` at column 14"),
    ];
    for (text, message) in cases {
        let err = text.parse::<IndexingMap>().unwrap_err();
        assert_eq!(err.to_string(), message, "parsing {text}");
    }
}

#[test]
fn new_checks_variables() {
    let err =
        IndexingMap::new(vec![Interval::new(0, 1)], vec![], vec![IndexExpr::symbol(0)], vec![]).unwrap_err();
    assert_eq!(err.to_string(), "s0 is used but the map has 1 dims and 0 symbols");
}

#[test]
fn evaluates_points() {
    let m = map("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 3], s0 in [0, 1], d0 + s0 in [0, 3]");
    assert_eq!(m.evaluate(&[1], &[1]).unwrap(), Some(vec![3]));
    assert_eq!(m.evaluate(&[3], &[1]).unwrap(), None);
    assert_eq!(m.evaluate(&[4], &[0]).unwrap(), None);
    assert!(matches!(m.evaluate(&[1], &[]), Err(IndexingError::PointArity { .. })));
}

#[test]
fn enumeration_refuses_large_maps() {
    let m = map("(d0, d1) -> (d0), domain: d0 in [0, 999], d1 in [0, 999]");
    let err = m.enumerate(&EnumerationLimits { max_pairs: 10, max_points: 1000 }).unwrap_err();
    assert_eq!(err.to_string(), "the map's domain has 1000000 candidate points, more than the limit of 1000");
    let err = m.enumerate(&EnumerationLimits { max_pairs: 10, max_points: 2_000_000 }).unwrap_err();
    assert_eq!(err.to_string(), "the map relates more than 10 pairs of indices");
    let wide =
        map("(d0, d1) -> (d0), domain: d0 in [-9223372036854775808, 9223372036854775807], d1 in [0, 9]");
    assert!(matches!(
        wide.enumerate(&EnumerationLimits::default()),
        Err(IndexingError::TooManyPoints { .. })
    ));
}

#[test]
fn composition_checks_arity() {
    let a = map("(d0) -> (d0, d0), domain: d0 in [0, 3]");
    let b = map("(d0) -> (d0), domain: d0 in [0, 3]");
    assert_eq!(
        compose(&a, &b).unwrap_err().to_string(),
        "cannot compose: the first map has 2 results but the second has 1 dims"
    );
}

#[test]
fn composition_keeps_both_symbols() {
    // reduce [4, 8] -> [4] (dim 1), after a broadcast [4] -> [4, 8] (new dim 1), input to output.
    let to_output = map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]");
    let reduce_input = map("(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 7]");
    assert_eq!(
        compose(&to_output, &reduce_input).unwrap().to_string(),
        "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]"
    );
}

#[test]
fn one_point_and_unused_symbols_disappear() {
    let m = map(
        "(d0)[s0, s1, s2] -> (d0 + s2, s0), domain: d0 in [0, 3], s0 in [2, 2], s1 in [0, 5], s2 in [0, 1]",
    );
    assert_eq!(
        m.simplify().unwrap().to_string(),
        "(d0)[s0] -> (d0 + s0, 2), domain: d0 in [0, 3], s0 in [0, 1]"
    );
}

#[test]
fn an_unused_symbol_with_an_empty_range_empties_the_map() {
    let m = map("(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [1, 0]");
    assert!(m.is_known_empty());
    assert_eq!(m.enumerate(&EnumerationLimits::default()).unwrap(), vec![]);
    assert_eq!(
        m.simplify().unwrap().to_string(),
        "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [1, 0], 1 in [0, 0]"
    );
}

#[test]
fn unsatisfiable_constant_constraint() {
    let m = IndexingMap::new(
        vec![Interval::new(0, 3)],
        vec![],
        vec![IndexExpr::dim(0)],
        vec![Constraint::unsatisfiable()],
    )
    .unwrap();
    assert!(m.is_known_empty());
    assert_eq!(m.to_string(), "(d0) -> (d0), domain: d0 in [0, 3], 1 in [0, 0]");
}

#[test]
fn huge_bounds_do_not_overflow() {
    let m = map(
        "(d0) -> (d0 floordiv 3), domain: d0 in [-9223372036854775808, 9223372036854775807], 5d0 in [-9223372036854775808, 9223372036854775807]",
    );
    // `5 d0` fits in 64 bits exactly for `|d0| <= floor((2^63 - 1) / 5)`: the constraint becomes
    // that range, computed without overflow.
    assert_eq!(
        m.simplify().expect("no overflow").to_string(),
        "(d0) -> (d0 floordiv 3), domain: d0 in [-1844674407370955161, 1844674407370955161]"
    );
    let m = map(
        "(d0) -> (d0), domain: d0 in [0, 9223372036854775807], d0 floordiv 2 in [0, 9223372036854775807]",
    );
    // `d0 floordiv 2` is at most 2^62 - 1 there, so the constraint always holds and goes.
    assert_eq!(
        m.simplify().expect("no overflow").to_string(),
        "(d0) -> (d0), domain: d0 in [0, 9223372036854775807]"
    );
}

// ---------------------------------------------------------------------------------------------
// Properties.

fn expr_over(dims: u32, symbols: u32) -> impl Strategy<Value = IndexExpr> {
    let mut leaves: Vec<BoxedStrategy<IndexExpr>> = vec![(-4i64..5).prop_map(IndexExpr::constant).boxed()];
    if dims > 0 {
        leaves.push((0..dims).prop_map(IndexExpr::dim).boxed());
    }
    if symbols > 0 {
        leaves.push((0..symbols).prop_map(IndexExpr::symbol).boxed());
    }
    let leaf = proptest::strategy::Union::new(leaves);
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.add(&b).unwrap()),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.sub(&b).unwrap()),
            (inner.clone(), -3i64..4).prop_map(|(a, c)| a.mul(c).unwrap()),
            (inner.clone(), 1i64..6).prop_map(|(a, c)| a.floordiv(c).unwrap()),
            (inner.clone(), 1i64..6).prop_map(|(a, c)| a.ceildiv(c).unwrap()),
            (inner, 1i64..6).prop_map(|(a, c)| a.modulo(c).unwrap()),
        ]
    })
}

fn interval() -> impl Strategy<Value = Interval> {
    (-3i64..6, 0i64..5).prop_map(|(lo, w)| Interval::new(lo, lo + w))
}

fn constraint_range() -> impl Strategy<Value = Interval> {
    (-6i64..10, -1i64..8).prop_map(|(lo, w)| Interval::new(lo, lo + w))
}

/// A random map with `results` results.
fn map_strategy(results: usize) -> impl Strategy<Value = IndexingMap> {
    (1u32..4, 0u32..3).prop_flat_map(move |(n, m)| {
        (
            proptest::collection::vec(interval(), n as usize),
            proptest::collection::vec(interval(), m as usize),
            proptest::collection::vec(expr_over(n, m), results),
            proptest::collection::vec((expr_over(n, m), constraint_range()), 0..3),
        )
            .prop_map(|(dims, symbols, results, constraints)| {
                let constraints = constraints.into_iter().map(|(e, r)| Constraint::new(e, r)).collect();
                IndexingMap::new(dims, symbols, results, constraints).unwrap()
            })
    })
}

fn pairs(m: &IndexingMap) -> BTreeSet<(Vec<i64>, Vec<i64>)> {
    m.enumerate(&EnumerationLimits::default()).unwrap().into_iter().map(|p| (p.source, p.target)).collect()
}

/// A map whose dims cover the values `first`'s results take (at most 8 wide each).
fn second_for(first: &IndexingMap) -> impl Strategy<Value = IndexingMap> + use<> {
    let env = first.range_env();
    let dims: Vec<Interval> = first
        .results()
        .iter()
        .map(|r| {
            let range = r.range(&env).unwrap();
            Interval::new(range.lo.max(-8), range.hi.min(range.lo.max(-8) + 7))
        })
        .collect();
    let n = dims.len() as u32;
    (0u32..2).prop_flat_map(move |m| {
        let dims = dims.clone();
        (
            proptest::collection::vec(interval(), m as usize),
            proptest::collection::vec(expr_over(n, m), 1..3),
            proptest::collection::vec((expr_over(n, m), constraint_range()), 0..2),
        )
            .prop_map(move |(symbols, results, constraints)| {
                let constraints = constraints.into_iter().map(|(e, r)| Constraint::new(e, r)).collect();
                IndexingMap::new(dims.clone(), symbols, results, constraints).unwrap()
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn text_round_trips(m in (1usize..3).prop_flat_map(map_strategy)) {
        let parsed: IndexingMap = m.to_string().parse().unwrap();
        prop_assert_eq!(&parsed, &m);
        let parsed: IndexingMap = format!("{m:#}").parse().unwrap();
        prop_assert_eq!(parsed, m);
    }

    #[test]
    fn simplify_preserves_the_relation(m in (0usize..3).prop_flat_map(map_strategy)) {
        let simple = m.simplify().unwrap();
        prop_assert_eq!(pairs(&simple), pairs(&m), "{} became {}", m, simple);
        if simple.is_known_empty() {
            prop_assert!(pairs(&m).is_empty());
        }
    }

    #[test]
    fn simplify_is_idempotent(m in (0usize..3).prop_flat_map(map_strategy)) {
        let once = m.simplify().unwrap();
        let twice = once.simplify().unwrap();
        prop_assert_eq!(&twice, &once, "from {}", m);
        let parsed: IndexingMap = once.to_string().parse().unwrap();
        prop_assert_eq!(parsed, once);
    }

    #[test]
    fn compose_is_relational_composition(
        (first, second) in (1usize..3).prop_flat_map(map_strategy).prop_flat_map(|a| {
            let b = second_for(&a);
            (Just(a), b)
        })
    ) {
        let composed = compose(&first, &second).unwrap();
        let a = pairs(&first);
        let b = pairs(&second);
        let mut expected = BTreeSet::new();
        for (x, y) in &a {
            for (y2, z) in b.range((y.clone(), vec![])..) {
                if y2 != y {
                    break;
                }
                expected.insert((x.clone(), z.clone()));
            }
        }
        prop_assert_eq!(pairs(&composed), expected, "{} then {} gave {}", first, second, composed);
    }

    #[test]
    fn parser_reads_back_or_locates_the_error(text in "[ds0-9()\\[\\]+*,:\\- ]{0,40}|\\(d0\\)(\\[s0\\])? -> \\([ds0-9+* ]{0,8}\\),? domain: [ds0-9inmod\\[\\], \\-]{0,40}") {
        match text.parse::<IndexingMap>() {
            // What is read prints in a form that reads back to the same map.
            Ok(m) => prop_assert_eq!(m.to_string().parse::<IndexingMap>().ok(), Some(m)),
            // An error points inside the text (or just past its end).
            Err(e) => prop_assert!(e.offset <= text.len(), "{} at offset {} of {:?}", e, e.offset, text),
        }
    }
}
