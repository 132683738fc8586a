//! The problems baselines compute, as plain descriptors: a matmul with an optional epilogue, a
//! 2-D convolution, and a softmax along rows. [`baseline_problem`](super::baseline_problem) maps a
//! spec to one of these; each baseline says which it computes, and [`reference`](super::reference)
//! computes each one in f64 to check them.
//!
//! Every problem has one call shape shared by the morello kernel and every baseline (its
//! [`KernelSignature`]): inputs first, in the order below, then the output, all row-major
//! (outermost dimension first) in the layout the problem names.
//!
//! | problem | parameters |
//! | --- | --- |
//! | matmul | `lhs[M][K]`, `rhs[K][N]`, (`bias[N]`), `out[M][N]` |
//! | conv | `input` (NCHW or NHWC), `filter` (OIHW, HWIO or OHWI), (`bias[K]`), `out` (the input's layout) |
//! | softmax | `input[R][C]`, `out[R][C]` |

use std::fmt;

use serde::Serialize;

use crate::bench::Work;
use morello_codegen::harness::{CType, KernelParam, KernelSignature, ParamRole};

/// The activation applied after the bias (if any) in an epilogue: the spec's own.
pub use morello_core::spec::Activation;

/// What is applied to each output element after the product, while it is still in registers
/// (when fused): `out = activation(out + bias[column])`, the bias indexed by the output's
/// column (matmul) or channel (conv); or, for a quantized matmul, the requantization of its i32
/// sum to the 8-bit output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Epilogue {
    /// Whether a per-column (per-channel) bias vector is added; it is then a parameter.
    pub bias: bool,
    /// The activation after it (in reports' JSON `Identity`, `Relu` or `GeluTanh`).
    #[serde(serialize_with = "activation_json")]
    pub activation: Activation,
    /// Whether a quantized matmul's exact i32 sum is requantized to its 8-bit output (the
    /// problem's `dtype`, u8 or i8) with a per-column f32 `scale` and a per-column `zero_point`
    /// of the output's type, both then parameters:
    /// `out = saturate(round_half_even(f32(acc) * scale[n]) + zero_point[n])`, as
    /// `docs/operators.md` ("Requantizing int8 matmul") defines it. In JSON only when set.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requant: bool,
}

impl Default for Epilogue {
    fn default() -> Self {
        Epilogue::NONE
    }
}

/// An activation's name in reports' JSON, as it always was.
fn activation_json<S: serde::Serializer>(activation: &Activation, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(match activation {
        Activation::Identity => "Identity",
        Activation::Relu => "Relu",
        Activation::Gelu => "GeluTanh",
    })
}

impl Epilogue {
    /// No epilogue.
    pub const NONE: Epilogue = Epilogue { bias: false, activation: Activation::Identity, requant: false };

    /// The requantization of a quantized matmul's sum.
    pub const REQUANT: Epilogue = Epilogue { requant: true, ..Epilogue::NONE };

    /// Whether it does nothing.
    pub fn is_none(self) -> bool {
        self == Epilogue::NONE
    }
}

impl fmt::Display for Epilogue {
    /// `bias,relu`, `gelu`, `bias`, `requant`, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> = [
            self.bias.then_some("bias"),
            Some(self.activation.name()).filter(|n| !n.is_empty()),
            self.requant.then_some("requant"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() { f.write_str("none") } else { f.write_str(&parts.join(",")) }
    }
}

/// A row-major matmul `out[M][N] = activation(lhs[M][K] * rhs[K][N] + bias[N])` (the epilogue
/// being optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct MatmulProblem {
    /// Rows of `lhs` and `out`.
    pub m: usize,
    /// Columns of `lhs`, rows of `rhs` (the reduction length).
    pub k: usize,
    /// Columns of `rhs` and `out`.
    pub n: usize,
    /// The element type of `out` (the accumulator's, but for a requantized matmul's 8-bit
    /// output), and of every operand unless `inputs` names the inputs' own.
    pub dtype: CType,
    /// The element types of `lhs` and `rhs` when they are not `dtype`: `[U8, I8]` or `[I8, I8]`
    /// into `I32`, the quantized `u8s8s32` and `s8s8s32`.
    pub inputs: Option<[CType; 2]>,
    /// What follows the product.
    pub epilogue: Epilogue,
}

