//! The `gemm` baseline: a pure-Rust GEMM, timed in the benchmark driver.
//!
//! It calls `ndarray::linalg::general_mat_mul`, whose f32 kernel is the `matrixmultiply` crate
//! (a pure-Rust, BLIS-style GEMM with AVX2/FMA and AVX-512 micro-kernels chosen at run time).
//! `matrixmultiply::sgemm` itself is an `unsafe fn` on raw pointers and the workspace forbids
//! `unsafe`, so ndarray's safe views are the way in. It runs on one thread.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};

use super::Problem;
use crate::bench::{PrepareRustKernel, RustKernel};
use morello_codegen::CodegenError;
use morello_codegen::harness::CType;

use crate::error::MeasureError;
use morello_codegen::harness::Buffer;

struct RustMatmul {
    m: usize,
    k: usize,
    n: usize,
    lhs: Vec<f32>,
    rhs: Vec<f32>,
    out: Vec<f32>,
}

impl RustKernel for RustMatmul {
    fn run(&mut self) {
        // The shapes match the buffers' lengths, checked when the kernel was prepared.
        let lhs = ArrayView2::from_shape((self.m, self.k), &self.lhs).expect("lhs is m x k");
        let rhs = ArrayView2::from_shape((self.k, self.n), &self.rhs).expect("rhs is k x n");
        let mut out = ArrayViewMut2::from_shape((self.m, self.n), &mut self.out).expect("out is m x n");
        general_mat_mul(1.0f32, &lhs, &rhs, 0.0f32, &mut out);
    }

    fn written(&self) -> Vec<Buffer> {
        vec![Buffer::F32(self.out.clone())]
    }
}

/// The preparation of the `gemm` baseline for an f32 matmul without epilogue, or why it does
/// not compute `problem`.
///
/// # Errors
/// "no convolution", "no u32 matmul", "no epilogue".
pub(super) fn prepare(problem: &Problem) -> Result<PrepareRustKernel, String> {
    let problem = match problem {
        Problem::Matmul(p) if p.dtype != CType::F32 => return Err(format!("no {} matmul", p.types_name())),
        Problem::Matmul(p) if !p.epilogue.is_none() => return Err("no epilogue".into()),
        Problem::Matmul(p) => p,
        Problem::Conv(_) => return Err("no convolution".into()),
        Problem::Softmax(_) => return Err("no softmax".into()),
    };
    let (m, k, n) = (problem.m, problem.k, problem.n);
    Ok(Box::new(move |buffers: &[Buffer]| {
        let f32_param = |index: usize, name: &str, elements: usize| -> Result<Vec<f32>, MeasureError> {
            match buffers.get(index) {
                Some(Buffer::F32(v)) if v.len() == elements => Ok(v.clone()),
                _ => Err(CodegenError::BadBuffer {
                    param: name.to_string(),
                    reason: format!("the gemm baseline needs f32[{elements}]"),
                }
                .into()),
            }
        };
        let kernel = RustMatmul {
            m,
            k,
            n,
            lhs: f32_param(0, "lhs", m * k)?,
            rhs: f32_param(1, "rhs", k * n)?,
            out: f32_param(2, "out", m * n)?,
        };
        Ok(Box::new(kernel) as Box<dyn RustKernel>)
    }))
}
