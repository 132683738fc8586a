//! The `naive` baseline: plain loops compiled `-O3 -march=native`, what a careful C programmer
//! writes without tiling.
//!
//! - **matmul** (f32 and u32): loop order i, k, j (the row of `out` is zeroed, then
//!   `lhs[i][k] * rhs[k][:]` is added to it), which the compiler vectorises along `j` without
//!   reassociating a reduction; an epilogue is applied to each finished row. With more than one
//!   thread the `i` loop is an OpenMP parallel loop.
//! - **conv**: for each output element, the sum over the window and the input channels, in
//!   the problem's layouts (padding by skipping taps outside the input).
//! - **softmax**: per row, the maximum, `expf` of the differences and their sum, then a scale.

use super::epilogue::activation_c;
use super::problem::{ActivationLayout, ConvProblem, FilterLayout, MatmulProblem, SoftmaxProblem};
use super::{CBaseline, Problem, Unavailable};
use morello_codegen::harness::CType;

const LABEL: &str = "naive";

pub(super) fn c_baselines(problem: &Problem, threads: usize) -> Result<Vec<CBaseline>, Unavailable> {
    let function = super::function_name(LABEL);
    let parallel = if threads > 1 { "#pragma omp parallel for schedule(static)\n  " } else { "" };
    let source = match problem {
        Problem::Matmul(p) => matmul(&function, p, parallel)?,
        Problem::Conv(p) if p.inputs.is_some() => {
            return Err(format!("no {} convolution", p.types_name()).into());
        }
        Problem::Conv(p) => conv(&function, p, parallel),
        Problem::Softmax(p) => softmax(&function, p, parallel),
    };
    let mut flags = vec!["-march=native".to_string()];
    let mut link_args = vec!["-lm".to_string()];
    if threads > 1 {
        flags.push("-fopenmp".into());
        link_args.push("-fopenmp".into());
    }
    Ok(vec![CBaseline::new(LABEL, source, flags, link_args)])
}

fn matmul(function: &str, problem: &MatmulProblem, parallel: &str) -> Result<String, Unavailable> {
    if !matches!(problem.dtype, CType::F32 | CType::U32) && problem.inputs.is_none() {
        return Err(format!("no {} matmul", problem.types_name()).into());
    }
    if problem.dtype != CType::F32 && !problem.epilogue.is_none() {
        return Err(format!("no {} epilogue", problem.types_name()).into());
    }
    let t = problem.dtype.c_name();
    // Quantized inputs are widened to the output's type before they multiply (exact in i32).
    let [lhs_t, rhs_t] = problem.input_types().map(CType::c_name);
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let bias_param =
        if problem.epilogue.bias { format!("const {t} *restrict bias, ") } else { String::new() };
    let epilogue = if problem.epilogue.is_none() {
        String::new()
    } else {
        let bias = if problem.epilogue.bias { "v += bias[j];\n      " } else { "" };
        format!(
            "    for (long j = 0; j < {n}L; j++) {{\n      float v = out[i * {n}L + j];\n      {bias}out[i * {n}L + j] = {};\n    }}\n",
            activation_c(problem.epilogue.activation, "v")
        )
    };
    Ok(format!(
        r#"/* morello baseline: naive {dtype} matmul, out[{m}][{n}] = lhs[{m}][{k}] * rhs[{k}][{n}] ({epilogue_name}). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void {function}(const {lhs_t} *restrict lhs, const {rhs_t} *restrict rhs, {bias_param}{t} *restrict out) {{
  {parallel}for (long i = 0; i < {m}L; i++) {{
    for (long j = 0; j < {n}L; j++) out[i * {n}L + j] = 0;
    for (long p = 0; p < {k}L; p++) {{
      const {t} a = lhs[i * {k}L + p];
      for (long j = 0; j < {n}L; j++) out[i * {n}L + j] += a * ({t})rhs[p * {n}L + j];
    }}
{epilogue}  }}
}}
"#,
        dtype = problem.types_name(),
        epilogue_name = problem.epilogue,
    ))
}

