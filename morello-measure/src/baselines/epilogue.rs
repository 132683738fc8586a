//! The C of an epilogue for baselines that cannot fuse one: a matmul library (OpenBLAS, BLIS,
//! libxsmm, MKL) computes the product, then a second pass over the output adds the bias and
//! applies the activation, as a user of a BLAS would write it. The pass is compiled
//! `-O3 -march=native` with the baseline's unit.

use super::problem::{Activation, MatmulProblem};

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
