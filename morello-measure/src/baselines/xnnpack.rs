//! The `xnnpack` baseline: XNNPACK's operators (the API of Debian's `libxnnpack-dev`, a 2022
//! snapshot), single-threaded (no thread pool).
//!
//! - **matmul**: `fully_connected_nc_f32` with `XNN_FLAG_TRANSPOSE_WEIGHTS` (so the weights are
//!   `rhs` as given, `K x N`), the bias as its bias and relu as its output clamp to
//!   `[0, +inf)`; XNNPACK has no fused GELU, so a GELU epilogue is not offered.
//! - **conv**: `convolution2d_nhwc_f32` (NHWC only; XNNPACK's NCHW convolutions cover only a few
//!   special shapes), with padding, stride and dilation; its filter layout is OHWI, so an HWIO
//!   or OIHW filter is transposed into OHWI before XNNPACK packs it.
//! - **softmax**: `softmax_nc_f32` over rows.
//!
//! XNNPACK packs the weights of a fully-connected or convolution operator when the operator is
//! created, as inference runtimes do once per model: the operator is created on the first call
//! (and again only if the weights' address changes), so packing is not in the time; `setup` (the
//! buffers' addresses) is redone only when an address changes, and each call runs the operator.
//! Install with `apt-get install libxnnpack-dev libpthreadpool-dev` (Debian's XNNPACK headers
//! include `pthreadpool.h` without depending on its package).

use super::problem::{Activation, ActivationLayout, ConvProblem, Epilogue, MatmulProblem, SoftmaxProblem};
use super::{CBaseline, Problem, Unavailable, conv_window_values, fill};
use morello_codegen::harness::CType;

const LABEL: &str = "xnnpack";

pub(super) fn c_baselines(problem: &Problem) -> Result<Vec<CBaseline>, Unavailable> {
    let body = match problem {
        Problem::Matmul(p) if p.dtype != CType::F32 => {
            return Err(format!("no {} matmul", p.types_name()).into());
        }
        Problem::Matmul(p) => matmul(p)?,
        Problem::Conv(p) if p.inputs.is_some() => {
            return Err(format!("no {} convolution", p.types_name()).into());
        }
        Problem::Conv(p) => conv(p)?,
        Problem::Softmax(p) => softmax(p),
    };
    let function = super::function_name(LABEL);
    let source = format!(
        "/* morello baseline: XNNPACK, {}. */\n{PRELUDE}{}",
        problem.describe(),
        body.replace("@FUNCTION@", &function)
    );
    let link_args = vec!["-lXNNPACK".into(), "-lm".into()];
    Ok(vec![CBaseline::new(LABEL, source, Vec::new(), link_args)])
}

const PRELUDE: &str = r#"#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xnnpack.h>