impl MatmulProblem {
    /// An f32 problem without an epilogue.
    pub fn f32(m: usize, k: usize, n: usize) -> Self {
        MatmulProblem { m, k, n, dtype: CType::F32, inputs: None, epilogue: Epilogue::NONE }
    }

    /// The element types of `lhs` and `rhs`.
    pub fn input_types(&self) -> [CType; 2] {
        self.inputs.unwrap_or([self.dtype; 2])
    }

    /// The element types as the libraries name them: `f32`, `u32`, or `u8s8s32` (inputs then
    /// accumulator, `s` for signed).
    pub fn types_name(&self) -> String {
        let Some(inputs) = self.inputs else { return self.dtype.to_string() };
        let name = |t: CType| t.to_string().replace('i', "s");
        let accumulator = if self.epilogue.requant { CType::I32 } else { self.dtype };
        format!("{}{}{}", name(inputs[0]), name(inputs[1]), name(accumulator))
    }

    /// The same problem with `epilogue`.
    pub fn with_epilogue(self, epilogue: Epilogue) -> Self {
        MatmulProblem { epilogue, ..self }
    }

    /// The kernel signature with this shape: `name(lhs, rhs, [bias,] out)`, or
    /// `name(lhs, rhs, scale, zero_point, out)` requantized.
    pub fn signature(&self, name: impl Into<String>) -> KernelSignature {
        let mut signature = KernelSignature::matmul(name, self.dtype, self.m, self.k, self.n);
        for (param, c_type) in signature.params.iter_mut().zip(self.input_types()) {
            param.c_type = c_type;
        }
        if self.epilogue.bias {
            signature.params.insert(2, KernelParam::new("bias", self.dtype, self.n, ParamRole::Input));
        }
        if self.epilogue.requant {
            let zero_point = KernelParam::new("zero_point", self.dtype, self.n, ParamRole::Input);
            signature.params.insert(2, zero_point);
            signature.params.insert(2, KernelParam::new("scale", CType::F32, self.n, ParamRole::Input));
        }
        signature
    }

    /// The work per call: `2 M K N` operations (the epilogue is not counted), and every operand's
    /// bytes read or written once (`(M K + K N + M N [+ N]) * element size`, and a requantized
    /// matmul's scales and zero points: the floor for a memory-bound shape).
    pub fn work(&self) -> Work {
        let (m, k, n) = (self.m as f64, self.k as f64, self.n as f64);
        let size = |t: CType| t.size_bytes() as f64;
        let [lhs, rhs] = self.input_types().map(size);
        let bias = if self.epilogue.bias { n } else { 0.0 };
        let requant = if self.epilogue.requant { n * (size(CType::F32) + size(self.dtype)) } else { 0.0 };
        let bytes = m * k * lhs + k * n * rhs + (m * n + bias) * size(self.dtype) + requant;
        Work { flops: Some(2.0 * m * k * n), bytes: Some(bytes) }
    }
}

/// The layout of a convolution's input and output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ActivationLayout {
    /// Batch, channels, height, width (outermost first).
    Nchw,
    /// Batch, height, width, channels.
    Nhwc,
}

impl ActivationLayout {
    /// `nchw` or `nhwc`.
    pub fn name(self) -> &'static str {
        match self {
            ActivationLayout::Nchw => "nchw",
            ActivationLayout::Nhwc => "nhwc",
        }
    }
}

