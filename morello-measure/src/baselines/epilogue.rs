//! The C of an epilogue for baselines that cannot fuse one: a matmul library (OpenBLAS, BLIS,
//! libxsmm, MKL) computes the product, then a second pass over the output adds the bias and
//! applies the activation, as a user of a BLAS would write it. The pass is compiled
//! `-O3 -march=native` with the baseline's unit.

use super::problem::{Activation, MatmulProblem, Problem};
use super::{CBaseline, Unavailable};

/// The C parameter list of a matmul baseline: `const float *lhs, const float *rhs, [const float
/// *bias,] float *out`.
pub(super) fn matmul_params(problem: &MatmulProblem) -> &'static str {
    if problem.epilogue.bias {
        "const float *lhs, const float *rhs, const float *bias, float *out"
    } else {
        "const float *lhs, const float *rhs, float *out"
    }
}

/// A C expression for `activation` of the float expression `v` (evaluated once or more, so `v`
/// must have no side effects).
pub(super) fn activation_c(activation: Activation, v: &str) -> String {
    match activation {
        Activation::Identity => v.to_string(),
        Activation::Relu => format!("({v} > 0.0f ? {v} : 0.0f)"),
        Activation::Gelu => format!(
            "(0.5f * {v} * (1.0f + tanhf(0.7978845608028654f * ({v} + 0.044715f * {v} * {v} * {v}))))"
        ),
    }
}

/// The second pass for `problem` inside the unit of `function`: a `static` definition (empty
/// without an epilogue) and the statement that calls it after the product (empty too).
pub(super) fn second_pass(function: &str, problem: &MatmulProblem) -> (String, String) {
    if problem.epilogue.is_none() {
        return (String::new(), String::new());
    }
    let (m, n) = (problem.m, problem.n);
    let bias = if problem.epilogue.bias { "v += bias[j];\n      " } else { "" };
    let bias_param = if problem.epilogue.bias { "const float *restrict bias, " } else { "" };
    let bias_arg = if problem.epilogue.bias { "bias, " } else { "" };
    let value = activation_c(problem.epilogue.activation, "v");
    let definition = format!(
        r#"
/* The epilogue ({epilogue}) as a second pass over the output. */
static void {function}_epilogue({bias_param}float *restrict out) {{
  for (long i = 0; i < {m}L; i++) {{
    for (long j = 0; j < {n}L; j++) {{
      float v = out[i * {n}L + j];
      {bias}out[i * {n}L + j] = {value};
    }}
  }}
}}
"#,
        epilogue = problem.epilogue,
    );
    (definition, format!("  {function}_epilogue({bias_arg}out);\n"))
}

/// Compiler flags and link arguments a unit with a second pass needs (`-march=native` for the
/// pass's vectorisation, libm for `tanhf`).
pub(super) fn pass_flags(problem: &MatmulProblem) -> (Vec<String>, Vec<String>) {
    if problem.epilogue.is_none() {
        return (Vec::new(), Vec::new());
    }
    (vec!["-march=native".into()], vec!["-lm".into()])
}

/// A `cblas_sgemm` reached through the function pointer `pointer`, which the unit's `setup`
/// function fills with one library's own (MKL's loaded with `dlopen`, OpenBLAS's found with
/// `dladdr`), so that the name another linked library exports too cannot serve it: the pointer's
/// declaration (a line of the unit's state) and the statements computing `problem` through it.
pub(super) fn cblas_sgemm_pointer(pointer: &str, setup: &str, problem: &MatmulProblem) -> (String, String) {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let declaration =
        format!("typedef __typeof__(cblas_sgemm) {pointer}_fn;\nstatic {pointer}_fn *{pointer};\n");
    let call = format!(
        "  if ({pointer} == NULL && {setup}() != 0) exit(3);\n  {pointer}(CblasRowMajor, CblasNoTrans, \
         CblasNoTrans, {m}, {n}, {k}, 1.0f, lhs, {k}, rhs, {n}, 0.0f, out, {n});\n"
    );
    (declaration, call)
}

/// A library matmul baseline (OpenBLAS, BLIS, libxsmm, MKL): what its unit has of its own around
/// the call of the library. [`library_baseline`] writes the rest: the function, its parameters
/// and the epilogue (if any) as a second pass.
#[derive(Debug, Default)]
pub(super) struct LibraryMatmul<'a> {
    /// Its label, e.g. `openblas`.
    pub(super) label: &'static str,
    /// What the unit's first comment names, e.g. `OpenBLAS cblas_sgemm`.
    pub(super) what: &'a str,
    /// The headers it includes besides `<math.h>`.
    pub(super) headers: &'a [&'a str],
    /// Its C before the function (static state and the setup function), if any.
    pub(super) state: String,
    /// The setup function's name, if it has one.
    pub(super) setup: Option<&'static str>,
    /// The function's statements before the second pass (`lhs`, `rhs` and `out` in scope).
    pub(super) body: String,
    /// Compiler flags besides the second pass's.
    pub(super) flags: Vec<String>,
    /// Link arguments, before the second pass's.
    pub(super) libraries: &'a [&'a str],
}

impl<'a> LibraryMatmul<'a> {
    /// A library that needs no state, setup or flags of its own: its `label`, the `what` of the
    /// unit's first comment, the `headers` it includes, the `libraries` it links and the `body`
    /// that calls it.
    pub(super) fn call(
        label: &'static str,
        what: &'a str,
        headers: &'a [&'a str],
        libraries: &'a [&'a str],
        body: String,
    ) -> Self {
        LibraryMatmul { label, what, headers, body, libraries, ..LibraryMatmul::default() }
    }
}

/// The unit of the library that `library` describes for an f32 matmul, or why the library does
/// not compute `problem` (see [`f32_matmul`](super::f32_matmul)).
pub(super) fn library_baselines(
    problem: &Problem,
    library: impl FnOnce(&MatmulProblem) -> LibraryMatmul<'static>,
) -> Result<Vec<CBaseline>, Unavailable> {
    let problem = super::f32_matmul(problem)?;
    Ok(vec![library_baseline(problem, library(problem))])
}

/// The unit of `library` for `problem`.
pub(super) fn library_baseline(problem: &MatmulProblem, library: LibraryMatmul) -> CBaseline {
    let LibraryMatmul { label, what, headers, state, setup, body, flags, libraries } = library;
    let function = super::function_name(label);
    let (m, k, n) = (problem.m, problem.k, problem.n);
    let (pass, call_pass) = second_pass(&function, problem);
    let params = matmul_params(problem);
    let includes: String = headers.iter().map(|h| format!("#include <{h}>\n")).collect();
    let source = format!(
        r#"/* morello baseline: {what}, row-major {m}x{k} * {k}x{n}. */
#include <math.h>
{includes}{pass}
{state}void {function}({params}) {{
{body}{call_pass}}}
"#
    );
    let (mut all_flags, pass_link) = pass_flags(problem);
    all_flags.extend(flags);
    let link_args = libraries.iter().map(|l| l.to_string()).chain(pass_link).collect();
    let mut baseline = CBaseline::new(label, source, all_flags, link_args);
    baseline.setup = setup.map(str::to_string);
    baseline
}
