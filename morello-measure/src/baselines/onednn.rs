//! The `onednn` baseline: oneDNN's primitives through its C API, on one CPU stream.
//!
//! - **matmul**: the `matmul` primitive on row-major (`ab`) operands, the epilogue fused as
//!   oneDNN does it: the bias as the primitive's bias argument (`{1, N}`, one per column), the
//!   activation as an eltwise post-op (`eltwise_relu`, `eltwise_gelu_tanh`). Quantized: u8 or
//!   s8 times s8 into s32, or requantized to u8 or s8 with per-column output scales and zero
//!   points (`matmul_requant`, oneDNN 2.x).
//! - **conv**: the forward-inference `convolution` primitive (`convolution_auto`) with the
//!   problem's layouts (`nchw`/`nhwc` activations, `oihw`/`hwio`/`ohwi` filters), strides,
//!   padding and dilation, and the epilogue as for matmul; quantized (u8 or s8 input, s8 filter,
//!   s32 output, no epilogue) too. A second candidate, `onednn-any`,
//!   lets oneDNN choose every layout (`format_tag::any`, usually a blocked one such as
//!   `aBcd8b`): each call reorders the input into its layout, convolves, and reorders the output
//!   back; the filter is reordered once, on the first call (weights are constants in
//!   inference), and again only if its address changes. The layouts chosen are reported.
//! - **softmax**: the `softmax` primitive (`softmax_accurate`) along axis 1 of a row-major 2-D
//!   tensor.
//!
//! Primitives are created in a setup function (outside timing); a call binds the buffers and
//! executes. Setup reports, as notes, oneDNN's version, the ISA it dispatches to, and each
//! primitive's implementation name (`gemm:jit`, `brg:avx2`, `jit:avx2`, ... or `ref`, the slow
//! reference one) and layouts. oneDNN's threads follow `OMP_NUM_THREADS` (its OpenMP builds).
//!
//! # Which oneDNN
//!
//! The unit compiles against oneDNN 2.x (Debian bookworm's `libdnnl-dev` is 2.6) and 3.x (whose
//! C API replaced operation descriptors with `*_primitive_desc_create`; `#if
//! DNNL_VERSION_MAJOR`). `$MORELLO_ONEDNN_DIR`, when set, names a prefix with
//! `include/dnnl.h` (or `include/oneapi/dnnl/dnnl.h`) and `lib/libdnnl.so*`, for example the
//! OpenMP build on PyPI (`python3 -m venv /opt/onednn && /opt/onednn/bin/pip install
//! onednn-devel-cpu-gomp`, oneDNN 3.2; PyPI's newest `onednn-devel` is a SYCL build that needs
//! Intel's DPC++ runtime); otherwise the system's `-ldnnl` is used.

use std::path::{Path, PathBuf};

use super::problem::{
    Activation, ActivationLayout, ConvProblem, Epilogue, FilterLayout, MatmulProblem, SoftmaxProblem,
};
use super::{CBaseline, Problem, Unavailable, conv_window_values, fill};
use morello_codegen::harness::CType;

/// The environment variable naming a oneDNN prefix.
pub const ENV: &str = "MORELLO_ONEDNN_DIR";

/// How to install it.
pub const INSTALL: &str = "`apt-get install libdnnl-dev`, or set MORELLO_ONEDNN_DIR to a prefix with \
                           include/dnnl.h and lib/libdnnl.so*";

/// Where the oneDNN headers and library come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OneDnnInstall {
    /// The system's: `<dnnl.h>` on the default include path, `-ldnnl`.
    System,
    /// A prefix (from `$MORELLO_ONEDNN_DIR`).
    Prefix {
        /// The directory of `dnnl.h`.
        include: PathBuf,
        /// The shared library, linked by path with an rpath to its directory.
        library: PathBuf,
    },
}

/// The oneDNN to use: `$MORELLO_ONEDNN_DIR` if set, else the system's.
///
/// # Errors
/// What is missing from `$MORELLO_ONEDNN_DIR`.
pub fn locate() -> Result<OneDnnInstall, String> {
    let Some(dir) = std::env::var_os(ENV).filter(|v| !v.is_empty()) else {
        return Ok(OneDnnInstall::System);
    };
    let prefix = PathBuf::from(dir);
    locate_in(&prefix).map_err(|missing| format!("{ENV}={} has {missing}", prefix.display()))
}

fn locate_in(prefix: &Path) -> Result<OneDnnInstall, String> {
    let include = ["include", "include/oneapi/dnnl"]
        .iter()
        .map(|d| prefix.join(d))
        .find(|d| d.join("dnnl.h").is_file());
    let library = ["lib", "lib64", "lib/x86_64-linux-gnu"].iter().find_map(|d| {
        let dir = prefix.join(d);
        let plain = dir.join("libdnnl.so");
        if plain.is_file() {
            return Some(plain);
        }
        let entries = std::fs::read_dir(&dir).ok()?;
        let mut versioned: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libdnnl.so.")))
            .collect();
        versioned.sort();
        versioned.into_iter().next()
    });
    match (include, library) {
        (Some(include), Some(library)) => Ok(OneDnnInstall::Prefix { include, library }),
        (None, Some(_)) => Err("no include/dnnl.h".into()),
        (Some(_), None) => Err("no lib/libdnnl.so*".into()),
        (None, None) => Err("no include/dnnl.h and no lib/libdnnl.so*".into()),
    }
}

