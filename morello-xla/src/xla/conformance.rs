//! Conformance with XLA's own tests: every shape string collected in
//! `fixtures/xla-tests/shapes.txt` (from `shape_test`, `shape_util_test`, `layout_util_test`,
//! `layout_test`, `hlo_parser_test`, `index_util_test`, each case naming its test), read by
//! morello and compared with XLA's answer: accepted or rejected, the printed form, byte size,
//! element count, dimension sizes, linear indices both ways.
//!
//! Fixture format: a case starts with `== NAME`; then `shape: TEXT`, `accept` or `reject`, and
//! any number of checks (`print:`, `bytes:`, `elements:`, `dim: K -> N`, `index: I,J -> L`,
//! `linear: L -> I,J`, `roundtrip: L`). `#` starts a comment line.
//!
//! A case *agrees* when morello does what XLA does and every check holds, is *refused* when
//! XLA accepts the text and morello does not, and is *wrong* otherwise (morello accepts what XLA
//! rejects, or answers a check differently). No case may be wrong; every refusal must be one of
//! [`KNOWN_REFUSALS`], each with the reason `docs/xla.md` gives.

use std::path::PathBuf;

use super::{BufferPosition, XlaShape};

/// Cases morello refuses on purpose, by name prefix, with the reason (also in `docs/xla.md`).
const KNOWN_REFUSALS: &[(&str, &str)] = &[];

#[derive(Debug)]
enum Check {
    Print(String),
    Bytes(u64),
    Elements(u64),
    Dim(i64, u64),
    Index(Vec<u64>, u64),
    Linear(u64, Vec<u64>),
    Roundtrip(u64),
}

#[derive(Debug)]
struct Case {
    name: String,
    shape: String,
    accept: bool,
    checks: Vec<Check>,
}

enum Outcome {
    Agrees,
    Refused(String),
    Wrong(String),
}

fn numbers(text: &str) -> Vec<u64> {
    text.split(',').map(|n| n.trim().parse().unwrap_or_else(|e| panic!("`{text}`: {e}"))).collect()
}

fn arrow(text: &str) -> (&str, &str) {
    text.split_once("->").map(|(a, b)| (a.trim(), b.trim())).unwrap_or_else(|| panic!("no `->` in `{text}`"))
}

fn cases() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/xla-tests/shapes.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cases: Vec<Case> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("== ") {
            cases.push(Case {
                name: name.to_string(),
                shape: String::new(),
                accept: true,
                checks: Vec::new(),
            });
            continue;
        }
        let case = cases.last_mut().unwrap_or_else(|| panic!("`{line}` before the first case"));
        let (key, value) = line.split_once(':').map(|(k, v)| (k, v.trim())).unwrap_or((line, ""));
        match key {
            "shape" => case.shape = value.to_string(),
            "accept" => case.accept = true,
            "reject" => case.accept = false,
            "print" => case.checks.push(Check::Print(value.to_string())),
            "bytes" => case.checks.push(Check::Bytes(numbers(value)[0])),
            "elements" => case.checks.push(Check::Elements(numbers(value)[0])),
            "dim" => {
                let (k, n) = arrow(value);
                case.checks.push(Check::Dim(k.parse().expect("a dimension number"), numbers(n)[0]));
            }
            "index" => {
                let (index, linear) = arrow(value);
                case.checks.push(Check::Index(numbers(index), numbers(linear)[0]));
            }
            "linear" => {
                let (linear, index) = arrow(value);
                case.checks.push(Check::Linear(numbers(linear)[0], numbers(index)));
            }
            "roundtrip" => case.checks.push(Check::Roundtrip(numbers(value)[0])),
            other => panic!("case `{}`: unknown key `{other}`", case.name),
        }
    }
    cases
}

fn run(case: &Case) -> Outcome {
    let shape = match case.shape.parse::<XlaShape>() {
        Ok(shape) if !case.accept => return Outcome::Wrong(format!("accepted as `{shape}`; XLA rejects it")),
        Ok(shape) => shape,
        Err(_) if !case.accept => return Outcome::Agrees,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    for check in &case.checks {
        if let Err(problem) = run_check(&shape, check) {
            return Outcome::Wrong(problem);
        }
    }
    Outcome::Agrees
}

fn run_check(shape: &XlaShape, check: &Check) -> Result<(), String> {
    if let Check::Print(expected) = check {
        let printed = shape.to_string();
        return if &printed == expected {
            Ok(())
        } else {
            Err(format!("prints `{printed}`, XLA `{expected}`"))
        };
    }
    let array = shape.as_array().ok_or_else(|| format!("{check:?} needs an array, not `{shape}`"))?;
    let fail = |got: String| Err(format!("{check:?}: morello says {got}"));
    match check {
        Check::Print(_) => Ok(()),
        Check::Bytes(bytes) if array.buffer_bytes() == *bytes => Ok(()),
        Check::Bytes(_) => fail(array.buffer_bytes().to_string()),
        Check::Elements(n) if array.element_count() == *n => Ok(()),
        Check::Elements(_) => fail(array.element_count().to_string()),
        Check::Dim(k, n) => match array.dimension_size(*k) {
            Ok(size) if size == *n => Ok(()),
            other => fail(format!("{other:?}")),
        },
        Check::Index(index, linear) => match array.linear_index(index) {
            Ok(l) if l == *linear => Ok(()),
            other => fail(format!("{other:?}")),
        },
        Check::Linear(linear, index) => match array.multi_index(*linear) {
            Ok(BufferPosition::Element(i)) if &i == index => Ok(()),
            other => fail(format!("{other:?}")),
        },
        Check::Roundtrip(linear) => match array.multi_index(*linear) {
            Ok(BufferPosition::Element(index)) => match array.linear_index(&index) {
                Ok(l) if l == *linear => Ok(()),
                other => fail(format!("{index:?} -> {other:?}")),
            },
            other => fail(format!("{other:?}")),
        },
    }
}

#[test]
fn every_shape_from_xla_tests() {
    let cases = cases();
    assert!(cases.len() >= 100, "expected the XLA shape corpus, found {} cases", cases.len());
    let (mut agree, mut refused, mut wrong) = (Vec::new(), Vec::new(), Vec::new());
    for case in &cases {
        assert!(!case.shape.is_empty(), "case `{}` has no shape", case.name);
        match run(case) {
            Outcome::Agrees => agree.push(&case.name),
            Outcome::Refused(why) => refused.push((&case.name, why)),
            Outcome::Wrong(why) => wrong.push((&case.name, why)),
        }
    }
    println!(
        "XLA shape corpus: {} cases, {} agree, {} refused, {} wrong",
        cases.len(),
        agree.len(),
        refused.len(),
        wrong.len()
    );
    for (name, why) in &refused {
        println!("  refused  {name}: {why}");
    }
    for (name, why) in &wrong {
        println!("  WRONG    {name}: {why}");
    }
    assert!(wrong.is_empty(), "{} cases answer differently from XLA", wrong.len());
    for (name, why) in &refused {
        assert!(
            KNOWN_REFUSALS.iter().any(|(known, _)| name.starts_with(known)),
            "`{name}` is refused without a documented reason: {why}"
        );
    }
    for (known, _) in KNOWN_REFUSALS {
        assert!(
            refused.iter().any(|(name, _)| name.starts_with(known)),
            "`{known}` is listed as refused but is accepted now: take it off the list"
        );
    }
}
