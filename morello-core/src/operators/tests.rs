//! Tests over the whole operator catalogue: each fails for an operator that lacks a piece (a form
//! not listed, an example that does not parse, semantics that leave an output element unwritten, a
//! tolerance that misses a written operand, an accumulating twin that does not accumulate).

#![allow(clippy::unwrap_used)]

use super::*;
use crate::interp::{Buffer, Interpreter};
use crate::spec::{CanonicalSpec, LogicalSpec};

fn target() -> Target {
    Target::builtin("x86-avx2", 1).unwrap()
}

/// Each operator's example, canonical on `x86-avx2` with its operands in main memory.
fn examples() -> Vec<(Operator, CanonicalSpec)> {
    let target = target();
    let memory = target.levels()[0].name.clone();
    Operator::ALL
        .into_iter()
        .map(|op| {
            let text = op.definition().example(&memory);
            let spec = LogicalSpec::parse(&text, &target)
                .unwrap_or_else(|e| panic!("{op}'s example `{text}` does not parse: {e}"))
                .canonicalize(&target)
                .unwrap_or_else(|e| panic!("{op}'s example `{text}` is not valid: {e}"));
            (op, spec)
        })
        .collect()
}

#[test]
fn kinds_are_declared_in_ordinal_order() {
    // Stored tables know a kind by its variant number: variants are declared in the operators'
    // ordinal order (a derived `Ord` compares variant numbers first).
    for (i, op) in Operator::ALL.into_iter().enumerate() {
        assert_eq!(op as usize, i, "{op}'s ordinal");
    }
    for a in PrimitiveKind::ALL {
        for b in PrimitiveKind::ALL {
            if a.operator() != b.operator() {
                assert_eq!(a.cmp(&b), a.operator().cmp(&b.operator()), "{a} and {b}");
            }
        }
    }
}

#[test]
fn every_form_is_listed_once_with_a_name_of_its_own() {
    let mut forms: Vec<PrimitiveKind> = Vec::new();
    for op in Operator::ALL {
        let definition = op.definition();
        assert!(!definition.forms().is_empty(), "{op} lists no form");
        for &(kind, name) in definition.forms() {
            assert_eq!(kind.operator(), op, "{op} lists {name}, a form of another operator");
            assert_eq!(kind.name(), name);
            assert_eq!(kind.family(), kind, "{name} is a form: its own family");
            forms.push(kind);
        }
    }
    let mut all = PrimitiveKind::ALL.to_vec();
    assert_eq!(forms.len(), all.len(), "PrimitiveKind::ALL lists every form of every operator once");
    forms.sort();
    all.sort();
    assert_eq!(forms, all, "PrimitiveKind::ALL lists every form of every operator");
    let mut names: Vec<&str> = all.iter().map(|k| k.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "names are unique");
}

#[test]
fn every_operator_has_a_summary_and_a_description() {
    for op in Operator::ALL {
        assert!(!op.summary().is_empty() && !op.summary().contains('\n'), "{op}");
        assert!(op.summary().ends_with('.') || op.summary().ends_with(')'), "{op}: {}", op.summary());
        for &(kind, _) in op.definition().forms() {
            assert!(!kind.description().is_empty(), "{kind}");
        }
    }
}

#[test]
fn every_example_prints_and_parses_back() {
    let target = target();
    for (op, spec) in examples() {
        let first = op.definition().forms()[0].0;
        assert_eq!(spec.kind, first, "{op}'s example is of its first form");
        let text = spec.display(&target).to_string();
        let again = LogicalSpec::parse(&text, &target).unwrap().canonicalize(&target).unwrap();
        assert_eq!(again, spec, "{text}");
    }
}

#[test]
fn every_operator_describes_all_its_operands_and_dims() {
    for (op, spec) in examples() {
        let kind = spec.kind;
        let rank = spec.shape.rank();
        let count = kind.operand_count();
        assert_eq!(kind.directions().len(), count, "{op}");
        assert_eq!(kind.operand_names().len(), count, "{op}");
        let dims = kind.operand_dims(rank);
        assert_eq!(dims.len(), count, "{op}: operand dims of every operand");
        for dim in dims.iter().flatten() {
            assert!(dim.first < rank && dim.second.is_none_or(|s| s < rank), "{op}: {dim:?}");
        }
        assert!(kind.reduction_dims().iter().all(|&d| d < rank), "{op}");
        assert_eq!(kind.dim_names(rank).len(), rank, "{op}");
        assert!(kind.required_rank().is_none_or(|r| r == rank), "{op}");
        assert!(kind.directions().last().is_some_and(|d| d.writes()), "{op}: the output is last");
        let dtypes: Vec<Dtype> = spec.operands.iter().map(|o| o.dtype).collect();
        assert_eq!(kind.check_dtypes(&dtypes), Ok(()), "{op}");
    }
}

