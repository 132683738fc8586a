//! Harnesses: a C `main` wrapped around a kernel's translation unit, for verification (read
//! inputs, run once, write outputs) or benchmarking (seeded inputs, warm-up, calibrated samples).
//!
//! A kernel is described by a [`KernelSignature`]: its name and its pointer parameters in call
//! order, each with an element type, an element count and a role. The kernel is called as
//! `name(p0, p1, ..., out)`; inputs are `const T *`. The harness does not know what the kernel
//! computes: comparing outputs with a reference is the caller's job.
//!
//! Data crosses the process boundary as raw little-endian files (one per parameter), and inputs
//! can instead be generated from a seed by the same generator in C and in Rust
//! ([`Buffer::from_seed`]), so a Rust-side baseline sees exactly the C program's inputs.

mod bench_main;
mod buffer;
mod prelude;
mod verify;

pub use bench_main::{BenchEntry, SERVE_READY_PREFIX, SampleLine, bench_program_source, parse_sample_line};
pub use buffer::Buffer;
pub use verify::{
    VerifyInputs, VerifyRun, run_verify, run_verify_selected, verify_many_program_source,
    verify_program_source,
};

use std::fmt;

use serde::Serialize;

use crate::error::CodegenError;

/// The C element type of a kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CType {
    /// `float`.
    F32,
    /// `uint32_t`.
    U32,
    /// `int32_t`.
    I32,
    /// `uint16_t`.
    U16,
    /// `int16_t`.
    I16,
    /// `uint8_t`.
    U8,
    /// `int8_t`.
    I8,
    /// bfloat16, stored as its bits in a `uint16_t`.
    Bf16,
}

impl CType {
    /// Every element type.
    pub const ALL: [CType; 8] =
        [CType::F32, CType::U32, CType::I32, CType::U16, CType::I16, CType::U8, CType::I8, CType::Bf16];

    /// The C type name, e.g. `float` or `uint16_t` (for bf16).
    pub fn c_name(self) -> &'static str {
        match self {
            CType::F32 => "float",
            CType::U32 => "uint32_t",
            CType::I32 => "int32_t",
            CType::U16 | CType::Bf16 => "uint16_t",
            CType::I16 => "int16_t",
            CType::U8 => "uint8_t",
            CType::I8 => "int8_t",
        }
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            CType::F32 | CType::U32 | CType::I32 => 4,
            CType::U16 | CType::I16 | CType::Bf16 => 2,
            CType::U8 | CType::I8 => 1,
        }
    }

    /// The short name used in signatures and messages: `f32`, `u32`, ..., `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            CType::F32 => "f32",
            CType::U32 => "u32",
            CType::I32 => "i32",
            CType::U16 => "u16",
            CType::I16 => "i16",
            CType::U8 => "u8",
            CType::I8 => "i8",
            CType::Bf16 => "bf16",
        }
    }
}

impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the kernel reads a parameter, writes it, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ParamRole {
    /// Read only: passed as `const T *`, filled before the call.
    Input,
    /// Written only: zeroed (benchmarks) or filled with `0xff` bytes (verification) before the
    /// call, read back after it.
    Output,
    /// Read and written (e.g. an accumulating matmul's output): filled before, read back after.
    InOut,
}

impl ParamRole {
    /// Whether the kernel reads the parameter (its contents must be provided).
    pub fn is_read(self) -> bool {
        matches!(self, ParamRole::Input | ParamRole::InOut)
    }

    /// Whether the kernel writes the parameter (its contents are read back).
    pub fn is_written(self) -> bool {
        matches!(self, ParamRole::Output | ParamRole::InOut)
    }
}

/// One pointer parameter of a kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct KernelParam {
    /// The C parameter name (a C identifier), e.g. `lhs`.
    pub name: String,
    /// The element type.
    pub c_type: CType,
    /// How many elements the buffer holds (its layout's buffer size), at least 1.
    pub elements: usize,
    /// Whether the kernel reads or writes it.
    pub role: ParamRole,
}

impl KernelParam {
    /// A parameter from its parts.
    pub fn new(name: impl Into<String>, c_type: CType, elements: usize, role: ParamRole) -> Self {
        KernelParam { name: name.into(), c_type, elements, role }
    }

    /// Bytes in the buffer.
    pub fn bytes(&self) -> usize {
        self.elements * self.c_type.size_bytes()
    }