/// The layout of a convolution's filter (`O` output channels, `I` input channels, `H` x `W`
/// window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FilterLayout {
    /// Output channels, input channels, height, width (PyTorch's).
    Oihw,
    /// Height, width, input channels, output channels (TensorFlow's).
    Hwio,
    /// Output channels, height, width, input channels (TFLite's and XNNPACK's).
    Ohwi,
}

impl FilterLayout {
    /// `oihw`, `hwio` or `ohwi`.
    pub fn name(self) -> &'static str {
        match self {
            FilterLayout::Oihw => "oihw",
            FilterLayout::Hwio => "hwio",
            FilterLayout::Ohwi => "ohwi",
        }
    }
}

/// Zero padding around a convolution's input, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub struct ConvPadding {
    /// Rows above.
    pub top: usize,
    /// Rows below.
    pub bottom: usize,
    /// Columns to the left.
    pub left: usize,
    /// Columns to the right.
    pub right: usize,
}

impl ConvPadding {
    /// `p` on every side.
    pub fn uniform(p: usize) -> Self {
        ConvPadding { top: p, bottom: p, left: p, right: p }
    }
}

/// A 2-D convolution (cross-correlation, as in every deep-learning library):
///
/// ```text
/// out[n][k][y][x] = activation(bias[k] + Σ_{c,r,s} input[n][c][y*sh + r*dh - top][x*sw + s*dw - left]
///                                                   * filter[k][c][r][s])
/// ```
///
/// with out-of-range input elements read as zero; `OH = (H + top + bottom - dh (R - 1) - 1) / sh + 1`
/// and likewise for `OW`. Indices are written NCHW/OIHW here; the buffers are in the named
/// layouts, and the output is in the input's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ConvProblem {
    /// Images in the batch (`N`).
    pub batch: usize,
    /// Input channels (`C`).
    pub in_channels: usize,
    /// Input height (`H`).
    pub height: usize,
    /// Input width (`W`).
    pub width: usize,
    /// Output channels, the filter count (`K`).
    pub out_channels: usize,
    /// Filter height (`R`).
    pub kernel_h: usize,
    /// Filter width (`S`).
    pub kernel_w: usize,
    /// Vertical and horizontal stride (`sh`, `sw`), at least 1.
    pub stride: [usize; 2],
    /// Zero padding.
    pub padding: ConvPadding,
    /// Vertical and horizontal dilation (`dh`, `dw`; 1 is a dense window).
    pub dilation: [usize; 2],
    /// The input's and output's layout.
    pub layout: ActivationLayout,
    /// The filter's layout.
    pub filter_layout: FilterLayout,
    /// The element types of the input and the filter when the convolution is quantized: `[U8, I8]`
    /// or `[I8, I8]`, summed exactly into an i32 output (without an epilogue); `None` for f32.
    pub inputs: Option<[CType; 2]>,
    /// What follows the convolution (the bias is per output channel).
    pub epilogue: Epilogue,
}

impl ConvProblem {
    /// A stride-1, unpadded, undilated convolution of `batch x in_channels x height x width` with
    /// `out_channels` filters of `kernel_h x kernel_w`, in the given layouts.
    pub fn new(
        [batch, in_channels, height, width]: [usize; 4],
        [out_channels, kernel_h, kernel_w]: [usize; 3],
        layout: ActivationLayout,
        filter_layout: FilterLayout,
    ) -> Self {
        ConvProblem {
            batch,
            in_channels,
            height,
            width,
            out_channels,
            kernel_h,
            kernel_w,
            stride: [1, 1],
            padding: ConvPadding::default(),
            dilation: [1, 1],
            layout,
            filter_layout,
            inputs: None,
            epilogue: Epilogue::NONE,
        }
    }

    /// The element types of the input and the filter.
    pub fn input_types(&self) -> [CType; 2] {
        self.inputs.unwrap_or([CType::F32; 2])
    }