impl OneDnnInstall {
    /// Compiler flags and link arguments.
    fn flags(&self) -> (Vec<String>, Vec<String>) {
        match self {
            OneDnnInstall::System => (Vec::new(), vec!["-ldnnl".into(), "-lm".into()]),
            OneDnnInstall::Prefix { include, library } => {
                let dir = library.parent().unwrap_or(Path::new("."));
                (
                    vec![format!("-I{}", include.display())],
                    vec![
                        library.display().to_string(),
                        format!("-Wl,-rpath,{}", dir.display()),
                        "-lm".into(),
                    ],
                )
            }
        }
    }
}

pub(super) fn c_baselines(problem: &Problem) -> Result<Vec<CBaseline>, Unavailable> {
    match problem {
        Problem::Matmul(p) if p.dtype == CType::F32 => {}
        Problem::Matmul(p) if quantized(p).is_some() && p.epilogue.is_none() => {}
        Problem::Matmul(p) if requantized(p) => {}
        Problem::Conv(p) if p.inputs.is_some() && !p.epilogue.is_none() => {
            return Err(format!("no {} convolution with an epilogue", p.types_name()).into());
        }
        Problem::Conv(p) if matches!(p.inputs, None | Some([CType::U8 | CType::I8, CType::I8])) => {}
        Problem::Matmul(p) => return Err(format!("no {} matmul", p.types_name()).into()),
        _ if problem.dtype() != CType::F32 => return Err(format!("no {} operator", problem.dtype()).into()),
        _ => {}
    }
    let install = locate().map_err(Unavailable::NotFound)?;
    let (flags, link_args) = install.flags();
    let unit = |label: &str, body: String| {
        let function = super::function_name(label);
        let source = format!(
            "/* morello baseline: oneDNN, {}. */\n{}{}",
            problem.describe(),
            PRELUDE.replace("@NOTE@", super::check::NOTE_PREFIX),
            body.replace("@FUNCTION@", &function)
        );
        let mut baseline = CBaseline::new(label, source, flags.clone(), link_args.clone());
        baseline.setup = Some(format!("{function}_setup"));
        baseline
    };
    Ok(match problem {
        Problem::Matmul(p) if p.epilogue.requant => vec![unit("onednn", matmul_requant(p))],
        Problem::Matmul(p) => vec![unit("onednn", matmul(p))],
        Problem::Conv(p) => {
            vec![unit("onednn", conv(p, Formats::Given)), unit("onednn-any", conv(p, Formats::Any))]
        }
        Problem::Softmax(p) => vec![unit("onednn", softmax(p))],
    })
}

/// What every oneDNN unit starts with: the 2.x/3.x compatibility layer, the engine and stream,
/// post-ops, memories, and the description of a primitive for the notes.
const PRELUDE: &str = r#"#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dnnl.h>
#include <dnnl_debug.h>

