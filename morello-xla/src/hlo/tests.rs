//! Tests of the HLO model: every validation error names the computation and the instruction.

use super::*;

/// A module with one computation holding a parameter `p0` of `dims` and then `op` on it.
fn one_op(dims: &[i64], result: HloShape, op: HloOp) -> Result<HloModule, HloError> {
    let mut f = ComputationBuilder::new("f");
    let p0 = f.add("p0", HloShape::array(dims), HloOp::Parameter { number: 0 }, &[]);
    let x = f.add("x", result, op, &[p0]);
    HloModule::new("m", vec![f.finish(x)], ComputationId(0))
}

fn message(result: Result<HloModule, HloError>) -> String {
    result.map(|_| String::new()).unwrap_or_else(|e| e.to_string())
}

#[test]
fn accepts_a_valid_module() {
    let m = one_op(&[2, 3], HloShape::array(&[3, 2]), HloOp::Transpose { dimensions: vec![1, 0] }).unwrap();
    assert_eq!(m.name(), "m");
    assert_eq!(m.entry().instruction_by_name("x"), Some(InstrId(1)));
    assert_eq!(m.computation_by_name("f"), Some(ComputationId(0)));
    assert_eq!(m.entry().parameters(), vec![InstrId(0)]);
}

#[test]
fn the_issues_bad_inputs() {
    assert_eq!(
        message(one_op(&[2, 3], HloShape::array(&[3, 2]), HloOp::Transpose { dimensions: vec![1, 1] })),
        "instruction `x` in computation `f`: dimensions={1, 1} is not a permutation of 0..2"
    );
    let slice = vec![SliceDim { start: 0, limit: 2, stride: 1 }, SliceDim { start: 1, limit: 4, stride: 1 }];
    assert_eq!(
        message(one_op(&[2, 3], HloShape::array(&[2, 3]), HloOp::Slice { dims: slice })),
        "instruction `x` in computation `f`: slice [1:4] of dimension 1 is outside [0, 3]"
    );
    let mut f = ComputationBuilder::new("f");
    let a = f.add("a", HloShape::array(&[2, 3]), HloOp::Parameter { number: 0 }, &[]);
    let b = f.add("b", HloShape::array(&[4, 5]), HloOp::Parameter { number: 1 }, &[]);
    let dims = DotDimensions { lhs_contracting: vec![1], rhs_contracting: vec![0], ..Default::default() };
    let dot = f.add("dot", HloShape::array(&[2, 5]), HloOp::Dot(dims), &[a, b]);
    assert_eq!(
        message(HloModule::new("m", vec![f.finish(dot)], ComputationId(0))),
        "instruction `dot` in computation `f`: contracting dimension 1 of the lhs has size 3 but contracting \
         dimension 0 of the rhs has size 4"
    );
    let mut f = ComputationBuilder::new("f");
    let neg = f.add("neg", HloShape::array(&[2]), HloOp::Elementwise(ElementwiseOp::Negate), &[InstrId(1)]);
    f.add("p0", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    assert_eq!(
        message(HloModule::new("m", vec![f.finish(neg)], ComputationId(0))),
        "instruction `neg` in computation `f`: operand 0 refers to instruction 1, which is not defined before this one"
    );
}

#[test]
fn shape_errors() {
    let cases: Vec<(Vec<i64>, HloShape, HloOp, &str)> = vec![
        (
            vec![2],
            HloShape::array(&[3]),
            HloOp::Elementwise(ElementwiseOp::Negate),
            "operand 0 (`p0`) should have shape [3], but has [2]",
        ),
        (
            vec![2],
            HloShape::array(&[2]),
            HloOp::Elementwise(ElementwiseOp::Add),
            "`add` takes 2 operands, found 1",
        ),
        (
            vec![2],
            HloShape::array(&[2, 3]),
            HloOp::Broadcast { dimensions: vec![1] },
            "operand 0 (`p0`) should have shape [3], but has [2]",
        ),
        (
            vec![2],
            HloShape::array(&[2, 3]),
            HloOp::Broadcast { dimensions: vec![2] },
            "`dimensions` names dimension 2, but the rank is 2",
        ),
        (
            vec![2],
            HloShape::array(&[2, 3]),
            HloOp::Broadcast { dimensions: vec![] },
            "`dimensions` has 0 entries, expected 1",
        ),
        (
            vec![2, 3],
            HloShape::array(&[2, 3]),
            HloOp::Reverse { dimensions: vec![0, 0] },
            "`dimensions` names dimension 0 twice",
        ),
        (
            vec![2, 3],
            HloShape::array(&[7]),
            HloOp::Reshape,
            "the operand has 6 elements but the result has 7",
        ),
        (
            vec![4],
            HloShape::array(&[2]),
            HloOp::Slice { dims: vec![SliceDim { start: 0, limit: 4, stride: 0 }] },
            "stride of dimension 0 is 0, but must be at least 1",
        ),
        (
            vec![5],
            HloShape::array(&[2]),
            HloOp::Slice { dims: vec![SliceDim { start: 0, limit: 5, stride: 2 }] },
            "the result should have shape [3], but has [2]",
        ),
        (
            vec![2],
            HloShape::array(&[2]),
            HloOp::GetTupleElement { index: 0 },
            "operand 0 (`p0`) must be a tuple",
        ),
        (vec![2], HloShape::array(&[2]), HloOp::Tuple, "the result must be a tuple"),
        (vec![2], HloShape::array(&[2]), HloOp::Iota { dimension: 0 }, "`iota` takes 0 operands, found 1"),
        (vec![2], HloShape::array(&[-1]), HloOp::Reshape, "the result has a negative dimension size -1"),
        (
            vec![2, 3],
            HloShape::Array(ArrayShape::with_layout(&[6], &[1])),
            HloOp::Bitcast,
            "the result has layout {1}, which is not a permutation of its 1 dimensions",
        ),
        (
            vec![2],
            HloShape::array(&[2]),
            HloOp::Reduce { dimensions: vec![], to_apply: ComputationId(0) },
            "calls `f`, which leads back to this computation (calls must not recurse)",
        ),
    ];
    for (dims, result, op, expected) in cases {
        let what = format!("{op:?}");
        assert_eq!(
            message(one_op(&dims, result, op)),
            format!("instruction `x` in computation `f`: {expected}"),
            "{what}"
        );
    }
}

#[test]
fn structure_errors() {
    let mut f = ComputationBuilder::new("f");
    let p = f.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 1 }, &[]);
    assert_eq!(
        message(HloModule::new("m", vec![f.finish(p)], ComputationId(0))),
        "instruction `p` in computation `f`: parameter number 1 is repeated or leaves a gap (parameters are numbered 0, 1, ...)"
    );
    let mut f = ComputationBuilder::new("f");
    f.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    let q = f.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 1 }, &[]);
    assert_eq!(
        message(HloModule::new("m", vec![f.finish(q)], ComputationId(0))),
        "instruction `p` in computation `f`: another instruction of the computation has the same name"
    );
    let f = ComputationBuilder::new("f").finish(InstrId(0));
    assert_eq!(
        message(HloModule::new("m", vec![f], ComputationId(0))),
        "computation `f`: the root instruction 0 does not exist"
    );
    let f = ComputationBuilder::new("f");
    assert!(HloModule::new("m", vec![], ComputationId(0)).is_err());
    let mut g = f.clone();
    let p = g.add("p", HloShape::array(&[]), HloOp::Parameter { number: 0 }, &[]);
    let one = g.clone().finish(p);
    assert_eq!(
        message(HloModule::new("m", vec![one.clone(), one], ComputationId(0))),
        "computation `f`: another computation has the same name"
    );
}