    /// The element type of the output: i32 when quantized, else f32.
    pub fn out_type(&self) -> CType {
        if self.inputs.is_some() { CType::I32 } else { CType::F32 }
    }

    /// `f32`, or the quantized types as `u8s8s32` (input, filter, output; `s` for signed).
    pub fn types_name(&self) -> String {
        let name = |t: CType| t.to_string().replace('i', "s");
        match self.inputs {
            Some([input, filter]) => format!("{}{}{}", name(input), name(filter), name(self.out_type())),
            None => "f32".to_string(),
        }
    }

    /// Checks that every size is positive and the (dilated) window fits the padded input.
    ///
    /// # Errors
    /// One sentence saying what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        let sizes = [
            ("batch", self.batch),
            ("input channels", self.in_channels),
            ("height", self.height),
            ("width", self.width),
            ("output channels", self.out_channels),
            ("filter height", self.kernel_h),
            ("filter width", self.kernel_w),
            ("vertical stride", self.stride[0]),
            ("horizontal stride", self.stride[1]),
            ("vertical dilation", self.dilation[0]),
            ("horizontal dilation", self.dilation[1]),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(format!("the convolution's {name} is 0"));
        }
        if self.out_dims().is_none() {
            return Err(format!(
                "the {}x{} filter (dilation {}x{}) is larger than the padded {}x{} input",
                self.kernel_h,
                self.kernel_w,
                self.dilation[0],
                self.dilation[1],
                self.height + self.padding.top + self.padding.bottom,
                self.width + self.padding.left + self.padding.right
            ));
        }
        Ok(())
    }

    /// The output's height and width, or `None` if the window does not fit.
    pub fn out_dims(&self) -> Option<[usize; 2]> {
        let extent =
            |size: usize, before: usize, after: usize, kernel: usize, dilation: usize, stride: usize| {
                let padded = size + before + after;
                let window = dilation.checked_mul(kernel.checked_sub(1)?)?.checked_add(1)?;
                padded.checked_sub(window).map(|room| room / stride.max(1) + 1)
            };
        let p = self.padding;
        Some([
            extent(self.height, p.top, p.bottom, self.kernel_h, self.dilation[0], self.stride[0])?,
            extent(self.width, p.left, p.right, self.kernel_w, self.dilation[1], self.stride[1])?,
        ])
    }

    /// The output's height (0 if the window does not fit).
    pub fn out_h(&self) -> usize {
        self.out_dims().map_or(0, |d| d[0])
    }

    /// The output's width (0 if the window does not fit).
    pub fn out_w(&self) -> usize {
        self.out_dims().map_or(0, |d| d[1])
    }

    /// Elements of the input, the filter and the output.
    pub fn elements(&self) -> [usize; 3] {
        [
            self.batch * self.in_channels * self.height * self.width,
            self.out_channels * self.in_channels * self.kernel_h * self.kernel_w,
            self.batch * self.out_channels * self.out_h() * self.out_w(),
        ]
    }

    /// The offset of input element `(n, c, y, x)` in its layout.
    pub fn input_index(&self, n: usize, c: usize, y: usize, x: usize) -> usize {
        activation_index(self.layout, [self.in_channels, self.height, self.width], [n, c, y, x])
    }

    /// The offset of output element `(n, k, y, x)` in its layout (the input's).
    pub fn output_index(&self, n: usize, k: usize, y: usize, x: usize) -> usize {
        activation_index(self.layout, [self.out_channels, self.out_h(), self.out_w()], [n, k, y, x])
    }

    /// The offset of filter element `(k, c, r, s)` (output channel, input channel, row, column)
    /// in its layout.
    pub fn filter_index(&self, k: usize, c: usize, r: usize, s: usize) -> usize {
        let (o, i, h, w) = (self.out_channels, self.in_channels, self.kernel_h, self.kernel_w);
        match self.filter_layout {
            FilterLayout::Oihw => ((k * i + c) * h + r) * w + s,
            FilterLayout::Hwio => ((r * w + s) * i + c) * o + k,
            FilterLayout::Ohwi => ((k * h + r) * w + s) * i + c,
        }
    }

    /// The kernel signature: `name(input, filter, [bias,] out)`, f32.
    pub fn signature(&self, name: impl Into<String>) -> KernelSignature {
        let [input, filter, out] = self.elements();
        let [input_type, filter_type] = self.input_types();
        let mut params = vec![
            KernelParam::new("input", input_type, input, ParamRole::Input),
            KernelParam::new("filter", filter_type, filter, ParamRole::Input),
        ];
        if self.epilogue.bias {
            params.push(KernelParam::new("bias", CType::F32, self.out_channels, ParamRole::Input));
        }
        params.push(KernelParam::new("out", self.out_type(), out, ParamRole::Output));
        KernelSignature::new(name, params)
    }

    /// The work per call: `2 N K OH OW C R S` operations and each operand's bytes once.
    pub fn work(&self) -> Work {
        let [input, filter, out] = self.elements().map(|e| e as f64);
        let macs = out * (self.in_channels * self.kernel_h * self.kernel_w) as f64;
        let bias = if self.epilogue.bias { self.out_channels as f64 } else { 0.0 };
        let [input_size, filter_size] = self.input_types().map(|t| t.size_bytes() as f64);
        let bytes = input * input_size + filter * filter_size + 4.0 * (out + bias);
        Work { flops: Some(2.0 * macs), bytes: Some(bytes) }
    }
}