#define ONEDNN_CHECK(call)                                                                     \
  do {                                                                                         \
    dnnl_status_t status_ = (call);                                                            \
    if (status_ != dnnl_success) {                                                             \
      fprintf(stderr, "onednn: %s failed: %s\n", #call, dnnl_status2str(status_));             \
      exit(3);                                                                                 \
    }                                                                                          \
  } while (0)

#if DNNL_VERSION_MAJOR >= 3
typedef dnnl_memory_desc_t onednn_md; /* a handle */
typedef const_dnnl_memory_desc_t onednn_md_ref;
#define ONEDNN_REF(md) (md)
static inline onednn_md onednn_md_typed(int ndims, const dnnl_dims_t dims, dnnl_data_type_t type,
                                        dnnl_format_tag_t tag) {
  onednn_md md;
  ONEDNN_CHECK(dnnl_memory_desc_create_with_tag(&md, ndims, dims, type, tag));
  return md;
}
#define ONEDNN_ELTWISE(post_ops, alg) dnnl_post_ops_append_eltwise((post_ops), (alg), 0.0f, 0.0f)
#else
typedef dnnl_memory_desc_t onednn_md; /* a struct */
typedef const dnnl_memory_desc_t *onednn_md_ref;
#define ONEDNN_REF(md) (&(md))
static inline onednn_md onednn_md_typed(int ndims, const dnnl_dims_t dims, dnnl_data_type_t type,
                                        dnnl_format_tag_t tag) {
  onednn_md md;
  ONEDNN_CHECK(dnnl_memory_desc_init_by_tag(&md, ndims, dims, type, tag));
  return md;
}
#define ONEDNN_ELTWISE(post_ops, alg) dnnl_post_ops_append_eltwise((post_ops), 1.0f, (alg), 0.0f, 0.0f)
#endif

static inline onednn_md onednn_md_tag(int ndims, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  return onednn_md_typed(ndims, dims, dnnl_f32, tag);
}

static dnnl_engine_t onednn_engine;
static dnnl_stream_t onednn_stream;

static inline void onednn_start(void) {
  if (onednn_engine != NULL) return;
  ONEDNN_CHECK(dnnl_engine_create(&onednn_engine, dnnl_cpu, 0));
  ONEDNN_CHECK(dnnl_stream_create(&onednn_stream, onednn_engine, dnnl_stream_default_flags));
}

/* Attributes with the activation as an eltwise post-op (none for alg 0). */
static inline dnnl_primitive_attr_t onednn_attr(dnnl_alg_kind_t alg) {
  dnnl_primitive_attr_t attr;
  ONEDNN_CHECK(dnnl_primitive_attr_create(&attr));
  if (alg != 0) {
    dnnl_post_ops_t post_ops;
    ONEDNN_CHECK(dnnl_post_ops_create(&post_ops));
    ONEDNN_CHECK(ONEDNN_ELTWISE(post_ops, alg));
    ONEDNN_CHECK(dnnl_primitive_attr_set_post_ops(attr, post_ops));
    ONEDNN_CHECK(dnnl_post_ops_destroy(post_ops));
  }
  return attr;
}

static inline dnnl_memory_t onednn_memory(onednn_md_ref md, void *handle) {
  dnnl_memory_t memory;
  ONEDNN_CHECK(dnnl_memory_create(&memory, md, onednn_engine, handle));
  return memory;
}

/* Points a memory at a caller's buffer (only when the address changes). */
static inline void onednn_bind(dnnl_memory_t memory, const void **bound, const void *buffer) {
  if (*bound != buffer) {
    ONEDNN_CHECK(dnnl_memory_set_data_handle(memory, (void *)buffer));
    *bound = buffer;
  }
}

static inline void onednn_run(dnnl_primitive_t primitive, int nargs, const dnnl_exec_arg_t *args) {
  ONEDNN_CHECK(dnnl_primitive_execute(primitive, onednn_stream, nargs, args));
  ONEDNN_CHECK(dnnl_stream_wait(onednn_stream));
}

/* A layout as oneDNN names it: dims by stride, outermost first, blocked ones upper-case, then
   the inner blocks ("acdb" is NHWC, "aBcd8b" is NCHW with channels in blocks of 8). */
static inline void onednn_layout(onednn_md_ref md, char *text, size_t size) {
  int ndims = 0, nblks = 0;
  const dnnl_dim_t *strides = NULL, *blks = NULL, *idxs = NULL;
#if DNNL_VERSION_MAJOR >= 3
  dnnl_format_kind_t kind;
  dnnl_dims_t *s, *b, *x;
  dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &ndims);
  dnnl_memory_desc_query(md, dnnl_query_format_kind, &kind);
  if (kind != dnnl_blocked) {
    snprintf(text, size, "opaque");
    return;
  }
  dnnl_memory_desc_query(md, dnnl_query_strides, &s);
  dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &nblks);
  dnnl_memory_desc_query(md, dnnl_query_inner_blks, &b);
  dnnl_memory_desc_query(md, dnnl_query_inner_idxs, &x);
  strides = *s;
  blks = *b;
  idxs = *x;
#else
  if (md->format_kind != dnnl_blocked) {
    snprintf(text, size, "opaque");
    return;
  }
  ndims = md->ndims;
  strides = md->format_desc.blocking.strides;
  nblks = md->format_desc.blocking.inner_nblks;
  blks = md->format_desc.blocking.inner_blks;
  idxs = md->format_desc.blocking.inner_idxs;
#endif
  int order[DNNL_MAX_NDIMS], used = 0;
  for (int i = 0; i < ndims; i++) order[i] = i;
  for (int i = 0; i < ndims; i++)
    for (int j = i + 1; j < ndims; j++)
      if (strides[order[j]] > strides[order[i]]) {
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
  for (int i = 0; i < ndims && used + 1 < (int)size; i++) {
    int blocked = 0;
    for (int b = 0; b < nblks; b++) blocked |= idxs[b] == order[i];
    text[used++] = (char)((blocked ? 'A' : 'a') + order[i]);
  }
  text[used] = '\0';
  for (int b = 0; b < nblks; b++) {
    size_t length = strlen(text);
    snprintf(text + length, size - length, "%lld%c", (long long)blks[b], (char)('a' + idxs[b]));
  }
}

/* Prints a note: oneDNN's version and ISA, the primitive's implementation, and layouts. */
static inline void onednn_note(const char *what, const_dnnl_primitive_desc_t pd, const char *layouts) {
  const dnnl_version_t *version = dnnl_version();
  const char *impl = "?";
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  fprintf(stderr, "@NOTE@%s: %s%s%s (oneDNN %d.%d.%d, %s)\n", what, impl, layouts[0] ? ", " : "", layouts,
          version->major, version->minor, version->patch, dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
}
"#;

/// The oneDNN eltwise algorithm of an activation (`0` for none).
fn eltwise(activation: Activation) -> &'static str {
    match activation {
        Activation::Identity => "(dnnl_alg_kind_t)0",
        Activation::Relu => "dnnl_eltwise_relu",
        Activation::Gelu => "dnnl_eltwise_gelu_tanh",
    }
}

