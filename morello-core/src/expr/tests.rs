//! Tests of index expressions: the seed's worked examples, the ordinary rules, the text form,
//! and properties (soundness by brute force, idempotence, range containment, round trip).

use proptest::prelude::*;

use super::*;

fn e(text: &str) -> IndexExpr {
    text.parse().unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

fn dims(ranges: &[(i64, i64)]) -> RangeEnv {
    let list: Vec<Interval> = ranges.iter().map(|&(lo, hi)| Interval::new(lo, hi)).collect();
    RangeEnv::from_dims(&list)
}

/// Asserts that `input` simplifies to `expected` (both parsed, compared structurally).
fn check(input: &str, ranges: &[(i64, i64)], expected: &str) {
    let got = e(input).simplify(&dims(ranges)).unwrap();
    assert_eq!(got, e(expected), "{input} simplified to {got}, expected {expected}");
}

#[test]
fn seed_003_example_1() {
    // (d0 + d1 floordiv 16, d1 mod 16) with d0 in [0, 6], d1 in [0, 14] -> (d0, d1)
    let r = [(0, 6), (0, 14)];
    check("d0 + d1 floordiv 16", &r, "d0");
    check("d1 mod 16", &r, "d1");
}

#[test]
fn seed_003_example_2() {
    let r = [(0, 9), (0, 9), (0, 9)];
    check("(100d0 + 10d1 + d2) floordiv 100", &r, "d0");
    check("((100d0 + 10d1 + d2) mod 100) floordiv 10", &r, "d1");
    check("d2 mod 10", &r, "d2");
}

#[test]
fn seed_003_example_3() {
    let r = [(0, 9), (0, 9), (0, 9)];
    check("(16d0 + 4d1 + d2) floordiv 8", &r, "2d0 + (4d1 + d2) floordiv 8");
    check("(16d0 + 4d1 + d2) mod 8", &r, "(4d1 + d2) mod 8");
}

#[test]
fn seed_003_example_4() {
    check("-(-11d0 - d1 + 109) floordiv 11 + 9", &[(0, 9), (0, 10)], "d0");
}

#[test]
fn ordinary_rules() {
    let wide = [(0, 100), (0, 100)];
    // like terms merge and constants fold
    check("d0 + 2d0 - d1 + d1 + 3 - 1", &wide, "3d0 + 2");
    // (a mod 8) mod 2 -> a mod 2
    check("(d0 mod 8) mod 2", &wide, "d0 mod 2");
    // (a mod 2) mod 8 -> a mod 2
    check("(d0 mod 2) mod 8", &wide, "d0 mod 2");
    // x mod c -> x when x in [0, c - 1]
    check("d0 mod 8", &[(0, 7)], "d0");
    // x floordiv c -> 0 when x in [0, c - 1]
    check("d0 floordiv 8", &[(0, 7)], "0");
    // multiples leave a division
    check("(8d0 + 16d1) floordiv 8", &wide, "d0 + 2d1");
    check("(8d0 + d1) floordiv 8", &[(0, 100), (0, 7)], "d0");
    check("(8d0 + d1 + 3) mod 8", &wide, "(d1 + 3) mod 8");
    // nested floordiv
    check("(d0 floordiv 4) floordiv 2", &wide, "d0 floordiv 8");
    // gcd split
    check("(4d0 + d1) floordiv 8", &[(0, 100), (0, 3)], "d0 floordiv 2");
    check("(4d0 + d1) mod 8", &[(0, 100), (0, 3)], "4(d0 mod 2) + d1");
    // division and modulus recombine
    check("4(d0 floordiv 4) + d0 mod 4", &wide, "d0");
    // ceildiv
    check("(8d0 + 3) ceildiv 8", &wide, "d0 + 1");
    check("d0 ceildiv 4", &[(1, 4)], "1");
    // divisor 1
    check("d0 floordiv 1 + d1 mod 1", &wide, "d0");
    // negative ranges shift the block
    check("d0 mod 4", &[(4, 7)], "d0 - 4");
    check("d0 floordiv 4", &[(-4, -1)], "-1");
}

#[test]
fn chained_reshapes_cancel() {
    // [10,10,10] -> [50,20] -> [10,10,10]: linearise, delinearise, linearise again.
    let r = [(0, 9), (0, 9), (0, 9)];
    let lin = "(100d0 + 10d1 + d2)";
    let relin = format!("(20({lin} floordiv 20) + {lin} mod 20)");
    check(&format!("{relin} floordiv 100"), &r, "d0");
    check(&format!("({relin} mod 100) floordiv 10"), &r, "d1");
    check(&format!("{relin} mod 10"), &r, "d2");
}

#[test]
fn display_is_canonical() {
    let cases = [
        ("4d0 + d1 floordiv 8 + s0 mod 3", "d0 * 4 + d1 floordiv 8 + s0 mod 3"),
        ("-d0 + 9", "-d0 + 9"),
        ("2d0 + (4d1 + d2) floordiv 8", "d0 * 2 + (d1 * 4 + d2) floordiv 8"),
        ("3(d0 mod 4) - 2s1 - 7", "-s1 * 2 + (d0 mod 4) * 3 - 7"),
        ("0", "0"),
        ("-5", "-5"),
        ("d0 - d0", "0"),
        ("(d0 + 1) ceildiv 2", "(d0 + 1) ceildiv 2"),
    ];
    for (input, printed) in cases {
        assert_eq!(e(input).to_string(), printed, "printing {input}");
        assert_eq!(e(printed), e(input), "re-parsing {printed}");
    }
}

#[test]
fn parse_errors_say_what_and_where() {
    let cases = [
        ("d0 +", "expected an integer, a variable or `(`, found the end of the text at column 5"),
        ("d0 * d1", "a product needs a constant on one side (index expressions are affine) at column 4"),
        ("d0 floordiv 0", "`floordiv` needs a positive constant, got 0 at column 4"),
        ("d0 mod -2", "`mod` needs a positive constant, got -2 at column 4"),
        ("x0 + 1", "expected a variable such as d0 or s0, found `x0` at column 1"),
        ("(d0 + 1", "expected `)`, found the end of the text at column 8"),
        ("d0 d1", "expected an operator or the end of the expression, found `d1` at column 4"),
        ("99999999999999999999 d0", "a coefficient or constant does not fit in 64 bits at column 1"),
    ];
    for (input, message) in cases {
        let err = input.parse::<IndexExpr>().unwrap_err();
        assert_eq!(err.to_string(), message, "parsing {input}");
    }
}

#[test]
fn extreme_coefficients_round_trip() {
    for text in ["d0 * 9223372036854775807 - 9223372036854775808", "-d0 * 9223372036854775808"] {
        let parsed = e(text);
        assert_eq!(e(&parsed.to_string()), parsed);
    }
}

#[test]
fn overflow_is_reported() {
    let big = IndexExpr::dim(0).mul(i64::MAX).unwrap();
    assert_eq!(big.mul(2), Err(ExprError::Overflow("a product")));
    assert_eq!(big.add(&big), Err(ExprError::Overflow("a sum")));
    let p = Point { dims: &[2], symbols: &[] };
    assert_eq!(big.eval(&p), Err(ExprError::Overflow("a product")));
    let env = dims(&[(0, 2)]);
    assert_eq!(big.range(&env), Err(ExprError::Overflow("a product")));
}

#[test]
fn eval_and_range_report_unbound_variables() {
    let x = e("d0 + s1");
    assert_eq!(x.eval(&Point { dims: &[1], symbols: &[] }), Err(ExprError::UnboundVariable(Var::Symbol(1))));
    assert_eq!(x.range(&dims(&[(0, 1)])), Err(ExprError::UnboundVariable(Var::Symbol(1))));
    // Without a range only range-free rules apply.
    assert_eq!(e("(4d0 + s0) floordiv 4").simplify(&RangeEnv::new()).unwrap(), e("d0 + s0 floordiv 4"));
}

// ---------------------------------------------------------------------------------------------
// Properties.

const DIMS: u32 = 3;

fn leaf() -> impl Strategy<Value = IndexExpr> {
    prop_oneof![
        (0..DIMS).prop_map(IndexExpr::dim),
        Just(IndexExpr::symbol(0)),
        (-20i64..20).prop_map(IndexExpr::constant),
    ]
}

fn expr_strategy() -> impl Strategy<Value = IndexExpr> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.add(&b).unwrap()),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.sub(&b).unwrap()),
            (inner.clone(), -4i64..6).prop_map(|(a, c)| a.mul(c).unwrap()),
            (inner.clone(), 1i64..10).prop_map(|(a, c)| a.floordiv(c).unwrap()),
            (inner.clone(), 1i64..10).prop_map(|(a, c)| a.ceildiv(c).unwrap()),
            (inner, 1i64..10).prop_map(|(a, c)| a.modulo(c).unwrap()),
        ]
    })
}

