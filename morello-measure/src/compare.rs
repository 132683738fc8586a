//! Timing morello's kernels for one spec beside each other and beside the baselines that compute
//! the same thing: the library behind `morello bench`, `morello bench-suite` and the autotune
//! example, which search for the implementations and pass them in (this crate never searches).
//!
//! ```text
//! kernels ──emit, compile, run once, compare with the reference──► verified (else: an error, no timing)
//! spec ──baseline_problem──► baselines (each probed; a missing one is skipped with a reason)
//! kernels + baselines ──one program, same inputs, alternating, pinned──► Measurement (run_bench)
//! ```
//!
//! Besides [`measure`]: what a spec's figures mean ([`spec_work`], [`is_memory_bound`],
//! [`peak_applies`], [`percent_of_peak`], [`speedup`]), and the other kernels `morello bench` times
//! beside the best: the unfused plan of a matmul's epilogue ([`unfused_epilogue`]), the kernel of a
//! target with the same levels and ISA ([`same_levels_and_isa`]), or of one processor, each noted
//! when it emits the same C ([`same_c`]).

use morello_codegen::{
    BenchEntry, BuildDir, CodegenError, CompileOptions, Compiler, EmitConfig, ImplComment, KernelSignature,
    OpenMp, Verification, VerifyOptions, Warnings, emit_kernel, verify_impls,
};
use morello_core::dtype::Dtype;
use morello_core::imp::{Impl, Stage};
use morello_core::operators::{Arithmetic, EPILOGUE_STAGES, Operator};
use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;

use crate::baselines::{BaselineKind, BaselineOptions, baseline_problem, baselines};
use crate::bench::{BenchConfig, BenchReport, BenchRequest, CCandidate, Candidate, CandidateResult, Work};
use crate::peak::PeakVariant;
use crate::{MeasureError, run_bench};

/// The work one call of `spec` does: `2 x (iteration space)` operations for matmuls and
/// convolutions (one multiply-add per point), and each operand's bytes once.
pub fn spec_work(spec: &LogicalSpec) -> Work {
    let bytes: f64 =
        spec.operands.iter().map(|o| o.shape.volume() as f64 * f64::from(o.dtype.size_bytes())).sum();
    let flops = (spec.kind.arithmetic() == Arithmetic::MultiplyAdd).then(|| 2.0 * spec.shape.volume() as f64);
    Work { flops, bytes: Some(bytes) }
}

/// Whether the spec is memory-bound by shape: a vector-matrix or matrix-vector product (`M = 1` or
/// `N = 1`), or a move or fill (no arithmetic). Its GB/s is reported beside GFLOP/s.
pub fn is_memory_bound(spec: &LogicalSpec) -> bool {
    spec.kind.memory_bound(&spec.shape)
}

/// Whether percent of a measured peak means something for the spec on `target`: it does
/// arithmetic, and every operand is f32 (the FMA peak) or its inputs are 8-bit integers and the
/// target has an x86 int8 kernel (that kernel's instruction's peak); see
/// [`PeakVariant::for_spec`].
pub fn peak_applies(spec: &LogicalSpec, target: &Target) -> bool {
    PeakVariant::for_spec(spec, target).is_some()
}

/// The unit of a spec's throughput: `GOPS` (8-bit integer operations) for a spec whose inputs are
/// u8 or i8, `GFLOP/s` otherwise. Both count a multiply-add as two operations.
pub fn rate_unit(spec: &LogicalSpec) -> &'static str {
    let int8 = |d: Dtype| matches!(d, Dtype::U8 | Dtype::I8);
    if spec.operands.len() >= 2 && int8(spec.operands[0].dtype) && int8(spec.operands[1].dtype) {
        "GOPS"
    } else {
        "GFLOP/s"
    }
}

/// GFLOP/s as a percentage of `peak` (single-core GFLOP/s) times the thread count.
pub fn percent_of_peak(gflops: Option<f64>, peak: Option<f64>, threads: usize) -> Option<f64> {
    let peak = peak.filter(|p| *p > 0.0)? * threads as f64;
    gflops.map(|g| 100.0 * g / peak)
}

/// How many times faster `reference` is than `result` (`result`'s median / `reference`'s).
pub fn speedup(reference: &CandidateResult, result: &CandidateResult) -> Option<f64> {
    (reference.stats.median > 0.0).then(|| result.stats.median / reference.stats.median)
}

/// Whether two call shapes agree parameter by parameter (element type, count and role; names
/// may differ).
pub(crate) fn same_call_shape(a: &KernelSignature, b: &KernelSignature) -> bool {
    a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|(x, y)| (x.c_type, x.elements, x.role) == (y.c_type, y.elements, y.role))
}

/// Why a kernel's parallel loops run on one thread with `compiler`, if they do: one line that
/// says how to get them back.
pub fn serial_note(compiler: &Compiler) -> Option<String> {
    let missing = compiler.openmp().err()?;
    Some(format!(
        "{missing}: the kernel's parallel loops run on one thread (install the compiler's OpenMP runtime, \
         libomp-dev for clang, or use gcc)"
    ))
}