/// The C of the bias pieces: the parameter, the `md`, the argument of a primitive
/// descriptor, the memory, the binding and the execution argument.
struct BiasC {
    param: &'static str,
    md_arg: &'static str,
    memory: &'static str,
    bind: &'static str,
    arg: &'static str,
}

impl BiasC {
    /// The start of a unit's function: its parameters (the two `inputs`, the bias if any, `out`),
    /// its setup on the first call, and each buffer bound to its memory `<memory>_src`,
    /// `<memory>_wei`, (the bias's,) `<memory>_dst`.
    fn call_start(&self, inputs: [&str; 2], memory: &str, types: [&str; 3]) -> String {
        let [src, wei] = inputs;
        let [src_t, wei_t, dst_t] = types;
        format!(
            "void @FUNCTION@(const {src_t} *{src}, const {wei_t} *{wei}, {param}{dst_t} *out) {{
  if (prim == NULL && @FUNCTION@_setup() != 0) exit(3);
  onednn_bind({memory}_src, &bound_src, {src});
  onednn_bind({memory}_wei, &bound_wei, {wei});
{bind}  onednn_bind({memory}_dst, &bound_dst, out);",
            param = self.param,
            bind = self.bind,
        )
    }

    /// The execution of the primitive on `mem_src`, `mem_wei`, the bias (if any) and `mem_dst`.
    fn execute(&self) -> String {
        format!(
            "  const dnnl_exec_arg_t args[] = {{{{DNNL_ARG_SRC, mem_src}}, {{DNNL_ARG_WEIGHTS, mem_wei}}, \
             {arg}{{DNNL_ARG_DST, mem_dst}}}};
  onednn_run(prim, (int)(sizeof args / sizeof args[0]), args);",
            arg = self.arg,
        )
    }
}

/// The end of the setup function of a primitive that may take a bias: the bias's names (which
/// every such unit declares) marked used, the descriptor and attributes freed.
const SETUP_END: &str = "  (void)bias_md;
  (void)mem_bias;
  (void)bound_bias;
  ONEDNN_CHECK(dnnl_primitive_desc_destroy(pd));
  ONEDNN_CHECK(dnnl_primitive_attr_destroy(attr));
  return 0;
}
";

/// The [`fill`] values a matmul or convolution unit with `epilogue` shares: `ALG`, `EPILOGUE`,
/// `BIAS_MD`, `BIAS_MEMORY`, `SETUP_END`, and `CALL_START` and `EXECUTE` (see
/// [`BiasC::call_start`] for `inputs` and `memory`).
fn primitive_values(
    epilogue: Epilogue,
    inputs: [&str; 2],
    memory: &str,
    types: [&str; 3],
) -> Vec<(&'static str, String)> {
    let bias = bias_c(epilogue);
    let fused = if epilogue.is_none() { String::new() } else { format!(" + {epilogue} (fused)") };
    vec![
        ("ALG", eltwise(epilogue.activation).into()),
        ("EPILOGUE", fused),
        ("BIAS_MD", bias.md_arg.into()),
        ("BIAS_MEMORY", bias.memory.into()),
        ("SETUP_END", SETUP_END.into()),
        ("CALL_START", bias.call_start(inputs, memory, types)),
        ("EXECUTE", bias.execute()),
    ]
}

fn bias_c(epilogue: Epilogue) -> BiasC {
    if epilogue.bias {
        BiasC {
            param: "const float *bias, ",
            md_arg: "ONEDNN_REF(bias_md)",
            memory: "  mem_bias = onednn_memory(ONEDNN_REF(bias_md), DNNL_MEMORY_NONE);\n",
            bind: "  onednn_bind(mem_bias, &bound_bias, bias);\n",
            arg: "{DNNL_ARG_BIAS, mem_bias}, ",
        }
    } else {
        BiasC { param: "", md_arg: "NULL", memory: "", bind: "", arg: "" }
    }
}

/// oneDNN's name of an element type the baselines pass it.
fn data_type(t: CType) -> &'static str {
    match t {
        CType::U8 => "dnnl_u8",
        CType::I8 => "dnnl_s8",
        CType::I32 => "dnnl_s32",
        _ => "dnnl_f32",
    }
}

/// The input types of a quantized matmul oneDNN computes exactly (u8 or s8 activations, s8
/// weights, s32 output), if `p` is one.
fn quantized(p: &MatmulProblem) -> Option<[CType; 2]> {
    p.inputs.filter(|i| matches!(i, [CType::U8 | CType::I8, CType::I8]) && p.dtype == CType::I32)
}

/// Whether `p` is a requantized matmul oneDNN computes: u8 or s8 activations, s8 weights, a u8
/// or s8 output.
fn requantized(p: &MatmulProblem) -> bool {
    p.epilogue == Epilogue::REQUANT
        && matches!(p.inputs, Some([CType::U8 | CType::I8, CType::I8]))
        && matches!(p.dtype, CType::U8 | CType::I8)
}