/// The offset of `(n, c, y, x)` in an activation of `channels x height x width` per image.
fn activation_index(
    layout: ActivationLayout,
    [c_dim, h_dim, w_dim]: [usize; 3],
    [n, c, y, x]: [usize; 4],
) -> usize {
    match layout {
        ActivationLayout::Nchw => ((n * c_dim + c) * h_dim + y) * w_dim + x,
        ActivationLayout::Nhwc => ((n * h_dim + y) * w_dim + x) * c_dim + c,
    }
}

/// A numerically stable softmax of each row of a row-major f32 `rows x cols` matrix:
/// `out[i][j] = exp(x[i][j] - max_j x[i]) / Σ_j exp(x[i][j] - max_j x[i])`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct SoftmaxProblem {
    /// Rows, each normalised on its own.
    pub rows: usize,
    /// Columns: the length of the reduced (last) dimension.
    pub cols: usize,
}

impl SoftmaxProblem {
    /// The kernel signature: `name(input, out)`, f32.
    pub fn signature(&self, name: impl Into<String>) -> KernelSignature {
        let elements = self.rows * self.cols;
        KernelSignature::new(
            name,
            vec![
                KernelParam::new("input", CType::F32, elements, ParamRole::Input),
                KernelParam::new("out", CType::F32, elements, ParamRole::Output),
            ],
        )
    }

    /// The work per call: no flop count (exponentials are not FMAs; softmax is reported in GB/s),
    /// the input read and the output written once.
    pub fn work(&self) -> Work {
        Work { flops: None, bytes: Some(8.0 * (self.rows * self.cols) as f64) }
    }
}

/// Any problem a baseline computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Problem {
    /// A matmul, with an optional epilogue.
    Matmul(MatmulProblem),
    /// A 2-D convolution, with an optional epilogue.
    Conv(ConvProblem),
    /// A softmax along rows.
    Softmax(SoftmaxProblem),
}

impl Problem {
    /// The kernel signature every candidate shares.
    pub fn signature(&self, name: impl Into<String>) -> KernelSignature {
        match self {
            Problem::Matmul(p) => p.signature(name),
            Problem::Conv(p) => p.signature(name),
            Problem::Softmax(p) => p.signature(name),
        }
    }

    /// The work per call.
    pub fn work(&self) -> Work {
        match self {
            Problem::Matmul(p) => p.work(),
            Problem::Conv(p) => p.work(),
            Problem::Softmax(p) => p.work(),
        }
    }