/// The C offset expression of an activation element `(n, c, y, x)` in `layout`, for per-image
/// dims `channels x height x width`.
fn activation_offset(
    layout: ActivationLayout,
    [c_dim, h_dim, w_dim]: [usize; 3],
    [n, c, y, x]: [&str; 4],
) -> String {
    match layout {
        ActivationLayout::Nchw => format!("((({n} * {c_dim}L + {c}) * {h_dim}L + {y}) * {w_dim}L + {x})"),
        ActivationLayout::Nhwc => format!("((({n} * {h_dim}L + {y}) * {w_dim}L + {x}) * {c_dim}L + {c})"),
    }
}

fn conv(function: &str, p: &ConvProblem, parallel: &str) -> String {
    let (oh, ow) = (p.out_h(), p.out_w());
    let (o, i, kh, kw) = (p.out_channels, p.in_channels, p.kernel_h, p.kernel_w);
    let input = activation_offset(p.layout, [i, p.height, p.width], ["n", "c", "iy", "ix"]);
    let output = activation_offset(p.layout, [o, oh, ow], ["n", "k", "y", "x"]);
    let filter = match p.filter_layout {
        FilterLayout::Oihw => format!("(((k * {i}L + c) * {kh}L + r) * {kw}L + s)"),
        FilterLayout::Hwio => format!("(((r * {kw}L + s) * {i}L + c) * {o}L + k)"),
        FilterLayout::Ohwi => format!("(((k * {kh}L + r) * {kw}L + s) * {i}L + c)"),
    };
    let bias_param = if p.epilogue.bias { "const float *restrict bias, " } else { "" };
    let bias = if p.epilogue.bias { "acc += bias[k];\n          " } else { "" };
    let value = activation_c(p.epilogue.activation, "acc");
    let [sh, sw] = p.stride;
    let [dh, dw] = p.dilation;
    let (pt, pl) = (p.padding.top, p.padding.left);
    format!(
        r#"/* morello baseline: naive convolution, {description}. */
#include <math.h>
#include <stddef.h>

void {function}(const float *restrict input, const float *restrict filter, {bias_param}float *restrict out) {{
  {parallel}for (long n = 0; n < {batch}L; n++) {{
    for (long k = 0; k < {o}L; k++) {{
      for (long y = 0; y < {oh}L; y++) {{
        for (long x = 0; x < {ow}L; x++) {{
          float acc = 0.0f;
          for (long r = 0; r < {kh}L; r++) {{
            const long iy = y * {sh}L + r * {dh}L - {pt}L;
            if (iy < 0 || iy >= {h}L) continue;
            for (long s = 0; s < {kw}L; s++) {{
              const long ix = x * {sw}L + s * {dw}L - {pl}L;
              if (ix < 0 || ix >= {w}L) continue;
              for (long c = 0; c < {i}L; c++) acc += input[{input}] * filter[{filter}];
            }}
          }}
          {bias}out[{output}] = {value};
        }}
      }}
    }}
  }}
}}
"#,
        description = Problem::Conv(*p).describe(),
        batch = p.batch,
        h = p.height,
        w = p.width,
    )
}

fn softmax(function: &str, p: &SoftmaxProblem, parallel: &str) -> String {
    let (rows, cols) = (p.rows, p.cols);
    format!(
        r#"/* morello baseline: naive softmax of {rows} rows of {cols}. */
#include <math.h>
#include <stddef.h>

void {function}(const float *restrict input, float *restrict out) {{
  {parallel}for (long i = 0; i < {rows}L; i++) {{
    const float *x = input + i * {cols}L;
    float *y = out + i * {cols}L;
    float max = x[0];
    for (long j = 1; j < {cols}L; j++) max = x[j] > max ? x[j] : max;
    float sum = 0.0f;
    for (long j = 0; j < {cols}L; j++) {{
      y[j] = expf(x[j] - max);
      sum += y[j];
    }}
    const float scale = 1.0f / sum;
    for (long j = 0; j < {cols}L; j++) y[j] *= scale;
  }}
}}
"#
    )
}