/// A requantized matmul: oneDNN's int8 matmul with an 8-bit destination, the per-column scales as
/// output scales (mask 2, one per column of the 2-D destination) and the per-column zero points
/// as a binary add post-op of an f32 `{1, N}` tensor. oneDNN then computes
/// `saturate(round_half_even(f32(acc) * scale[n] + zero_point[n]))` in f32: the zero point is
/// added before rounding, which [`reference`](super::reference) accepts on the outputs where it
/// differs.
///
/// The scales are given when the primitive is created, as constants (weights' scales are
/// constants of a model): oneDNN 2.6 picks its brgemm kernel (`brg:avx512_core_vnni`) then, and
/// `gemm:jit` with scales given at run time. So the primitive is created on the first call, with
/// that call's scales, and again on a call whose scales differ (compared each call). A per-column
/// dst zero point (`dnnl_primitive_attr_set_zero_points`, mask 2) runs only the slow reference
/// implementation (`ref_int8`), hence the post-op; the zero points are converted to f32 on each
/// call. The unit needs oneDNN 2.x (3.x has no output scales).
fn matmul_requant(p: &MatmulProblem) -> String {
    let [src, wei] = p.input_types();
    fill(
        r#"
#if DNNL_VERSION_MAJOR >= 3
#error "the requantized matmul baseline uses oneDNN 2.x output scales"
#endif
static dnnl_primitive_t prim;
static dnnl_memory_t mem_src, mem_wei, mem_zero_point, mem_dst;
static const void *bound_src, *bound_wei, *bound_dst;
static float prim_scale[@N@], zero_point_f32[@N@];

int @FUNCTION@_setup(void) {
  onednn_start();
  return 0;
}

/* The primitive for these scales. */
static void @FUNCTION@_create(const float *scale) {
  if (prim != NULL) {
    ONEDNN_CHECK(dnnl_primitive_destroy(prim));
    ONEDNN_CHECK(dnnl_memory_destroy(mem_src));
    ONEDNN_CHECK(dnnl_memory_destroy(mem_wei));
    ONEDNN_CHECK(dnnl_memory_destroy(mem_zero_point));
    ONEDNN_CHECK(dnnl_memory_destroy(mem_dst));
    bound_src = bound_wei = bound_dst = NULL;
  }
  onednn_start();
  memcpy(prim_scale, scale, sizeof prim_scale);
  dnnl_dims_t src_dims = {@M@, @K@}, wei_dims = {@K@, @N@}, row_dims = {1, @N@}, dst_dims = {@M@, @N@};
  onednn_md src_md = onednn_md_typed(2, src_dims, @SRC_TYPE@, dnnl_ab);
  onednn_md wei_md = onednn_md_typed(2, wei_dims, @WEI_TYPE@, dnnl_ab);
  onednn_md zero_point_md = onednn_md_tag(2, row_dims, dnnl_ab);
  onednn_md dst_md = onednn_md_typed(2, dst_dims, @DST_TYPE@, dnnl_ab);
  dnnl_primitive_attr_t attr = onednn_attr((dnnl_alg_kind_t)0);
  ONEDNN_CHECK(dnnl_primitive_attr_set_output_scales(attr, @N@, 1 << 1, prim_scale));
  dnnl_post_ops_t post_ops;
  ONEDNN_CHECK(dnnl_post_ops_create(&post_ops));
  ONEDNN_CHECK(dnnl_post_ops_append_binary(post_ops, dnnl_binary_add, &zero_point_md));
  ONEDNN_CHECK(dnnl_primitive_attr_set_post_ops(attr, post_ops));
  ONEDNN_CHECK(dnnl_post_ops_destroy(post_ops));
  dnnl_matmul_desc_t desc;
  dnnl_primitive_desc_t pd;
  ONEDNN_CHECK(dnnl_matmul_desc_init(&desc, &src_md, &wei_md, NULL, &dst_md));
  ONEDNN_CHECK(dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine, NULL));
  ONEDNN_CHECK(dnnl_primitive_create(&prim, pd));
  mem_src = onednn_memory(&src_md, DNNL_MEMORY_NONE);
  mem_wei = onednn_memory(&wei_md, DNNL_MEMORY_NONE);
  mem_zero_point = onednn_memory(&zero_point_md, zero_point_f32);
  mem_dst = onednn_memory(&dst_md, DNNL_MEMORY_NONE);
  onednn_note("onednn: matmul + requant (output scales per column, zero points as a binary add)", pd, "");
  ONEDNN_CHECK(dnnl_primitive_desc_destroy(pd));
  ONEDNN_CHECK(dnnl_primitive_attr_destroy(attr));
}

void @FUNCTION@(const @SRC_C@ *lhs, const @WEI_C@ *rhs, const float *scale, const @DST_C@ *zero_point, @DST_C@ *out) {
  if (prim == NULL || memcmp(prim_scale, scale, sizeof prim_scale) != 0) @FUNCTION@_create(scale);
  for (int j = 0; j < @N@; j++) zero_point_f32[j] = (float)zero_point[j];
  onednn_bind(mem_src, &bound_src, lhs);
  onednn_bind(mem_wei, &bound_wei, rhs);
  onednn_bind(mem_dst, &bound_dst, out);
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, mem_src}, {DNNL_ARG_WEIGHTS, mem_wei},
                                  {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, mem_zero_point},
                                  {DNNL_ARG_DST, mem_dst}};
  onednn_run(prim, (int)(sizeof args / sizeof args[0]), args);
}
"#,
        &[
            matmul_values(p),
            vec![
                ("SRC_C", src.c_name().into()),
                ("WEI_C", wei.c_name().into()),
                ("DST_C", p.dtype.c_name().into()),
            ],
        ]
        .concat(),
    )
}