/// A morello kernel to time.
#[derive(Debug, Clone)]
pub struct KernelCandidate<'a> {
    /// Its label (`morello`, or `morello-3` for the third of several).
    pub label: String,
    /// Its implementation.
    pub imp: &'a Impl,
}

/// A baseline that was not timed, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The baseline's name.
    pub name: String,
    /// One line: why, and how to install it if that is the reason.
    pub reason: String,
}

/// The outcome of one side-by-side run.
#[derive(Debug)]
pub struct Measurement {
    /// The timings, kernels first, then the baselines.
    pub report: BenchReport,
    /// Each kernel's verification, in order.
    pub verifications: Vec<Verification>,
    /// Whether any kernel has parallel loops.
    pub parallel_loops: bool,
    /// Whether they run in parallel (compiled with OpenMP: the compiler has it).
    pub openmp: bool,
    /// Baselines requested but not timed.
    pub skipped: Vec<Skipped>,
    /// Why no baseline applies to this spec at all, if so.
    pub not_comparable: Option<String>,
    /// The work per call.
    pub work: Work,
}

/// Verifies the kernels (of `spec`, on `target`), then times them and the baselines of `kinds`
/// that apply in one run; the kernels' results come first, in order.
///
/// # Errors
/// [`MeasureError::Unverified`] for a kernel that does not verify (nothing is timed);
/// [`MeasureError::Codegen`] for a host that cannot run the kernels
/// ([`CodegenError::MissingHostFeatures`]) and compile and run failures;
/// [`MeasureError::InvalidBench`] without kernels.
pub fn measure(
    compiler: &Compiler,
    target: &Target,
    spec: &LogicalSpec,
    kernels: &[KernelCandidate<'_>],
    kinds: &[BaselineKind],
    config: &BenchConfig,
) -> Result<Measurement, MeasureError> {
    let imps: Vec<&Impl> = kernels.iter().map(|k| k.imp).collect();
    let options =
        VerifyOptions { seed: config.seed, build_dir: BuildDir::Temporary, warnings: Warnings::Report };
    let verified = verify_impls(&imps, target, compiler, &options)?;
    for (kernel, v) in kernels.iter().zip(&verified) {
        if let Some(mismatch) = &v.verification.mismatch {
            return Err(MeasureError::Unverified {
                label: kernel.label.clone(),
                mismatch: mismatch.to_string(),
            });
        }
    }
    let mut features = Vec::new();
    for f in verified.iter().flat_map(|v| &v.kernel.features) {
        if !features.contains(f) {
            features.push(*f);
        }
    }
    features.sort();
    let parallel_loops = verified.iter().any(|v| v.kernel.openmp == OpenMp::Enabled);
    let serial_note = if parallel_loops { serial_note(compiler) } else { None };
    let openmp = parallel_loops && serial_note.is_none();
    let signature = verified
        .first()
        .map(|v| v.kernel.signature.clone())
        .ok_or_else(|| MeasureError::invalid("no kernel to time"))?;
    let mut candidates: Vec<Candidate> = kernels
        .iter()
        .zip(&verified)
        .map(|(kernel, v)| {
            Candidate::C(CCandidate {
                entry: BenchEntry::new(kernel.label.clone(), v.kernel.signature.name.clone()),
                unit: None,
                link_args: Vec::new(),
            })
        })
        .collect();

    let mut skipped = Vec::new();
    let mut not_comparable = None;
    let mut baseline_notes = Vec::new();
    if !kinds.is_empty() {
        match baseline_problem(spec) {
            Ok(problem) if same_call_shape(&problem.signature("f"), &signature) => {
                let options =
                    BaselineOptions { threads: config.threads, seed: config.seed, caches: config.caches };
                let set = baselines(compiler, &problem, kinds, &options);
                candidates.extend(set.candidates);
                baseline_notes = set.notes;
                skipped.extend(
                    set.skipped
                        .into_iter()
                        .map(|s| Skipped { name: s.kind.name().to_string(), reason: s.reason }),
                );
            }
            Ok(_) => not_comparable = Some("the kernel's parameters differ from the baselines'".to_string()),
            Err(reason) => not_comparable = Some(reason),
        }
    }

    let work = spec_work(spec);
    let request = BenchRequest {
        signature,
        kernel_source: verified.iter().map(|v| v.kernel.source.as_str()).collect::<Vec<_>>().join("\n"),
        options: CompileOptions {
            features,
            openmp: if openmp { OpenMp::Enabled } else { OpenMp::Disabled },
            warnings: Warnings::Report,
        },
        candidates,
        work,
    };
    let mut report = run_bench(compiler, request, config)?;
    report.notes.extend(serial_note);
    report.notes.extend(baseline_notes);
    Ok(Measurement {
        report,
        verifications: verified.into_iter().map(|v| v.verification).collect(),
        parallel_loops,
        openmp,
        skipped,
        not_comparable,
        work,
    })
}

/// Whether `a` and `b` emit the same C on `target` (two labels would then time the same code,
/// and the difference between their times is noise).
///
/// # Errors
/// [`CodegenError`] when either cannot be emitted.
pub fn same_c(a: &Impl, b: &Impl, target: &Target) -> Result<bool, CodegenError> {
    let config = EmitConfig { name: "kernel".into(), comment: ImplComment::Omit };
    Ok(emit_kernel(a, target, &config)?.source == emit_kernel(b, target, &config)?.source)
}

/// Whether a kernel emitted under `theirs` runs on the buffers of one emitted under `mine` and can
/// be timed beside it: the same levels (names, kinds, vector widths) and ISA. Their constants,
/// caches' geometry and packing may differ (that is what such a comparison tests).
pub fn same_levels_and_isa(mine: &Target, theirs: &Target) -> bool {
    let (a, b) = (mine.levels(), theirs.levels());
    let same_levels = a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.name == y.name && x.kind == y.kind && x.vector_bytes == y.vector_bytes);
    same_levels && mine.isa_with_implied() == theirs.isa_with_implied()
}