#define XNNPACK_CHECK(call)                                                                    \
  do {                                                                                         \
    enum xnn_status status_ = (call);                                                          \
    if (status_ != xnn_status_success) {                                                       \
      fprintf(stderr, "xnnpack: %s failed with status %d\n", #call, (int)status_);            \
      exit(3);                                                                                 \
    }                                                                                          \
  } while (0)

static xnn_operator_t op;
static const void *packed_weights, *set_input, *set_output;

static void xnnpack_start(void) {
  static int started;
  if (!started) {
    XNNPACK_CHECK(xnn_initialize(NULL));
    started = 1;
  }
}
"#;

/// The output clamp of an epilogue's activation, or why XNNPACK cannot fuse it.
fn clamp(epilogue: Epilogue) -> Result<(&'static str, &'static str), Unavailable> {
    match epilogue.activation {
        Activation::Identity => Ok(("-INFINITY", "INFINITY")),
        Activation::Relu => Ok(("0.0f", "INFINITY")),
        Activation::Gelu => Err("no gelu epilogue (its operators fuse only a clamp)".into()),
    }
}

fn matmul(p: &MatmulProblem) -> Result<String, Unavailable> {
    let (min, max) = clamp(p.epilogue)?;
    let (bias_param, bias_arg) = if p.epilogue.bias { ("const float *bias, ", "bias") } else { ("", "NULL") };
    Ok(fill(
        r#"
void @FUNCTION@(const float *lhs, const float *rhs, @BIAS_PARAM@float *out) {
  if (op == NULL || packed_weights != rhs) {
    xnnpack_start();
    if (op != NULL) XNNPACK_CHECK(xnn_delete_operator(op));
    XNNPACK_CHECK(xnn_create_fully_connected_nc_f32(@K@, @N@, @K@, @N@, rhs, @BIAS_ARG@, @MIN@, @MAX@,
                                                    XNN_FLAG_TRANSPOSE_WEIGHTS, &op));
    packed_weights = rhs;
    set_input = set_output = NULL;
  }
  if (set_input != lhs || set_output != out) {
    XNNPACK_CHECK(xnn_setup_fully_connected_nc_f32(op, @M@, lhs, out, NULL));
    set_input = lhs;
    set_output = out;
  }
  XNNPACK_CHECK(xnn_run_operator(op, NULL));
}
"#,
        &[
            ("M", p.m.to_string()),
            ("K", p.k.to_string()),
            ("N", p.n.to_string()),
            ("MIN", min.into()),
            ("MAX", max.into()),
            ("BIAS_PARAM", bias_param.into()),
            ("BIAS_ARG", bias_arg.into()),
        ],
    ))
}

fn conv(p: &ConvProblem) -> Result<String, Unavailable> {
    if p.layout != ActivationLayout::Nhwc {
        return Err("no NCHW convolution (XNNPACK's convolutions are NHWC)".into());
    }
    let (min, max) = clamp(p.epilogue)?;
    let (bias_param, bias_arg) = if p.epilogue.bias { ("const float *bias, ", "bias") } else { ("", "NULL") };
    let (o, i, kh, kw) = (p.out_channels, p.in_channels, p.kernel_h, p.kernel_w);
    let filter_index = match p.filter_layout {
        super::FilterLayout::Oihw => format!("((k * {i}L + c) * {kh}L + r) * {kw}L + s"),
        super::FilterLayout::Hwio => format!("((r * {kw}L + s) * {i}L + c) * {o}L + k"),
        super::FilterLayout::Ohwi => format!("((k * {kh}L + r) * {kw}L + s) * {i}L + c"),
    };
    Ok(fill(
        r#"
/* The filter in OHWI, XNNPACK's layout (a copy only when given in another). */
static const float *xnnpack_ohwi(const float *filter) {
  if (@OHWI@) return filter;
  static float *ohwi;
  if (ohwi == NULL) ohwi = malloc(sizeof(float) * @O@L * @KH@L * @KW@L * @I@L);
  if (ohwi == NULL) exit(3);
  for (long k = 0; k < @O@L; k++)
    for (long r = 0; r < @KH@L; r++)
      for (long s = 0; s < @KW@L; s++)
        for (long c = 0; c < @I@L; c++) ohwi[((k * @KH@L + r) * @KW@L + s) * @I@L + c] = filter[@FILTER_INDEX@];
  return ohwi;
}

void @FUNCTION@(const float *input, const float *filter, @BIAS_PARAM@float *out) {
  if (op == NULL || packed_weights != filter) {
    xnnpack_start();
    if (op != NULL) XNNPACK_CHECK(xnn_delete_operator(op));
    XNNPACK_CHECK(xnn_create_convolution2d_nhwc_f32(@PT@, @PR@, @PB@, @PL@, @KH@, @KW@, @SH@, @SW@, @DH@, @DW@, 1,
                                                    @I@, @O@, @I@, @O@, xnnpack_ohwi(filter), @BIAS_ARG@, @MIN@,
                                                    @MAX@, 0, &op));
    packed_weights = filter;
    set_input = set_output = NULL;
  }
  if (set_input != input || set_output != out) {
    XNNPACK_CHECK(xnn_setup_convolution2d_nhwc_f32(op, @N@, @H@, @W@, input, out, NULL));
    set_input = input;
    set_output = out;
  }
  XNNPACK_CHECK(xnn_run_operator(op, NULL));
}
"#,
        &[
            conv_window_values(p),
            vec![
                ("I", i.to_string()),
                ("O", o.to_string()),
                ("KH", kh.to_string()),
                ("KW", kw.to_string()),
                ("OHWI", if p.filter_layout == super::FilterLayout::Ohwi { "1" } else { "0" }.into()),
                ("FILTER_INDEX", filter_index),
                ("MIN", min.into()),
                ("MAX", max.into()),
                ("BIAS_PARAM", bias_param.into()),
                ("BIAS_ARG", bias_arg.into()),
            ],
        ]
        .concat(),
    ))
}

fn softmax(p: &SoftmaxProblem) -> String {
    fill(
        r#"
void @FUNCTION@(const float *input, float *out) {
  if (op == NULL) {
    xnnpack_start();
    XNNPACK_CHECK(xnn_create_softmax_nc_f32(@COLS@, @COLS@, @COLS@, 0, &op));
  }
  if (set_input != input || set_output != out) {
    XNNPACK_CHECK(xnn_setup_softmax_nc_f32(op, @ROWS@, input, out, NULL));
    set_input = input;
    set_output = out;
  }
  XNNPACK_CHECK(xnn_run_operator(op, NULL));
  (void)packed_weights;
}
"#,
        &[("ROWS", p.rows.to_string()), ("COLS", p.cols.to_string())],
    )
}
