//! The `gemm` baseline: a pure-Rust GEMM, timed in the benchmark driver.
//!
//! It calls `faer::linalg::matmul::matmul`, whose f32 kernels are the `gemm` crate family
//! (`gemm`, `nano-gemm` for tiny shapes, `private-gemm-x86` with AVX-512 on x86). `gemm::gemm`
//! itself is an `unsafe fn` on raw pointers, and so is `matrixmultiply::sgemm`; the workspace
//! forbids `unsafe`, so faer's safe matrix views are the way in. One thread runs `Par::Seq`;
//! more run `Par::rayon(threads)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use super::MatmulProblem;
use crate::bench::{PrepareRustKernel, RustKernel};
use crate::error::CodegenError;
use crate::harness::Buffer;

struct FaerMatmul {
    m: usize,
    k: usize,
    n: usize,
    lhs: Vec<f32>,
    rhs: Vec<f32>,
    out: Vec<f32>,
    threads: usize,
}

impl RustKernel for FaerMatmul {
    fn run(&mut self) {
        let lhs = MatRef::from_row_major_slice(&self.lhs, self.m, self.k);
        let rhs = MatRef::from_row_major_slice(&self.rhs, self.k, self.n);
        let out = MatMut::from_row_major_slice_mut(&mut self.out, self.m, self.n);
        let par = if self.threads > 1 { Par::rayon(self.threads) } else { Par::Seq };
        matmul(out, Accum::Replace, lhs, rhs, 1.0f32, par);
    }

    fn written(&self) -> Vec<Buffer> {
        vec![Buffer::F32(self.out.clone())]
    }
}

/// The preparation of the `gemm` baseline for an f32 problem.
pub(super) fn prepare(problem: &MatmulProblem, threads: usize) -> PrepareRustKernel {
    let (m, k, n) = (problem.m, problem.k, problem.n);
    Box::new(move |buffers: &[Buffer]| {
        let f32_param = |index: usize, name: &str, elements: usize| -> Result<Vec<f32>, CodegenError> {
            match buffers.get(index) {
                Some(Buffer::F32(v)) if v.len() == elements => Ok(v.clone()),
                _ => Err(CodegenError::BadBuffer {
                    param: name.to_string(),
                    reason: format!("the gemm baseline needs f32[{elements}]"),
                }),
            }
        };
        let kernel = FaerMatmul {
            m,
            k,
            n,
            lhs: f32_param(0, "lhs", m * k)?,
            rhs: f32_param(1, "rhs", k * n)?,
            out: f32_param(2, "out", m * n)?,
            threads,
        };
        Ok(Box::new(kernel) as Box<dyn RustKernel>)
    })
}