/// The unfused plan of a matmul with an epilogue: `matmul`, an implementation of the matmul
/// alone, then `epilogue`, one of the epilogue's separate pass over the output
/// ([`CanonicalSpec::split_epilogue`] gives the two specs), in one block. `None` for a spec that
/// is not a matmul with an epilogue.
pub fn unfused_epilogue(spec: &CanonicalSpec, matmul: Impl, epilogue: Impl, target: &Target) -> Option<Impl> {
    if spec.kind.operator() != Operator::MatmulBias {
        return None;
    }
    let stages = EPILOGUE_STAGES
        .iter()
        .zip([matmul, epilogue])
        .map(|(operands, body)| Stage { operands: operands.to_vec(), origins: None, body })
        .collect();
    Some(Impl::block(spec.clone(), stages, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::spec::tests::spec;

    #[test]
    fn work_counts_multiply_adds_twice_and_each_operand_once() {
        let mm = spec_work(&spec("Matmul(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)"));
        assert_eq!(mm.flops, Some(48.0));
        assert_eq!(mm.bytes, Some(4.0 * (6.0 + 12.0 + 8.0)));
        let bf16 = spec("Matmul(1x1x4x4, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
        assert_eq!(spec_work(&bf16).bytes, Some(2.0 * (4.0 + 16.0) + 4.0 * 4.0));
        let target = Target::builtin("x86-avx2", 1).unwrap();
        assert!(is_memory_bound(&bf16) && !peak_applies(&bf16, &target));
        let mv = spec("Move(8x8, f32 GL row-major, f32 GL col-major)");
        assert_eq!(spec_work(&mv).flops, None);
        assert!(is_memory_bound(&mv) && !peak_applies(&mv, &target));
        let int8 = spec("Matmul(1x2x8x4, u8 GL row-major, i8 GL row-major, i32 GL row-major)");
        assert!(peak_applies(&int8, &target));
        assert_eq!((rate_unit(&int8), rate_unit(&mv)), ("GOPS", "GFLOP/s"));
        assert_eq!(percent_of_peak(Some(50.0), Some(100.0), 2), Some(25.0));
        assert_eq!(percent_of_peak(Some(50.0), None, 1), None);
    }

    #[test]
    fn targets_with_other_levels_or_isa_are_not_timed_side_by_side() {
        let avx2 = Target::builtin("x86-avx2", 1).unwrap();
        let avx512 = Target::builtin("x86-avx512", 1).unwrap();
        assert!(same_levels_and_isa(&avx2, &avx2));
        assert!(same_levels_and_isa(&avx2, &Target::builtin("x86-avx2", 4).unwrap()));
        assert!(!same_levels_and_isa(&avx2, &avx512));
    }

    #[test]
    fn the_unfused_plan_is_the_matmul_then_the_epilogue() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let text =
            "MatmulBiasRelu(1x2x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        let spec = LogicalSpec::parse(text, &target).unwrap().canonicalize(&target).unwrap();
        let (matmul, epilogue) = spec.split_epilogue(&target).unwrap().unwrap();
        let leaf = |s: &CanonicalSpec| Impl::spec_app(s.clone(), target.capacities());
        let unfused = unfused_epilogue(&spec, leaf(&matmul), leaf(&epilogue), &target).unwrap();
        assert_eq!(unfused.spec, spec);
        let children = unfused.children();
        assert_eq!(children.len(), 2);
        assert_eq!((&children[0].spec, &children[1].spec), (&matmul, &epilogue));
        assert!(unfused_epilogue(&matmul, leaf(&matmul), leaf(&epilogue), &target).is_none());
    }
}