    /// The C declaration in a prototype: `const float *lhs` for an input, `float *out` else.
    pub fn c_declaration(&self) -> String {
        let qualifier = if self.role == ParamRole::Input { "const " } else { "" };
        format!("{qualifier}{} *{}", self.c_type.c_name(), self.name)
    }
}

/// A kernel's name and parameters, in call order.
///
/// # Invariants
/// Checked by [`KernelSignature::validate`], which every harness calls: the name and parameter
/// names are C identifiers not starting with `morello_` (the harness's prefix), parameter names
/// are distinct, every parameter has at least one element, and at least one is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct KernelSignature {
    /// The C function name.
    pub name: String,
    /// The pointer parameters, in call order.
    pub params: Vec<KernelParam>,
}

impl KernelSignature {
    /// A signature from its parts (validated when a harness is built).
    pub fn new(name: impl Into<String>, params: Vec<KernelParam>) -> Self {
        KernelSignature { name: name.into(), params }
    }

    /// The signature of a row-major matmul kernel `out[M][N] = lhs[M][K] * rhs[K][N]`
    /// (`lhs`, `rhs` inputs, `out` output).
    pub fn matmul(name: impl Into<String>, c_type: CType, m: usize, k: usize, n: usize) -> Self {
        KernelSignature::new(
            name,
            vec![
                KernelParam::new("lhs", c_type, m * k, ParamRole::Input),
                KernelParam::new("rhs", c_type, k * n, ParamRole::Input),
                KernelParam::new("out", c_type, m * n, ParamRole::Output),
            ],
        )
    }

    /// The same parameters under another function name (for a baseline with this call shape).
    pub fn renamed(&self, name: impl Into<String>) -> Self {
        KernelSignature { name: name.into(), params: self.params.clone() }
    }

    /// The C prototype, e.g. `void k(const float *lhs, const float *rhs, float *out)`.
    pub fn c_prototype(&self) -> String {
        let params: Vec<String> = self.params.iter().map(KernelParam::c_declaration).collect();
        format!("void {}({})", self.name, params.join(", "))
    }

    /// The C function-pointer type's parameter list without names, e.g.
    /// `const float *, const float *, float *`.
    pub(crate) fn c_pointer_params(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let qualifier = if p.role == ParamRole::Input { "const " } else { "" };
                format!("{qualifier}{} *", p.c_type.c_name())
            })
            .collect();
        params.join(", ")
    }

    /// Checks the invariants.
    ///
    /// # Errors
    /// [`CodegenError::InvalidSignature`] saying which rule is broken.
    pub fn validate(&self) -> Result<(), CodegenError> {
        let invalid = |reason: String| Err(CodegenError::InvalidSignature { reason });
        check_identifier(&self.name, "kernel name")?;
        if self.params.is_empty() {
            return invalid(format!("kernel `{}` has no parameters", self.name));
        }
        for (index, param) in self.params.iter().enumerate() {
            check_identifier(&param.name, "parameter name")?;
            if param.elements == 0 {
                return invalid(format!("parameter `{}` has zero elements", param.name));
            }
            if param.elements.checked_mul(param.c_type.size_bytes()).is_none_or(|b| b > isize::MAX as usize) {
                return invalid(format!("parameter `{}` is too large", param.name));
            }
            if self.params[..index].iter().any(|p| p.name == param.name) {
                return invalid(format!("two parameters are named `{}`", param.name));
            }
        }
        if !self.params.iter().any(|p| p.role.is_written()) {
            return invalid(format!("kernel `{}` writes no parameter", self.name));
        }
        Ok(())
    }
}

/// Checks that `name` is a C identifier the harness may use.
pub(crate) fn check_identifier(name: &str, what: &str) -> Result<(), CodegenError> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !starts_well || !rest_ok {
        return Err(CodegenError::InvalidSignature {
            reason: format!("{what} `{name}` is not a C identifier"),
        });
    }
    if name.starts_with("morello_") || C_RESERVED.contains(&name) {
        return Err(CodegenError::InvalidSignature {
            reason: format!(
                "{what} `{name}` is reserved (C keyword, `main`, or the harness's `morello_` prefix)"
            ),
        });
    }
    Ok(())
}

/// Names a kernel or parameter may not take: C keywords and what the harness defines.
const C_RESERVED: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "main", "argc", "argv",
];

#[cfg(test)]
mod tests;
