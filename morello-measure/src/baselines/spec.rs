//! Which baseline problem a spec is ([`baseline_problem`]): the spec of an operator the baselines
//! compute (a plain matmul, with or without an epilogue, a convolution, a softmax), row-major and
//! of one element type where the libraries need it, as the [`Problem`] they compute; for any
//! other spec, a sentence saying why none applies (the benchmark then times morello alone).

use morello_codegen::emit::c_type;
use morello_core::dtype::{Dtype, OperandDtypes};
use morello_core::layout::{Layout, LayoutDim};
use morello_core::operators::Operator;
use morello_core::spec::LogicalSpec;

use super::problem::{
    ActivationLayout, ConvPadding, ConvProblem, Epilogue, FilterLayout, MatmulProblem, Problem,
    SoftmaxProblem,
};

/// The problem the baselines would compute for `spec` (see [`Problem`]), or why
/// they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn baseline_problem(spec: &LogicalSpec) -> Result<Problem, String> {
    let kind = spec.kind;
    if kind.pass_of().is_some() {
        return Err("the spec is a part of a larger operator; the baselines compute whole operators".into());
    }
    if kind.accumulates() {
        return Err(format!("the spec is {}; the baselines overwrite out", kind.description()));
    }
    match PROBLEMS.iter().find(|(operator, _)| *operator == kind.operator()) {
        Some((_, problem)) => problem(spec),
        None => Err(format!(
            "the spec is {}; the baselines compute matmuls, convolutions and softmax",
            kind.description()
        )),
    }
}

/// The problem the baselines compute for a spec of an operator.
type ProblemOf = fn(&LogicalSpec) -> Result<Problem, String>;

/// The operators the baselines compute, each with the problem of a spec of it.
const PROBLEMS: [(Operator, ProblemOf); 5] = [
    (Operator::Matmul, |spec| matmul_problem(spec).map(Problem::Matmul)),
    (Operator::MatmulBias, |spec| matmul_problem(spec).map(Problem::Matmul)),
    (Operator::MatmulRequant, |spec| matmul_problem(spec).map(Problem::Matmul)),
    (Operator::Softmax, softmax_problem),
    (Operator::Conv, |spec| conv_problem(spec).map(Problem::Conv)),
];

/// The softmax along rows the baselines compute for a softmax spec, or why they cannot.
fn softmax_problem(spec: &LogicalSpec) -> Result<Problem, String> {
    let [rows, cols] = *spec.shape.dims() else { return Err("the softmax is not 2-D".into()) };
    plain_operands(spec)?;
    Ok(Problem::Softmax(SoftmaxProblem { rows: size(rows)?, cols: size(cols)? }))
}

/// Checks that every operand has one element type and is row-major (the layout the baselines'
/// problems name), and returns that type.
fn plain_operands(spec: &LogicalSpec) -> Result<Dtype, String> {
    let dtype = spec.operands[0].dtype;
    if spec.operands.iter().any(|o| o.dtype != dtype) {
        let names: Vec<&str> = spec.operands.iter().map(|o| o.dtype.name()).collect();
        return Err(format!("the operands are {}; the baselines need one element type", names.join(", ")));
    }
    row_major_operands(spec)?;
    Ok(dtype)
}

/// Checks that every operand is row-major.
fn row_major_operands(spec: &LogicalSpec) -> Result<(), String> {
    for (index, operand) in spec.operands.iter().enumerate() {
        let rank =
            u8::try_from(operand.shape.rank()).map_err(|_| format!("operand {index} has too many dims"))?;
        let row_major = Layout::row_major(rank).canonicalize(&operand.shape).ok();
        if row_major.as_ref() != Some(&operand.layout) {
            return Err(format!("operand {index} is not row-major; the baselines are"));
        }
    }
    Ok(())
}

fn size(d: u32) -> Result<usize, String> {
    usize::try_from(d).map_err(|_| "a dimension is too large".to_string())
}