#[test]
fn computations_in_any_order_but_no_recursion() {
    let mut entry = ComputationBuilder::new("entry");
    let a = entry.add("a", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    let fusion = entry.add("fusion", HloShape::array(&[2]), HloOp::Fusion { calls: ComputationId(1) }, &[a]);
    let mut callee = ComputationBuilder::new("callee");
    let p = callee.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    let m =
        HloModule::new("m", vec![entry.clone().finish(fusion), callee.clone().finish(p)], ComputationId(0));
    assert!(m.is_ok(), "{m:?}");
    let mut looping = ComputationBuilder::new("callee");
    let p = looping.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    let back = looping.add("back", HloShape::array(&[2]), HloOp::Fusion { calls: ComputationId(0) }, &[p]);
    assert_eq!(
        message(HloModule::new(
            "m",
            vec![entry.clone().finish(fusion), looping.finish(back)],
            ComputationId(0)
        )),
        "instruction `back` in computation `callee`: calls `entry`, which leads back to this computation \
         (calls must not recurse)"
    );
    assert_eq!(
        message(HloModule::new("m", vec![entry.finish(fusion)], ComputationId(0))),
        "instruction `fusion` in computation `entry`: calls computation 1, which does not exist"
    );
}

#[test]
fn fusion_and_variadic_errors() {
    let mut callee = ComputationBuilder::new("callee");
    let p = callee.add("p", HloShape::array(&[2]), HloOp::Parameter { number: 0 }, &[]);
    let callee = callee.finish(p);
    let mut entry = ComputationBuilder::new("entry");
    let a = entry.add("a", HloShape::array(&[3]), HloOp::Parameter { number: 0 }, &[]);
    let fusion = entry.add("fusion", HloShape::array(&[2]), HloOp::Fusion { calls: ComputationId(0) }, &[a]);
    assert_eq!(
        message(HloModule::new("m", vec![callee.clone(), entry.finish(fusion)], ComputationId(1))),
        "instruction `fusion` in computation `entry`: operand 0 (`a`) should have shape [2], but has [3]"
    );
    let mut entry = ComputationBuilder::new("entry");
    let a = entry.add("a", HloShape::array(&[2, 3]), HloOp::Parameter { number: 0 }, &[]);
    let init = entry.add("init", HloShape::array(&[2]), HloOp::Parameter { number: 1 }, &[]);
    let reduce = entry.add(
        "reduce",
        HloShape::array(&[2]),
        HloOp::Reduce { dimensions: vec![1], to_apply: ComputationId(0) },
        &[a, init],
    );
    assert_eq!(
        message(HloModule::new("m", vec![callee.clone(), entry.finish(reduce)], ComputationId(1))),
        "instruction `reduce` in computation `entry`: operand 1 (`init`) should have shape [], but has [2]"
    );
    let mut entry = ComputationBuilder::new("entry");
    let a = entry.add("a", HloShape::array(&[2, 3]), HloOp::Parameter { number: 0 }, &[]);
    let window = vec![WindowDim::new(1, 1), WindowDim::new(2, 0)];
    let rw = entry.add(
        "rw",
        HloShape::array(&[2, 2]),
        HloOp::ReduceWindow { window, to_apply: ComputationId(0) },
        &[a, a],
    );
    assert_eq!(
        message(HloModule::new("m", vec![callee, entry.finish(rw)], ComputationId(1))),
        "instruction `rw` in computation `entry`: operand 1 (`a`) should have shape [], but has [2, 3]"
    );
}

#[test]
fn pad_and_concatenate_errors() {
    let pad = |dims: Vec<PadDim>, result: &[i64]| {
        let mut f = ComputationBuilder::new("f");
        let a = f.add("a", HloShape::array(&[4]), HloOp::Parameter { number: 0 }, &[]);
        let v = f.add("v", HloShape::array(&[]), HloOp::Parameter { number: 1 }, &[]);
        let x = f.add("x", HloShape::array(result), HloOp::Pad { dims }, &[a, v]);
        message(HloModule::new("m", vec![f.finish(x)], ComputationId(0)))
    };
    assert_eq!(pad(vec![PadDim { low: 1, high: 2, interior: 1 }], &[10]), "");
    assert_eq!(
        pad(vec![PadDim { low: 1, high: 2, interior: 1 }], &[9]),
        "instruction `x` in computation `f`: the result should have shape [10], but has [9]"
    );
    assert_eq!(
        pad(vec![PadDim { low: 0, high: 0, interior: -1 }], &[4]),
        "instruction `x` in computation `f`: interior padding of dimension 0 is -1, but must be at least 0"
    );
    let mut f = ComputationBuilder::new("f");
    let a = f.add("a", HloShape::array(&[2, 3]), HloOp::Parameter { number: 0 }, &[]);
    let b = f.add("b", HloShape::array(&[3, 3]), HloOp::Parameter { number: 1 }, &[]);
    let x = f.add("x", HloShape::array(&[2, 6]), HloOp::Concatenate { dimension: 1 }, &[a, b]);
    assert_eq!(
        message(HloModule::new("m", vec![f.finish(x)], ComputationId(0))),
        "instruction `x` in computation `f`: operand 1 (`b`) should have shape [2, 3], but has [3, 3]"
    );
}

#[test]
fn names_and_shapes_print() {
    assert_eq!(HloShape::tuple(&[&[2], &[3, 4]]).to_string(), "([2], [3, 4])");
    assert_eq!(ArrayShape::with_layout(&[2, 3], &[0, 1]).to_string(), "[2, 3]{0, 1}");
    assert_eq!(ArrayShape::with_layout(&[2, 3], &[0, 1]).major_to_minor(), vec![1, 0]);
    assert_eq!(ElementwiseOp::from_opcode("tanh"), Some(ElementwiseOp::Tanh));
    assert_eq!(ElementwiseOp::from_opcode("compare"), None);
    assert_eq!(ComparisonDirection::from_name("LT"), Some(ComparisonDirection::Lt));
    assert_eq!(HloOp::ReduceWindow { window: vec![], to_apply: ComputationId(0) }.opcode(), "reduce-window");
}