    /// The epilogue, if the problem has one.
    pub fn epilogue(&self) -> Epilogue {
        match self {
            Problem::Matmul(p) => p.epilogue,
            Problem::Conv(p) => p.epilogue,
            Problem::Softmax(_) => Epilogue::NONE,
        }
    }

    /// Checks that the problem is computable (positive sizes, a window that fits).
    ///
    /// # Errors
    /// One sentence saying what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Problem::Matmul(p) if p.m == 0 || p.k == 0 || p.n == 0 => {
                Err("every matmul dimension must be at least 1".into())
            }
            Problem::Matmul(_) => Ok(()),
            Problem::Conv(p) => p.validate(),
            Problem::Softmax(p) if p.rows == 0 || p.cols == 0 => {
                Err("the softmax must have at least one row and one column".into())
            }
            Problem::Softmax(_) => Ok(()),
        }
    }

    /// The element type of the output (of every operand but a quantized matmul's or convolution's
    /// inputs).
    pub fn dtype(&self) -> CType {
        match self {
            Problem::Matmul(p) => p.dtype,
            Problem::Conv(p) => p.out_type(),
            Problem::Softmax(_) => CType::F32,
        }
    }

    /// A short description for messages: `matmul 64x64x64 + bias,relu`,
    /// `conv nhwc 1x56x56x64 hwio 3x3x64x64 stride 1x1 pad 1,1,1,1 dilation 1x1`, `softmax 32x1024`.
    pub fn describe(&self) -> String {
        let epilogue = |e: Epilogue| if e.is_none() { String::new() } else { format!(" + {e}") };
        match self {
            Problem::Matmul(p) if p.epilogue.requant => {
                format!("{} matmul {}x{}x{} + requant to {}", p.types_name(), p.m, p.k, p.n, p.dtype)
            }
            Problem::Matmul(p) => {
                format!("{} matmul {}x{}x{}{}", p.types_name(), p.m, p.k, p.n, epilogue(p.epilogue))
            }
            Problem::Conv(p) => {
                let dims = |d: Vec<usize>| d.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
                let (n, c, h, w) = (p.batch, p.in_channels, p.height, p.width);
                let input = match p.layout {
                    ActivationLayout::Nchw => vec![n, c, h, w],
                    ActivationLayout::Nhwc => vec![n, h, w, c],
                };
                let (o, r, s) = (p.out_channels, p.kernel_h, p.kernel_w);
                let filter = match p.filter_layout {
                    FilterLayout::Oihw => vec![o, c, r, s],
                    FilterLayout::Hwio => vec![r, s, c, o],
                    FilterLayout::Ohwi => vec![o, r, s, c],
                };
                let pad = p.padding;
                let types = if p.inputs.is_some() { format!("{} ", p.types_name()) } else { String::new() };
                format!(
                    "{types}conv {} {} {} {} stride {}x{} pad {},{},{},{} dilation {}x{}{}",
                    p.layout.name(),
                    dims(input),
                    p.filter_layout.name(),
                    dims(filter),
                    p.stride[0],
                    p.stride[1],
                    pad.top,
                    pad.bottom,
                    pad.left,
                    pad.right,
                    p.dilation[0],
                    p.dilation[1],
                    epilogue(p.epilogue)
                )
            }
            Problem::Softmax(p) => format!("softmax {}x{}", p.rows, p.cols),
        }
    }
}

impl From<MatmulProblem> for Problem {
    fn from(p: MatmulProblem) -> Self {
        Problem::Matmul(p)
    }
}

impl From<ConvProblem> for Problem {
    fn from(p: ConvProblem) -> Self {
        Problem::Conv(p)
    }
}

impl From<SoftmaxProblem> for Problem {
    fn from(p: SoftmaxProblem) -> Self {
        Problem::Softmax(p)
    }
}