/// The row-major matmul the baselines would compute for a matmul spec, or why they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn matmul_problem(spec: &LogicalSpec) -> Result<MatmulProblem, String> {
    let epilogue = match (spec.kind.operator(), spec.kind.activation()) {
        (Operator::Matmul, _) if !spec.kind.accumulates() => Epilogue::NONE,
        (Operator::MatmulBias, Some(activation)) => Epilogue { bias: true, activation, requant: false },
        (Operator::MatmulRequant, _) => Epilogue::REQUANT,
        _ => return baseline_problem(spec).and_then(|_| Err("the spec is not a matmul".to_string())),
    };
    let &[batch, m, k, n] = spec.shape.dims() else {
        return Err("the matmul is not of rank 3".into());
    };
    if batch != 1 {
        return Err(format!("the matmul is batched ({batch}); the baselines are not"));
    }
    let accumulator = if epilogue.requant { Dtype::I32 } else { spec.output().dtype };
    let dtypes = OperandDtypes { lhs: spec.operands[0].dtype, rhs: spec.operands[1].dtype, out: accumulator };
    let (dtype, inputs) = if OperandDtypes::COMBINATIONS.iter().any(|(_, d)| *d == dtypes) {
        row_major_operands(spec)?;
        (spec.output().dtype, Some([c_type(dtypes.lhs), c_type(dtypes.rhs)]))
    } else {
        (plain_operands(spec)?, None)
    };
    Ok(MatmulProblem { m: size(m)?, k: size(k)?, n: size(n)?, dtype: c_type(dtype), inputs, epilogue })
}

/// The convolution the baselines would compute for a conv spec (iteration shape `N, K, C, OH, OW,
/// R, S`; NCHW or NHWC image and output, OIHW, HWIO or OHWI filters; strides, padding and
/// dilations from its geometry), or why they cannot.
///
/// # Errors
/// A sentence saying what about the spec the baselines do not do.
pub fn conv_problem(spec: &LogicalSpec) -> Result<ConvProblem, String> {
    let Some(geometry) = spec.kind.conv_geometry() else {
        return Err("the spec is not a convolution".into());
    };
    let &[_, k, _, _, _, r, s] = spec.shape.dims() else {
        return Err("the convolution is not of rank 7".into());
    };
    let dtypes =
        OperandDtypes { lhs: spec.operands[0].dtype, rhs: spec.operands[1].dtype, out: spec.output().dtype };
    let inputs = if OperandDtypes::COMBINATIONS.iter().any(|(_, d)| *d == dtypes) {
        Some([c_type(dtypes.lhs), c_type(dtypes.rhs)])
    } else if spec.operands.iter().any(|o| o.dtype != Dtype::F32) {
        return Err("the convolution is neither f32 nor u8s8s32 or s8s8s32; the baselines are".into());
    } else {
        None
    };
    let order = |operand: usize, dims: [u8; 4]| {
        let o = &spec.operands[operand];
        let layout = Layout::new(dims.iter().map(|&d| LayoutDim::dynamic(d)).collect()).ok()?;
        (layout.canonicalize(&o.shape).ok()? == o.layout).then_some(())
    };
    let layout = if order(0, [0, 1, 2, 3]).is_some() && order(2, [0, 1, 2, 3]).is_some() {
        ActivationLayout::Nchw
    } else if order(0, [0, 2, 3, 1]).is_some() && order(2, [0, 2, 3, 1]).is_some() {
        ActivationLayout::Nhwc
    } else {
        return Err(
            "the image and output are not both NCHW or both NHWC; the baselines need one of those".into()
        );
    };
    let filter_layout = if order(1, [0, 1, 2, 3]).is_some() {
        FilterLayout::Oihw
    } else if order(1, [2, 3, 1, 0]).is_some() {
        FilterLayout::Hwio
    } else if order(1, [0, 2, 3, 1]).is_some() {
        FilterLayout::Ohwi
    } else {
        return Err("the filters are not OIHW, HWIO or OHWI; the baselines need one of those".into());
    };
    let [n, c, h, w] = *spec.operands[0].shape.dims() else {
        return Err("the image is not of rank 4".into());
    };
    let [t, b, l, rt] = geometry.padding.map(usize::from);
    let mut problem = ConvProblem::new(
        [size(n)?, size(c)?, size(h)?, size(w)?],
        [size(k)?, size(r)?, size(s)?],
        layout,
        filter_layout,
    );
    problem.inputs = inputs;
    problem.stride = geometry.stride.map(usize::from);
    problem.dilation = geometry.dilation.map(usize::from);
    problem.padding = ConvPadding { top: t, bottom: b, left: l, right: rt };
    let [oh, ow] = [spec.shape.dim(3), spec.shape.dim(4)].map(|d| d as usize);
    if problem.out_dims() != Some([oh, ow]) {
        return Err(format!("the baselines would compute a {:?} output, not {oh}x{ow}", problem.out_dims()));
    }
    Ok(problem)
}

