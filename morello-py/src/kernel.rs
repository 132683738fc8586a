//! `morello._morello.Library`: an implementation's C kernel built as a shared library for
//! Python's ctypes to load, and how each of its parameters maps to a numpy array.
//!
//! The kernel is `void kernel(T0 *p0, T1 *p1, ...)`, one pointer per spec operand in operand
//! order, each to the operand's whole buffer in its layout. For every parameter this says its
//! numpy dtype, whether the kernel reads or writes it, its logical shape, and where each logical
//! element lives in the buffer:
//!
//! ```text
//! strides   a layout of whole dims only (row-major, col-major, any order): element strides per
//!           logical dim, so a numpy view of the buffer is the tensor
//! offsets   a packed or odd-even layout: the buffer offset of every logical element in
//!           row-major order (little-endian u64), for numpy's fancy indexing
//! ```
//!
//! The library is verified before it is returned unless asked not to: the same C, compiled as a
//! program, is run on seeded inputs and compared with the reference interpreter (what `morello
//! run` does), so a wrong kernel is an error here, never an array of wrong numbers.

use morello_codegen::compiler::{Build, BuildDir};
use morello_codegen::{
    CProgram, CType, CompileOptions, Compiler, EmitConfig, OpenMp, ParamRole, SourceUnit, VerifyOptions,
    Warnings, emit_kernel, require_features, verify_impl,
};
use morello_core::imp::Impl;
use morello_core::isa::Architecture;
use morello_core::layout::PhysDim;
use morello_core::spec::TensorSpec;
use morello_core::target::Target;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::{bad_input, to_py};

/// The seed of the inputs a library is verified on (that of `morello run`).
const VERIFY_SEED: u64 = 1;

/// Where a parameter's logical elements are in its buffer.
#[derive(Debug, Clone)]
enum Placement {
    /// Element strides per logical dim.
    Strides(Vec<u64>),
    /// The offset of each logical element, row-major, as little-endian `u64` bytes.
    Offsets(Vec<u8>),
}

/// One pointer parameter of the kernel, as numpy sees it.
#[derive(Debug, Clone)]
struct Param {
    name: String,
    dtype: &'static str,
    role: &'static str,
    shape: Vec<u32>,
    elements: usize,
    placement: Placement,
}

/// A kernel built as a shared library (in a temporary directory that lives as long as this).
#[pyclass(module = "morello._morello", frozen)]
pub struct Library {
    build: Build,
    function: String,
    params: Vec<Param>,
    source: String,
    openmp: bool,
    max_abs_error: Option<f64>,
}