/// The [`fill`] values of a matmul's sizes and oneDNN types: `M`, `K`, `N`, `SRC_TYPE`,
/// `WEI_TYPE`, `DST_TYPE`.
fn matmul_values(p: &MatmulProblem) -> Vec<(&'static str, String)> {
    let [src, wei] = p.input_types();
    vec![
        ("M", p.m.to_string()),
        ("K", p.k.to_string()),
        ("N", p.n.to_string()),
        ("SRC_TYPE", data_type(src).into()),
        ("WEI_TYPE", data_type(wei).into()),
        ("DST_TYPE", data_type(p.dtype).into()),
    ]
}

/// The matmul primitive on row-major operands of the problem's types: f32, or a quantized
/// matmul (u8 or s8 times s8 into s32, oneDNN's int8 matmul, which packs its weights on each call
/// as the row-major `ab` weights ask).
fn matmul(p: &MatmulProblem) -> String {
    let [src, wei] = p.input_types();
    fill(
        r#"
static dnnl_primitive_t prim;
static dnnl_memory_t mem_src, mem_wei, mem_bias, mem_dst;
static const void *bound_src, *bound_wei, *bound_bias, *bound_dst;

int @FUNCTION@_setup(void) {
  if (prim != NULL) return 0;
  onednn_start();
  dnnl_dims_t src_dims = {@M@, @K@}, wei_dims = {@K@, @N@}, bias_dims = {1, @N@}, dst_dims = {@M@, @N@};
  onednn_md src_md = onednn_md_typed(2, src_dims, @SRC_TYPE@, dnnl_ab);
  onednn_md wei_md = onednn_md_typed(2, wei_dims, @WEI_TYPE@, dnnl_ab);
  onednn_md bias_md = onednn_md_tag(2, bias_dims, dnnl_ab);
  onednn_md dst_md = onednn_md_typed(2, dst_dims, @DST_TYPE@, dnnl_ab);
  dnnl_primitive_attr_t attr = onednn_attr(@ALG@);
  dnnl_primitive_desc_t pd;
#if DNNL_VERSION_MAJOR >= 3
  ONEDNN_CHECK(dnnl_matmul_primitive_desc_create(&pd, onednn_engine, ONEDNN_REF(src_md), ONEDNN_REF(wei_md),
                                                 @BIAS_MD@, ONEDNN_REF(dst_md), attr));
#else
  dnnl_matmul_desc_t desc;
  ONEDNN_CHECK(dnnl_matmul_desc_init(&desc, ONEDNN_REF(src_md), ONEDNN_REF(wei_md), @BIAS_MD@, ONEDNN_REF(dst_md)));
  ONEDNN_CHECK(dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine, NULL));
#endif
  ONEDNN_CHECK(dnnl_primitive_create(&prim, pd));
  mem_src = onednn_memory(ONEDNN_REF(src_md), DNNL_MEMORY_NONE);
  mem_wei = onednn_memory(ONEDNN_REF(wei_md), DNNL_MEMORY_NONE);
  mem_dst = onednn_memory(ONEDNN_REF(dst_md), DNNL_MEMORY_NONE);
@BIAS_MEMORY@  onednn_note("onednn: matmul@EPILOGUE@", pd, "");
@SETUP_END@
@CALL_START@
@EXECUTE@
}
"#,
        &[
            matmul_values(p),
            primitive_values(
                p.epilogue,
                ["lhs", "rhs"],
                "mem",
                [src.c_name(), wei.c_name(), p.dtype.c_name()],
            ),
        ]
        .concat(),
    )
}

/// Whether a convolution uses the problem's layouts or lets oneDNN choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Formats {
    Given,
    Any,
}

