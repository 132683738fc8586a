//! The built-in x86 targets and the resolution of `x86` to what the host supports.
//!
//! Both model one class of machine: 16 scalar registers; 16 x 256-bit (AVX2) or 32 x 512-bit
//! (AVX-512) vector registers; a 32 KiB L1 data cache and a 1 MiB L2 per core; main memory.
//! Levels, slowest first: `GL` (main memory), `L2`, `L1`, `VRF`, `RF`. Moves go
//! `GL -> L2 -> {L1, VRF}` and `L1 -> {VRF, RF}`: vector loads may stream straight from L2, at the
//! cost of an L1 line (`load_cost_per_line`), since the prefetchers keep such streams ahead of the
//! FMAs; new buffers (packing, relayout) are allocated in `GL`, while `L2` and `L1` only hold
//! cache views.

use super::file::{Capacity, LevelDescription, TargetDescription};
use super::{CostConstants, IsaFeature, LevelKind, Target, TargetError, with_implied};
use crate::kernels::KernelKind;

/// Which built-in target a name resolved to, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostResolution {
    /// The resolved target.
    pub target: Target,
    /// A sentence for the user, e.g. "x86 resolved to x86-avx512 (the host has AVX-512F, BW and VL)".
    pub note: Option<String>,
}

fn level(
    name: &str,
    kind: LevelKind,
    capacity: u64,
    vector_bytes: &[u32],
    cost_per_line: u64,
    moves_to: &[&str],
) -> LevelDescription {
    LevelDescription {
        name: name.into(),
        kind,
        capacity: Capacity::Number(capacity),
        vector_bytes: vector_bytes.to_vec(),
        cost_per_line,
        run_overhead_lines: 0,
        load_cost_per_line: None,
        parallel: matches!(kind, LevelKind::Memory | LevelKind::Cache),
        allocates: true,
        moves_to: moves_to.iter().map(|s| s.to_string()).collect(),
    }
}

fn x86(avx512: bool, processors: u32) -> TargetDescription {
    let (vector_regs, widths): (u64, &[u32]) = if avx512 { (32, &[16, 32, 64]) } else { (16, &[16, 32]) };
    let mut isa = vec![IsaFeature::Avx2, IsaFeature::Fma];
    if avx512 {
        isa.extend([IsaFeature::Avx512f, IsaFeature::Avx512bw, IsaFeature::Avx512vl, IsaFeature::Avx512bf16]);
    }
    let has = with_implied(isa.iter().copied());
    let kernels = KernelKind::ALL
        .iter()
        .copied()
        .filter(|k| k.required_isa().iter().all(|f| has.contains(f)))
        .collect();
    let isa = isa.iter().map(|f| f.name().to_string()).collect();
    TargetDescription {
        name: if avx512 { "x86-avx512" } else { "x86-avx2" }.into(),
        description: if avx512 {
            "x86-64 with AVX-512 (F, BW, VL, BF16): 32 x 512-bit vector registers, 32 KiB L1, 1 MiB L2"
        } else {
            "x86-64 with AVX2 and FMA: 16 x 256-bit vector registers, 32 KiB L1, 1 MiB L2"
        }
        .into(),
        cache_line_bytes: 64,
        processors,
        isa,
        levels: vec![
            // A run in main memory starts a prefetch stream, often on a new page: two lines' worth.
            LevelDescription {
                run_overhead_lines: 2,
                ..level("GL", LevelKind::Memory, 1 << 40, &[], 20, &["L2"])
            },
            // Vector loads may stream from L2 (prefetched, overlapped with the FMAs) at an L1 line's cost.
            LevelDescription {
                allocates: false,
                load_cost_per_line: Some(2),
                ..level("L2", LevelKind::Cache, 1 << 20, &[], 6, &["L1", "VRF"])
            },
            // Packing into L1 buffers is left to L2: L1 only holds views of L2 data.
            LevelDescription {
                allocates: false,
                ..level("L1", LevelKind::Cache, 32 << 10, &[], 2, &["VRF", "RF"])
            },
            level("VRF", LevelKind::VectorRegisters, vector_regs, widths, 0, &[]),
            level("RF", LevelKind::ScalarRegisters, 16, &[], 0, &[]),
        ],
        kernels,
        costs: CostConstants::default(),
    }
}

impl Target {
    /// A built-in target by name (`x86-avx2` or `x86-avx512`) with a given processor count.
    ///
    /// # Errors
    /// [`TargetError::Unknown`] for other names.
    pub fn builtin(name: &str, processors: u32) -> Result<Target, TargetError> {
        let desc = match name {
            "x86-avx2" => x86(false, processors),
            "x86-avx512" => x86(true, processors),
            other => return Err(TargetError::Unknown(other.to_string())),
        };
        Target::new(desc)
    }
}

/// Resolves `x86`, `x86-avx2` or `x86-avx512` on this host: `x86` picks the best of the two the
/// CPU supports and says which; the processor count is the host's available parallelism.
///
/// # Errors
/// [`TargetError::Unknown`] for other names; [`TargetError::HostUnsupported`] if `x86` is asked
/// on a host with neither AVX2+FMA nor AVX-512.
pub fn resolve_target(name: &str) -> Result<HostResolution, TargetError> {
    let processors = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    match name {
        "x86" => {
            let host = HostFeatures::detect();
            if host.avx512 {
                Ok(HostResolution {
                    target: Target::builtin("x86-avx512", processors)?,
                    note: Some("x86 resolved to x86-avx512 (the host has AVX-512F, BW and VL)".into()),
                })
            } else if host.avx2 {
                Ok(HostResolution {
                    target: Target::builtin("x86-avx2", processors)?,
                    note: Some("x86 resolved to x86-avx2 (the host has AVX2 and FMA, not AVX-512)".into()),
                })
            } else {
                Err(TargetError::HostUnsupported(
                    "the host has neither AVX2+FMA nor AVX-512; name a target explicitly (x86-avx2, x86-avx512 or a target file)".into(),
                ))
            }
        }
        other => Ok(HostResolution { target: Target::builtin(other, processors)?, note: None }),
    }
}

/// The x86 features the host CPU reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HostFeatures {
    avx2: bool,
    avx512: bool,
}

impl HostFeatures {
    #[cfg(target_arch = "x86_64")]
    fn detect() -> Self {
        let host = |features: &[IsaFeature]| features.iter().all(|f| f.on_host());
        HostFeatures {
            avx2: host(&[IsaFeature::Avx2, IsaFeature::Fma]),
            avx512: host(&[IsaFeature::Avx512f, IsaFeature::Avx512bw, IsaFeature::Avx512vl]),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn detect() -> Self {
        HostFeatures { avx2: false, avx512: false }
    }
}