impl Library {
    /// Emits `imp`, verifies it (when `verify`), and builds it as a shared library.
    ///
    /// # Errors
    /// A target whose code this host cannot load or run, no C compiler, a kernel that does not
    /// compile, or one that computes the wrong result.
    pub fn build(py: Python<'_>, imp: &Impl, target: &Target, verify: bool) -> PyResult<Library> {
        if let Some(architecture) = target.architecture().filter(|a| Some(*a) != Architecture::host()) {
            return Err(bad_input(format!(
                "compile() loads the kernel into this process, but target {} is {architecture} code and this \
                 host is {}; verify its kernels here with `morello run --target {}` (under emulation) instead",
                target.name(),
                std::env::consts::ARCH,
                target.name()
            )));
        }
        let emitted = emit_kernel(imp, target, &EmitConfig::default()).map_err(to_py)?;
        require_features(&emitted.features).map_err(|e| {
            bad_input(format!(
                "the kernel for {} needs instructions this machine lacks: {e}; search with a target it runs \
                 (target=\"x86\" picks the best this host runs)",
                target.name()
            ))
        })?;
        let params = imp
            .spec
            .operands
            .iter()
            .zip(&emitted.signature.params)
            .map(|(operand, param)| {
                Ok(Param {
                    name: param.name.clone(),
                    dtype: numpy_dtype(param.c_type),
                    role: match param.role {
                        ParamRole::Input => "input",
                        ParamRole::Output => "output",
                        ParamRole::InOut => "inout",
                    },
                    shape: operand.shape.dims().to_vec(),
                    elements: param.elements,
                    placement: placement(operand)?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let (build, max_abs_error) = py.detach(|| -> PyResult<_> {
            let compiler = Compiler::find().map_err(to_py)?;
            let max_abs_error = if verify {
                let options =
                    VerifyOptions { seed: VERIFY_SEED, build_dir: BuildDir::Temporary, warnings: Warnings::Report };
                let verified = verify_impl(imp, target, &compiler, &options).map_err(to_py)?;
                if let Some(mismatch) = &verified.verification.mismatch {
                    return Err(bad_input(format!(
                        "the kernel does not compute its spec (verified against the reference interpreter, seed \
                         {VERIFY_SEED}): {mismatch}; please report this with the spec and target"
                    )));
                }
                Some(verified.verification.max_abs_error)
            } else {
                None
            };
            let program = CProgram { units: vec![SourceUnit::new("kernel", emitted.source.clone())], link_args: vec![] };
            let options =
                CompileOptions { features: emitted.features.clone(), openmp: emitted.openmp, warnings: Warnings::Report };
            let build = compiler.build_shared_library(&program, &options, &BuildDir::Temporary).map_err(to_py)?;
            Ok((build, max_abs_error))
        })?;
        Ok(Library {
            openmp: build.openmp() == OpenMp::Enabled,
            build,
            function: emitted.signature.name.clone(),
            params,
            source: emitted.source,
            max_abs_error,
        })
    }
}

#[pymethods]
impl Library {
    /// The shared library's path.
    #[getter]
    fn path(&self) -> String {
        self.build.binary().display().to_string()
    }

    /// The kernel function's name in the library.
    #[getter]
    fn function(&self) -> &str {
        &self.function
    }

    /// The C source it was built from.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// Whether its parallel loops run on OpenMP threads.
    #[getter]
    fn openmp(&self) -> bool {
        self.openmp
    }

    /// The largest error of the verification run against the reference (`None`: not verified).
    #[getter]
    fn max_abs_error(&self) -> Option<f64> {
        self.max_abs_error
    }

    /// The compiler's command lines.
    #[getter]
    fn commands(&self) -> Vec<String> {
        self.build.commands().to_vec()
    }

    /// One dict per parameter, in call order: `name`, `dtype` (a numpy dtype name, or `bfloat16`
    /// for bf16 bits in `uint16`), `role` (`input`, `output`, `inout`), `shape`, `elements` (of the
    /// buffer), and `strides` (elements per logical dim) or `offsets` (bytes of little-endian u64
    /// buffer offsets of the logical elements, row-major).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.params
            .iter()
            .map(|p| {
                let dict = PyDict::new(py);
                dict.set_item("name", &p.name)?;
                dict.set_item("dtype", p.dtype)?;
                dict.set_item("role", p.role)?;
                dict.set_item("shape", &p.shape)?;
                dict.set_item("elements", p.elements)?;
                match &p.placement {
                    Placement::Strides(strides) => dict.set_item("strides", strides)?,
                    Placement::Offsets(offsets) => dict.set_item("offsets", PyBytes::new(py, offsets))?,
                }
                Ok(dict)
            })
            .collect()
    }
}

/// The numpy dtype name of a C element type (`bfloat16`: bits in `uint16`, converted in Python).
fn numpy_dtype(c_type: CType) -> &'static str {
    match c_type {
        CType::F32 => "float32",
        CType::U32 => "uint32",
        CType::I32 => "int32",
        CType::U16 => "uint16",
        CType::I16 => "int16",
        CType::U8 => "uint8",
        CType::I8 => "int8",
        CType::Bf16 => "bfloat16",
    }
}

/// Where `operand`'s logical elements are in its buffer: strides when its layout has only whole
/// dims, each logical dim once; else every element's offset.
fn placement(operand: &TensorSpec) -> PyResult<Placement> {
    let layout = &operand.layout;
    let shape = &operand.shape;
    let sizes = layout.physical_sizes(shape).map_err(to_py)?;
    // Whole dims only, each logical dim once (a dim of size 1 may be left out of a canonical
    // layout: any stride serves it).
    let whole_dims = layout.dims().iter().all(|d| d.kind == PhysDim::Dynamic)
        && (0..shape.rank()).all(|d| {
            match layout.dims().iter().filter(|p| usize::from(p.logical) == d).count() {
                1 => true,
                0 => shape.dim(d) == 1,
                _ => false,
            }
        });
    if whole_dims {
        let mut strides = vec![0u64; shape.rank()];
        let mut stride = 1u64;
        for (dim, size) in layout.dims().iter().zip(&sizes).rev() {
            strides[usize::from(dim.logical)] = stride;
            stride = stride.saturating_mul(*size);
        }
        return Ok(Placement::Strides(strides));
    }
    let indexer = layout.indexer(shape).map_err(to_py)?;
    let mut offsets = Vec::with_capacity(usize::try_from(shape.volume()).unwrap_or(0).saturating_mul(8));
    for point in shape.points() {
        offsets.extend_from_slice(&indexer.offset(&point).to_le_bytes());
    }
    Ok(Placement::Offsets(offsets))
}