fn conv(p: &ConvProblem, formats: Formats) -> String {
    let activation_tag = match p.layout {
        ActivationLayout::Nchw => "dnnl_nchw",
        ActivationLayout::Nhwc => "dnnl_nhwc",
    };
    let filter_tag = match p.filter_layout {
        FilterLayout::Oihw => "dnnl_oihw",
        FilterLayout::Hwio => "dnnl_hwio",
        FilterLayout::Ohwi => "dnnl_ohwi",
    };
    let any = formats == Formats::Any;
    let [src, wei] = p.input_types();
    let chosen = |tag: &str| if any { "dnnl_format_tag_any".to_string() } else { tag.to_string() };
    fill(
        r#"
static dnnl_primitive_t prim;
/* The caller's buffers (user_*) and, with chosen layouts, oneDNN's (mem_*) and the reorders. */
static dnnl_memory_t user_src, user_wei, user_dst, mem_src, mem_wei, mem_bias, mem_dst;
static dnnl_primitive_t reorder_src, reorder_wei, reorder_dst;
static const void *bound_src, *bound_wei, *bound_bias, *bound_dst, *reordered_wei;

/* The memory a primitive reads or writes for a caller's buffer in layout `user`: the buffer
   itself if oneDNN chose that layout, else a buffer of its own and a reorder. */
static dnnl_memory_t onednn_side(onednn_md_ref user, onednn_md_ref chosen, int into_chosen, dnnl_memory_t user_memory,
                                 dnnl_primitive_t *reorder) {
  if (dnnl_memory_desc_equal(user, chosen)) {
    *reorder = NULL;
    return user_memory;
  }
  dnnl_primitive_desc_t pd;
  if (into_chosen) {
    ONEDNN_CHECK(dnnl_reorder_primitive_desc_create(&pd, user, onednn_engine, chosen, onednn_engine, NULL));
  } else {
    ONEDNN_CHECK(dnnl_reorder_primitive_desc_create(&pd, chosen, onednn_engine, user, onednn_engine, NULL));
  }
  ONEDNN_CHECK(dnnl_primitive_create(reorder, pd));
  ONEDNN_CHECK(dnnl_primitive_desc_destroy(pd));
  return onednn_memory(chosen, DNNL_MEMORY_ALLOCATE);
}

static void onednn_reorder(dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to) {
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  onednn_run(reorder, 2, args);
}

int @FUNCTION@_setup(void) {
  if (prim != NULL) return 0;
  onednn_start();
  dnnl_dims_t src_dims = {@N@, @C@, @H@, @W@}, wei_dims = {@K@, @C@, @R@, @S@}, bias_dims = {@K@};
  dnnl_dims_t dst_dims = {@N@, @K@, @OH@, @OW@};
  dnnl_dims_t strides = {@SH@, @SW@}, dilates = {@DH@ - 1, @DW@ - 1};
  dnnl_dims_t padding_l = {@PT@, @PL@}, padding_r = {@PB@, @PR@};
  onednn_md user_src_md = onednn_md_typed(4, src_dims, @SRC_TYPE@, @ACT_TAG@);
  onednn_md user_wei_md = onednn_md_typed(4, wei_dims, @WEI_TYPE@, @FILTER_TAG@);
  onednn_md user_dst_md = onednn_md_typed(4, dst_dims, @DST_TYPE@, @ACT_TAG@);
  onednn_md src_md = onednn_md_typed(4, src_dims, @SRC_TYPE@, @SRC_TAG@);
  onednn_md wei_md = onednn_md_typed(4, wei_dims, @WEI_TYPE@, @WEI_TAG@);
  onednn_md dst_md = onednn_md_typed(4, dst_dims, @DST_TYPE@, @SRC_TAG@);
  onednn_md bias_md = onednn_md_tag(1, bias_dims, dnnl_a);
  dnnl_primitive_attr_t attr = onednn_attr(@ALG@);
  dnnl_primitive_desc_t pd;
#if DNNL_VERSION_MAJOR >= 3
  ONEDNN_CHECK(dnnl_convolution_forward_primitive_desc_create(
      &pd, onednn_engine, dnnl_forward_inference, dnnl_convolution_auto, ONEDNN_REF(src_md), ONEDNN_REF(wei_md),
      @BIAS_MD@, ONEDNN_REF(dst_md), strides, dilates, padding_l, padding_r, attr));
#else
  dnnl_convolution_desc_t desc;
  ONEDNN_CHECK(dnnl_dilated_convolution_forward_desc_init(
      &desc, dnnl_forward_inference, dnnl_convolution_auto, ONEDNN_REF(src_md), ONEDNN_REF(wei_md), @BIAS_MD@,
      ONEDNN_REF(dst_md), strides, dilates, padding_l, padding_r));
  ONEDNN_CHECK(dnnl_primitive_desc_create(&pd, &desc, attr, onednn_engine, NULL));
#endif
  ONEDNN_CHECK(dnnl_primitive_create(&prim, pd));
  onednn_md_ref chosen_src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  onednn_md_ref chosen_wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  onednn_md_ref chosen_dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  user_src = onednn_memory(ONEDNN_REF(user_src_md), DNNL_MEMORY_NONE);
  user_wei = onednn_memory(ONEDNN_REF(user_wei_md), DNNL_MEMORY_NONE);
  user_dst = onednn_memory(ONEDNN_REF(user_dst_md), DNNL_MEMORY_NONE);
  mem_src = onednn_side(ONEDNN_REF(user_src_md), chosen_src, 1, user_src, &reorder_src);
  mem_wei = onednn_side(ONEDNN_REF(user_wei_md), chosen_wei, 1, user_wei, &reorder_wei);
  mem_dst = onednn_side(ONEDNN_REF(user_dst_md), chosen_dst, 0, user_dst, &reorder_dst);
@BIAS_MEMORY@  char layouts[256], src_text[64], wei_text[64], dst_text[64];
  onednn_layout(chosen_src, src_text, sizeof src_text);
  onednn_layout(chosen_wei, wei_text, sizeof wei_text);
  onednn_layout(chosen_dst, dst_text, sizeof dst_text);
  char how[160] = "";
  if (@ANY@) {
    snprintf(how, sizeof how, " (chosen by oneDNN; %s%s%s%s)",
             reorder_src != NULL ? "input reordered in each call, " : "",
             reorder_dst != NULL ? "output reordered back in each call, " : "",
             reorder_wei != NULL ? "weights reordered once" : "weights as given",
             reorder_src == NULL && reorder_dst == NULL ? ", activations as given" : "");
  }
  snprintf(layouts, sizeof layouts, "layouts src %s, weights %s, dst %s%s", src_text, wei_text, dst_text, how);
  onednn_note("@LABEL@: conv@EPILOGUE@", pd, layouts);
@SETUP_END@
@CALL_START@
  if (reorder_wei != NULL && reordered_wei != filter) {
    onednn_reorder(reorder_wei, user_wei, mem_wei);
    reordered_wei = filter;
  }
  if (reorder_src != NULL) onednn_reorder(reorder_src, user_src, mem_src);
@EXECUTE@
  if (reorder_dst != NULL) onednn_reorder(reorder_dst, mem_dst, user_dst);
}
"#,
        &[
            conv_window_values(p),
            vec![
                ("C", p.in_channels.to_string()),
                ("K", p.out_channels.to_string()),
                ("R", p.kernel_h.to_string()),
                ("S", p.kernel_w.to_string()),
                ("OH", p.out_h().to_string()),
                ("OW", p.out_w().to_string()),
                ("ACT_TAG", activation_tag.into()),
                ("FILTER_TAG", filter_tag.into()),
                ("SRC_TAG", chosen(activation_tag)),
                ("WEI_TAG", chosen(filter_tag)),
                ("ANY", if any { "1" } else { "0" }.into()),
                ("LABEL", if any { "onednn-any" } else { "onednn" }.into()),
                ("SRC_TYPE", data_type(src).into()),
                ("WEI_TYPE", data_type(wei).into()),
                ("DST_TYPE", data_type(p.out_type()).into()),
            ],
            primitive_values(
                p.epilogue,
                ["input", "filter"],
                "user",
                [src.c_name(), wei.c_name(), p.out_type().c_name()],
            ),
        ]
        .concat(),
    )
}