#[test]
fn accumulating_twins_accumulate_into_the_same_operands() {
    for kind in PrimitiveKind::ALL {
        if let Some(twin) = kind.as_accum() {
            assert!(!kind.accumulates() && twin.accumulates(), "{kind} -> {twin}");
            assert_eq!(twin.operator(), kind.operator(), "{kind} -> {twin}");
            assert_eq!(twin.operand_count(), kind.operand_count(), "{kind} -> {twin}");
            assert_eq!(twin.as_accum(), None, "{twin}");
        }
        if kind.accumulates() {
            assert!(kind.directions().last() == Some(&Direction::InOut), "{kind} reads its output");
        }
    }
}

/// Runs a spec's semantics on seeded inputs with every written element NaN first.
fn run(spec: &LogicalSpec, target: &Target) -> Vec<Buffer> {
    let mut buffers: Vec<Buffer> = spec
        .operands
        .iter()
        .zip(spec.kind.directions())
        .enumerate()
        .map(|(i, (o, direction))| {
            let values = (0..o.shape.volume())
                .map(|j| match direction {
                    Direction::Out => Value::Float(f32::NAN),
                    _ => Value::Float(((i as u64 * 7 + j * 3) % 11) as f32 / 4.0 - 1.0),
                })
                .collect();
            Buffer { dtype: o.dtype, values }
        })
        .collect();
    Interpreter::new(target).execute_spec(spec, &mut buffers).unwrap();
    buffers
}

#[test]
fn every_operator_writes_every_element_of_its_outputs() {
    let target = target();
    for (op, spec) in examples() {
        let buffers = run(&spec, &target);
        for (i, direction) in spec.kind.directions().into_iter().enumerate() {
            if direction.writes() {
                let unwritten =
                    buffers[i].values.iter().filter(|v| matches!(v, Value::Float(x) if x.is_nan()));
                assert_eq!(unwritten.count(), 0, "{op} leaves elements of operand {i} unwritten");
            }
        }
    }
}

/// The example's buffers as operands (its inputs seeded as in [`run`]).
struct Initial<'a> {
    spec: &'a LogicalSpec,
    buffers: Vec<Buffer>,
}

impl Operands for Initial<'_> {
    fn spec(&self) -> &LogicalSpec {
        self.spec
    }

    fn read(&self, operand: usize, point: &[u32]) -> Value {
        let tensor = &self.spec.operands[operand];
        let offset = tensor.layout.indexer(&tensor.shape).unwrap().offset(point);
        self.buffers[operand].values[offset as usize]
    }
}

#[test]
fn every_tolerance_bounds_each_written_operand() {
    let target = target();
    for (op, spec) in examples() {
        match spec.kind.tolerance() {
            Tolerance::Relative(bounds) => {
                let initial = Initial { spec: &spec, buffers: run(&spec, &target) };
                let bounds = bounds(spec.kind, &spec.shape, &initial);
                assert_eq!(bounds.len(), spec.operands.len(), "{op}");
                for (i, (bound, direction)) in bounds.iter().zip(spec.kind.directions()).enumerate() {
                    assert_eq!(bound.is_some(), direction.writes(), "{op}: operand {i}");
                    if let Some(rows) = bound {
                        assert_eq!(rows.len() as u32, spec.shape.dim(0), "{op}: a bound per row");
                        assert!(rows.iter().all(|b| b.is_finite() && *b >= 0.0), "{op}: {rows:?}");
                    }
                }
            }
            Tolerance::Epilogue { activation, argument } => {
                assert_eq!(spec.kind.activation(), Some(activation), "{op}");
                assert_eq!(argument.activation(), Some(Activation::Identity), "{op}");
                assert_eq!(argument.operator(), op, "{op}");
            }
            Tolerance::Sum => assert!(!spec.kind.reduction_dims().is_empty(), "{op} sums nothing"),
            Tolerance::Exact => {}
        }
    }
}

#[test]
fn a_convolution_keeps_its_geometry_through_its_name() {
    let g = ConvGeometry { stride: [2, 1], dilation: [1, 2], padding: [0, 1, 0, 1] };
    let kind = PrimitiveKind::Conv { accum: true, geometry: g };
    assert_eq!(kind.to_string(), "ConvAccum:s2x1:d1x2:p0x1x0x1");
    assert_eq!(kind.family(), PrimitiveKind::Conv { accum: true, geometry: ConvGeometry::UNIT });
    let parsed = kind.family().with_attributes(":s2x1:d1x2:p0x1x0x1").unwrap().unwrap();
    assert_eq!(parsed, kind);
    assert_eq!(PrimitiveKind::Move.with_attributes(""), None, "a move takes no attributes");
}