fn env_strategy() -> impl Strategy<Value = (Vec<Interval>, Interval)> {
    let interval = (-6i64..10, 0i64..6).prop_map(|(lo, width)| Interval::new(lo, lo + width));
    (proptest::collection::vec(interval.clone(), DIMS as usize), interval)
}

fn for_each_point(dims: &[Interval], symbol: Interval, mut f: impl FnMut(&Point<'_>)) {
    let mut values: Vec<i64> = dims.iter().map(|r| r.lo).collect();
    loop {
        for s in symbol.lo..=symbol.hi {
            f(&Point { dims: &values, symbols: &[s] });
        }
        let mut i = 0;
        loop {
            if i == values.len() {
                return;
            }
            if values[i] < dims[i].hi {
                values[i] += 1;
                break;
            }
            values[i] = dims[i].lo;
            i += 1;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn simplify_preserves_values((x, (dim_ranges, symbol)) in (expr_strategy(), env_strategy())) {
        let env = RangeEnv::from_dims_and_symbols(&dim_ranges, &[symbol]);
        let simple = x.simplify(&env).unwrap();
        for_each_point(&dim_ranges, symbol, |p| {
            assert_eq!(x.eval(p), simple.eval(p), "{x} vs {simple} at {:?} {:?}", p.dims, p.symbols);
        });
    }

    #[test]
    fn simplify_is_idempotent((x, (dim_ranges, symbol)) in (expr_strategy(), env_strategy())) {
        let env = RangeEnv::from_dims_and_symbols(&dim_ranges, &[symbol]);
        let once = x.simplify(&env).unwrap();
        let twice = once.simplify(&env).unwrap();
        prop_assert_eq!(&once, &twice);
        prop_assert!(once.size() <= x.size() + 2, "{} grew to {}", x, once);
    }

    #[test]
    fn range_contains_every_value((x, (dim_ranges, symbol)) in (expr_strategy(), env_strategy())) {
        let env = RangeEnv::from_dims_and_symbols(&dim_ranges, &[symbol]);
        let r = x.range(&env).unwrap();
        for_each_point(&dim_ranges, symbol, |p| {
            let v = x.eval(p).unwrap();
            assert!(r.contains(v), "{x}: {v} outside {r}");
        });
    }

    #[test]
    fn text_round_trips(x in expr_strategy()) {
        let printed = x.to_string();
        let parsed: IndexExpr = printed.parse().unwrap();
        prop_assert_eq!(parsed, x);
    }

    #[test]
    fn parser_never_panics(text in "[ds0-9()+*\\- ]{0,24}|[a-z0-9 ()+*\\-]{0,30}") {
        let _ = text.parse::<IndexExpr>();
    }
}