fn softmax(p: &SoftmaxProblem) -> String {
    fill(
        r#"
static dnnl_primitive_t prim;
static dnnl_memory_t mem_src, mem_dst;
static const void *bound_src, *bound_dst;

int @FUNCTION@_setup(void) {
  if (prim != NULL) return 0;
  onednn_start();
  dnnl_dims_t dims = {@ROWS@, @COLS@};
  onednn_md src_md = onednn_md_tag(2, dims, dnnl_ab);
  onednn_md dst_md = onednn_md_tag(2, dims, dnnl_ab);
  dnnl_primitive_desc_t pd;
#if DNNL_VERSION_MAJOR >= 3
  ONEDNN_CHECK(dnnl_softmax_forward_primitive_desc_create(&pd, onednn_engine, dnnl_forward_inference,
                                                          dnnl_softmax_accurate, ONEDNN_REF(src_md),
                                                          ONEDNN_REF(dst_md), 1, NULL));
#else
  dnnl_softmax_v2_desc_t desc;
  ONEDNN_CHECK(dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference, dnnl_softmax_accurate,
                                                 ONEDNN_REF(src_md), ONEDNN_REF(dst_md), 1));
  ONEDNN_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, onednn_engine, NULL));
#endif
  ONEDNN_CHECK(dnnl_primitive_create(&prim, pd));
  mem_src = onednn_memory(ONEDNN_REF(src_md), DNNL_MEMORY_NONE);
  mem_dst = onednn_memory(ONEDNN_REF(dst_md), DNNL_MEMORY_NONE);
  onednn_note("onednn: softmax", pd, "");
  ONEDNN_CHECK(dnnl_primitive_desc_destroy(pd));
  return 0;
}

void @FUNCTION@(const float *input, float *out) {
  if (prim == NULL && @FUNCTION@_setup() != 0) exit(3);
  onednn_bind(mem_src, &bound_src, input);
  onednn_bind(mem_dst, &bound_dst, out);
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, mem_src}, {DNNL_ARG_DST, mem_dst}};
  onednn_run(prim, 2, args);
}
"#,
        &[("ROWS", p.rows.to_string()), ("COLS", p.cols.to_string())],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::touch;

    #[test]
    fn a_prefix_needs_the_header_and_the_library() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(locate_in(dir.path()), Err("no include/dnnl.h and no lib/libdnnl.so*".into()));
        touch(dir.path(), "include/dnnl.h");
        touch(dir.path(), "lib/libdnnl.so.3");
        let found = locate_in(dir.path()).expect("usable");
        let OneDnnInstall::Prefix { include, library } = &found else { panic!("a prefix") };
        assert_eq!(
            (include.clone(), library.clone()),
            (dir.path().join("include"), dir.path().join("lib/libdnnl.so.3"))
        );
        let (flags, link) = found.flags();
        assert_eq!(flags, [format!("-I{}", dir.path().join("include").display())]);
        assert_eq!(link[1], format!("-Wl,-rpath,{}", dir.path().join("lib").display()));
    }
}