#[cfg(test)]
pub(crate) mod tests {
    use morello_core::target::Target;

    use super::*;

    /// The canonical logical spec of `text` on the built-in `x86-avx2` target.
    pub(crate) fn spec(text: &str) -> LogicalSpec {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap().logical().clone()
    }

    #[test]
    fn only_row_major_single_dtype_plain_matmuls_have_baselines() {
        let ok = spec("Matmul(1x1x8x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
        assert_eq!(matmul_problem(&ok), Ok(MatmulProblem::f32(1, 8, 4)));
        let u32 = spec("Matmul(1x2x3x4, u32 GL row-major, u32 GL row-major, u32 GL row-major)");
        assert_eq!(matmul_problem(&u32).map(|p| p.dtype), Ok(morello_codegen::CType::U32));
        let int8 = spec("Matmul(1x2x8x4, u8 GL row-major, i8 GL row-major, i32 GL row-major)");
        assert_eq!(matmul_problem(&int8).map(|p| p.types_name()), Ok("u8s8s32".to_string()));
        let vnni = spec("Matmul(1x2x8x4, u8 GL row-major, i8 GL [0, 1, 2, 1 p(4)], i32 GL row-major)");
        assert_eq!(matmul_problem(&vnni), Err("operand 1 is not row-major; the baselines are".to_string()));
        for (text, why) in [
            (
                "Matmul(1x2x3x4, f32 GL row-major, f32 GL col-major, f32 GL row-major)",
                "operand 1 is not row-major",
            ),
            ("MatmulAccum(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)", "accumulating"),
            ("Matmul(2x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)", "batched"),
            ("Matmul(1x2x4x4, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)", "bf16, bf16, f32"),
            ("Move(8x8, f32 GL row-major, f32 GL col-major)", "a move"),
        ] {
            let reason = matmul_problem(&spec(text)).unwrap_err();
            assert!(reason.contains(why), "{text}: {reason}");
        }
    }

    #[test]
    fn a_fused_epilogue_maps_to_its_problem_and_keeps_its_json_name() {
        let gelu = spec(
            "MatmulBiasGelu(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
        );
        let epilogue = matmul_problem(&gelu).unwrap().epilogue;
        assert_eq!(epilogue.to_string(), "bias,gelu");
        let json = serde_json::to_value(epilogue).unwrap();
        assert_eq!(json, serde_json::json!({ "bias": true, "activation": "GeluTanh" }));
    }

    #[test]
    fn a_valid_nchw_conv_maps_to_its_problem() {
        let conv = spec("Conv(2x8x4x6x5x3x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
        let problem = conv_problem(&conv).unwrap();
        assert_eq!((problem.batch, problem.in_channels, problem.height, problem.width), (2, 4, 8, 6));
        assert_eq!((problem.out_channels, problem.kernel_h, problem.kernel_w), (8, 3, 2));
        assert_eq!(problem.out_dims(), Some([6, 5]));
        assert_eq!(problem.layout, ActivationLayout::Nchw);
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let canonical = LogicalSpec::parse(
            "Conv(2x8x4x6x5x3x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
            &target,
        )
        .unwrap()
        .canonicalize(&target)
        .unwrap();
        let kernel = morello_codegen::emit::kernel_signature(canonical.logical(), "kernel").unwrap();
        assert!(crate::compare::same_call_shape(&Problem::Conv(problem).signature("f"), &kernel));
        let int = spec("Conv(1x2x2x3x3x2x2, i32 GL row-major, i32 GL row-major, i32 GL row-major)");
        assert!(baseline_problem(&int).unwrap_err().contains("neither f32"));
        // NHWC, HWIO, stride 2 and padding 0,1 (same on 8 rows): an 8x8 input.
        let nhwc = spec(
            "Conv:s2x2:p0x1x0x1(1x4x3x4x4x3x3, f32 GL [0, 2, 3, 1], f32 GL [2, 3, 1, 0], f32 GL [0, 2, 3, 1])",
        );
        let problem = conv_problem(&nhwc).unwrap();
        assert_eq!((problem.layout, problem.filter_layout), (ActivationLayout::Nhwc, FilterLayout::Hwio));
        assert_eq!((problem.height, problem.width, problem.stride), (8, 8, [2, 2]));
        assert_eq!(problem.padding, ConvPadding { top: 0, bottom: 1, left: 0, right: 1 });
    }
}
