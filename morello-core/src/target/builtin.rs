//! The built-in targets (`x86-avx2`, `x86-avx2-vnni`, `x86-avx512`, `arm-neon`) and the resolution
//! of `x86` to what the host supports.
//!
//! The x86 targets model one class of machine: 16 scalar registers; 16 x 256-bit (AVX2, and AVX2
//! with AVX-VNNI) or 32 x 512-bit (AVX-512) vector registers; a 32 KiB L1 data cache and a 1 MiB L2 per core; main memory.
//! Levels, slowest first: `GL` (main memory), `L2`, `L1`, `VRF`, `RF`. Moves go
//! `GL -> L2 -> {L1, VRF}` and `L1 -> {VRF, RF}`: vector loads may stream straight from L2, at the
//! cost of an L1 line (`load_cost_per_line`), since the prefetchers keep such streams ahead of the
//! FMAs; new buffers (relayout) are allocated in `GL`, while `L2` and `L1` hold cache views,
//! except that `L2` packs: a matmul's `rhs` may be copied into register-block panels there where a
//! view of it would crowd a cache set (`packs`).

use super::file::{Capacity, LevelDescription, TargetDescription};
use super::{CostConstants, IsaFeature, LevelKind, Target, TargetError, with_implied};
use crate::kernel_kind::KernelKind;

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
        fill_cost_per_line: 0,
        strided_fill_cost_per_line: None,
        parallel: matches!(kind, LevelKind::Memory | LevelKind::Cache),
        allocates: true,
        packs: false,
        moves_to: moves_to.iter().map(|s| s.to_string()).collect(),
        ways: None,
        sets: None,
        line_bytes: None,
    }
}

/// The documented default geometry of the built-in targets' caches: a 32 KiB, 8-way L1 data cache
/// (64 sets) and a 1 MiB, 16-way L2 (1024 sets), both with 64-byte lines. `x86` on Linux takes the
/// host's instead ([`resolve_target_on_host`]).
const L1_WAYS: u32 = 8;
const L2_WAYS: u32 = 16;

/// The built-in x86 targets: which vector registers and instruction sets each models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum X86 {
    /// `x86-avx2`: AVX2 and FMA, 16 x 256-bit vector registers.
    Avx2,
    /// `x86-avx2-vnni`: `x86-avx2` with AVX-VNNI (256-bit `vpdpbusd`), as on cores that have it
    /// without AVX-512 (Alder Lake and later client cores).
    Avx2Vnni,
    /// `x86-avx512`: AVX-512 F, BW, VL, BF16 and VNNI, 32 x 512-bit vector registers.
    Avx512,
}

impl X86 {
    fn name(self) -> &'static str {
        match self {
            X86::Avx2 => "x86-avx2",
            X86::Avx2Vnni => "x86-avx2-vnni",
            X86::Avx512 => "x86-avx512",
        }
    }

    fn description(self) -> &'static str {
        match self {
            X86::Avx2 => "x86-64 with AVX2 and FMA: 16 x 256-bit vector registers, 32 KiB L1, 1 MiB L2",
            X86::Avx2Vnni => {
                "x86-64 with AVX2, FMA and AVX-VNNI: 16 x 256-bit vector registers, 32 KiB L1, 1 MiB L2"
            }
            X86::Avx512 => {
                "x86-64 with AVX-512 (F, BW, VL, BF16, VNNI): 32 x 512-bit vector registers, 32 KiB L1, 1 MiB L2"
            }
        }
    }

    fn isa(self) -> Vec<IsaFeature> {
        let mut isa = vec![IsaFeature::Avx2, IsaFeature::Fma];
        match self {
            X86::Avx2 => {}
            X86::Avx2Vnni => isa.push(IsaFeature::Avxvnni),
            X86::Avx512 => isa.extend([
                IsaFeature::Avx512f,
                IsaFeature::Avx512bw,
                IsaFeature::Avx512vl,
                IsaFeature::Avx512bf16,
                IsaFeature::Avx512vnni,
            ]),
        }
        isa
    }
}

fn x86(class: X86, processors: u32) -> TargetDescription {
    let (vector_regs, widths): (u64, &[u32]) =
        if class == X86::Avx512 { (32, &[16, 32, 64]) } else { (16, &[16, 32]) };
    let isa = class.isa();
    let has = with_implied(isa.iter().copied());
    let kernels = KernelKind::ALL
        .iter()
        .copied()
        .filter(|k| k.required_isa().iter().all(|f| has.contains(f)))
        .collect();
    let isa = isa.iter().map(|f| f.name().to_string()).collect();
    TargetDescription {
        name: class.name().into(),
        description: class.description().into(),
        cache_line_bytes: 64,
        processors,
        isa,
        levels: vec![
            // A run in main memory starts a prefetch stream, often on a new page: two lines' worth.
            LevelDescription {
                run_overhead_lines: 2,
                ..level("GL", LevelKind::Memory, 1 << 40, &[], 20, &["L2"])
            },
            // Vector loads may stream from L2 (prefetched, overlapped with the FMAs) at an L1 line's cost,
            // but L2 refills L1 at about 32 bytes a cycle: a line per two cycles, the time of four
            // FMAs, on the load side of a register block's step (8 units). The fill is 7: the emitted
            // C unrolls a block's steps by 4, and unrolled, a block streaming rows from L2 keeps up
            // better than 8 says; of 6, 7 and 8, 7 picked the fastest kernels over the matmul shapes
            // of `docs/PERFORMANCE.md` on an Intel Xeon (AVX-512) (`docs/cost-model.md`, "Register
            // blocks").
            // `rhs` may be packed into register-block panels here where a view of it would crowd a
            // set or read rows on pages of their own: packed, 512^3 and 1024^3 ran 1.2-1.5x faster on
            // an AMD Zen 3 (512 KiB, 8-way L2).
            LevelDescription {
                allocates: false,
                packs: true,
                load_cost_per_line: Some(2),
                fill_cost_per_line: 7,
                // A strided stream (a column of a wider matrix, each row a run of its own) refills
                // L1 more slowly: the prefetchers restart at every row and, at a pitch of a page or
                // more, on a new page. 4 more than a contiguous line: at that margin the search packs
                // such columns where that pays (128x768x3072 ran 1.5-1.7x faster packed on an Intel
                // Xeon, with AVX2 and AVX-512 kernels), and no benchmark shape ran slower.
                strided_fill_cost_per_line: Some(11),
                ways: Some(L2_WAYS),
                ..level("L2", LevelKind::Cache, 1 << 20, &[], 6, &["L1", "VRF"])
            },
            // L1 holds views of L2 data, and packs a matmul's `rhs` panels where a view of them
            // would crowd its sets (a `kc x 64` panel reused by every row block, as BLIS does).
            LevelDescription {
                allocates: false,
                packs: true,
                ways: Some(L1_WAYS),
                ..level("L1", LevelKind::Cache, 32 << 10, &[], 2, &["VRF", "RF"])
            },
            level("VRF", LevelKind::VectorRegisters, vector_regs, widths, 0, &[]),
            level("RF", LevelKind::ScalarRegisters, 16, &[], 0, &[]),
        ],
        kernels,
        costs: CostConstants::default(),
    }
}

/// The kernels of `arm-neon`: those whose emitters write NEON intrinsics (through
/// `VectorType`) or portable C, and NEON's own: `BroadcastLaneMultAdd` and the int8 dot products
/// `BroadcastSdot` and `BroadcastSdotU8`. Not the x86-only ones: `DotProductLoop` (x86 reductions),
/// `DotProductBf16` and `BroadcastVecMultAddBf16` (AVX-512 and AVX2 bf16 widening), and the x86
/// int8 kernels.
const ARM_NEON_KERNELS: [KernelKind; 15] = [
    KernelKind::MultAdd,
    KernelKind::BroadcastVecMultAdd,
    KernelKind::BroadcastLaneMultAdd,
    KernelKind::VectorAssign,
    KernelKind::ValueAssign,
    KernelKind::VectorFill,
    KernelKind::ValueFill,
    KernelKind::MemsetZero,
    KernelKind::VectorAddBias,
    KernelKind::ValueAddBias,
    KernelKind::VectorMax,
    KernelKind::VectorScale,
    KernelKind::VectorSoftmaxExp,
    KernelKind::BroadcastSdot,
    KernelKind::BroadcastSdotU8,
];

/// `arm-neon`: an AArch64 core like the Arm Neoverse N1 (AWS Graviton2, Ampere Altra), from Arm's
/// published figures (Neoverse N1 Technical Reference Manual; Neoverse N1 Software Optimization
/// Guide):
///
/// ```text
/// vector registers   32 x 128-bit (V0-V31)
/// L1 data            64 KiB, 4-way, 64-byte lines (256 sets), 4-cycle load-to-use
/// L2 (private)       1 MiB, 8-way, 64-byte lines (2048 sets; Graviton2's size), 11 cycles
/// FMLA (vector)      2 per cycle (pipes V0 and V1), latency 4 cycles
/// FMLA (by element)  the same: 2 per cycle, latency 4
/// SDOT               2 per cycle (the dot-product extension, ARMv8.2-A; no i8mm)
/// loads              2 per cycle (128 bits each)
/// ```
///
/// In the model's units (an FMA of one vector costs 2 at two a cycle) these are the x86 figures: an
/// FMA per output vector at 2, `load_issue` 2 (two loads a cycle), and `fma_chains` 10 (latency
/// 4 x 2 per cycle = 8 accumulators, and what scheduling loses, as on x86). The memory levels'
/// line costs are the x86 targets' (not measured on an N1: `morello calibrate` on the core fits
/// them). The levels are x86's too: `GL -> L2 -> {L1, VRF}`, `L1 -> {VRF, RF}`.
fn arm_neon(processors: u32) -> TargetDescription {
    let mut description = x86(X86::Avx2, processors);
    description.name = "arm-neon".into();
    description.description =
        "AArch64 with NEON and dot products (a Neoverse-N1-like core): 32 x 128-bit vector registers, 64 KiB 4-way L1, 1 MiB 8-way L2"
            .into();
    description.isa = [IsaFeature::Neon, IsaFeature::Dotprod].map(|f| f.name().to_string()).to_vec();
    description.kernels = ARM_NEON_KERNELS.to_vec();
    for level in &mut description.levels {
        match level.name.as_str() {
            "L2" => level.ways = Some(8),
            "L1" => {
                level.capacity = Capacity::Number(64 << 10);
                level.ways = Some(4);
            }
            "VRF" => {
                level.capacity = Capacity::Number(32);
                level.vector_bytes = vec![16];
            }
            _ => {}
        }
    }
    description
}

impl Target {
    /// A built-in target by name (`x86-avx2`, `x86-avx2-vnni`, `x86-avx512` or `arm-neon`) with a
    /// given processor
    /// count.
    ///
    /// # Errors
    /// [`TargetError::Unknown`] for other names.
    pub fn builtin(name: &str, processors: u32) -> Result<Target, TargetError> {
        let desc = match name {
            "x86-avx2" => x86(X86::Avx2, processors),
            "x86-avx2-vnni" => x86(X86::Avx2Vnni, processors),
            "x86-avx512" => x86(X86::Avx512, processors),
            "arm-neon" => arm_neon(processors),
            other => return Err(TargetError::Unknown(other.to_string())),
        };
        Target::new(desc)
    }
}

/// What a cache of the host holds (Linux: `/sys/devices/system/cpu/cpu0/cache/index*/type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCacheKind {
    /// Data only.
    Data,
    /// Instructions only.
    Instruction,
    /// Data and instructions.
    Unified,
}

/// One cache of the host, as Linux describes it in `/sys/devices/system/cpu/cpu0/cache/index*/`.
/// This crate does no I/O: the caller reads the files and [`HostCache::from_sysfs`] parses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCache {
    /// The level (`level`: 1 for L1).
    pub level: u8,
    /// What it holds (`type`).
    pub kind: HostCacheKind,
    /// Its size in bytes (`size`, such as `32K`).
    pub size_bytes: u64,
    /// Its associativity (`ways_of_associativity`).
    pub ways: u32,
    /// Its sets (`number_of_sets`).
    pub sets: u32,
    /// Its line size (`coherency_line_size`).
    pub line_bytes: u32,
}

impl HostCache {
    /// Parses the texts of one sysfs cache directory's `level`, `type`, `size`,
    /// `ways_of_associativity`, `number_of_sets` and `coherency_line_size` files.
    ///
    /// # Errors
    /// A sentence naming the file whose text is not what Linux writes.
    pub fn from_sysfs(
        level: &str,
        kind: &str,
        size: &str,
        ways: &str,
        sets: &str,
        line_bytes: &str,
    ) -> Result<HostCache, String> {
        let number = |file: &str, text: &str| -> Result<u64, String> {
            text.trim().parse::<u64>().map_err(|_| format!("{file}: `{}` is not a number", text.trim()))
        };
        let kind = match kind.trim() {
            "Data" => HostCacheKind::Data,
            "Instruction" => HostCacheKind::Instruction,
            "Unified" => HostCacheKind::Unified,
            other => return Err(format!("type: `{other}` is not Data, Instruction or Unified")),
        };
        let size_text = size.trim();
        let (digits, multiplier) = match size_text.strip_suffix('K') {
            Some(d) => (d, 1u64 << 10),
            None => match size_text.strip_suffix('M') {
                Some(d) => (d, 1 << 20),
                None => (size_text, 1),
            },
        };
        let size_bytes = number("size", digits)?.checked_mul(multiplier).ok_or("size: too large")?;
        let small = |file: &str, text: &str| -> Result<u32, String> {
            u32::try_from(number(file, text)?).map_err(|_| format!("{file}: too large"))
        };
        Ok(HostCache {
            level: u8::try_from(number("level", level)?).map_err(|_| "level: too large".to_string())?,
            kind,
            size_bytes,
            ways: small("ways_of_associativity", ways)?,
            sets: small("number_of_sets", sets)?,
            line_bytes: small("coherency_line_size", line_bytes)?,
        })
    }

    /// `L1d 32 KiB 8-way`, for notes.
    fn describe(&self) -> String {
        let kind = if self.kind == HostCacheKind::Data { "d" } else { "" };
        format!("L{}{kind} {} KiB {}-way", self.level, self.size_bytes >> 10, self.ways)
    }
}

/// What `x86` (or another host-resolved name) appends to a built-in target's description when it
/// applies the host's caches, followed by the caches and `)`: a table written with such a target
/// is told apart from one written with the built-in target by this text.
pub const HOST_CACHES_MARK: &str = "(caches of this host:";

/// Resolves `x86` or a built-in target's name on this host: `x86` picks the best of `x86-avx512`,
/// `x86-avx2-vnni` and `x86-avx2` the CPU supports and says which; the processor count is the host's available parallelism. The
/// caches keep the built-in defaults; [`resolve_target_on_host`] gives `x86` the host's.
///
/// # Errors
/// [`TargetError::Unknown`] for other names; [`TargetError::HostUnsupported`] if `x86` is asked
/// on a host with neither AVX2+FMA nor AVX-512.
pub fn resolve_target(name: &str) -> Result<HostResolution, TargetError> {
    resolve_target_on_host(name, &[])
}

/// [`resolve_target`], with `x86`'s L1 and L2 taken from the host's data (or unified) caches of
/// levels 1 and 2 (size, ways, sets, line size) where `caches` describes them consistently (size =
/// sets x ways x line, sets a power of two), and without the optional ISA features (AVX-512 BF16,
/// VNNI) the host lacks, nor their kernels; the named x86 targets always keep the documented
/// defaults, so that they mean the same everywhere.
///
/// # Errors
/// As [`resolve_target`].
pub fn resolve_target_on_host(name: &str, caches: &[HostCache]) -> Result<HostResolution, TargetError> {
    let mut resolution = resolve_builtin(name)?;
    if name != "x86" {
        return Ok(resolution);
    }
    let mut description = resolution.target.description_value();
    let lacking = keep_host_features(&mut description, IsaFeature::on_host);
    let mut applied = Vec::new();
    for (level_name, number) in [("L1", 1u8), ("L2", 2u8)] {
        let Some(cache) = caches.iter().find(|c| c.level == number && c.kind != HostCacheKind::Instruction)
        else {
            continue;
        };
        let consistent = cache.sets.is_power_of_two()
            && cache.line_bytes.is_power_of_two()
            && cache.ways > 0
            && u64::from(cache.sets) * u64::from(cache.ways) * u64::from(cache.line_bytes)
                == cache.size_bytes;
        let Some(level) = description.levels.iter_mut().find(|l| l.name == level_name) else { continue };
        if !consistent {
            continue;
        }
        level.capacity = Capacity::Number(cache.size_bytes);
        level.ways = Some(cache.ways);
        level.sets = Some(cache.sets);
        level.line_bytes = Some(cache.line_bytes);
        applied.push(cache.describe());
    }
    if applied.is_empty() && lacking.is_empty() {
        return Ok(resolution);
    }
    let lacking: Vec<&str> = lacking.iter().map(|f| f.name()).collect();
    let mut notes = Vec::new();
    if !lacking.is_empty() {
        description.description = format!("{} without {}", description.description, lacking.join(", "));
        notes.push(format!("without {} and its kernels (the host lacks it)", lacking.join(", ")));
    }
    if !applied.is_empty() {
        description.description =
            format!("{} {HOST_CACHES_MARK} {})", description.description, applied.join(", "));
        notes.push(format!("the host's caches: {}", applied.join(", ")));
    }
    resolution.target = Target::new(description)?;
    if let Some(note) = &mut resolution.note {
        note.push_str(&format!("; {}", notes.join("; ")));
    }
    Ok(resolution)
}

/// Removes from `description` the ISA features it lists that `host_has` refuses, and the kernels
/// that need one of them; returns the features removed. `x86` uses it so that a host with AVX-512
/// but without AVX-512 BF16 or VNNI (Skylake-SP, Cascade Lake, Ice Lake) is searched with the
/// kernels it can run, instead of getting a kernel that `run` and `bench` then refuse.
pub(super) fn keep_host_features(
    description: &mut TargetDescription,
    host_has: impl Fn(IsaFeature) -> bool,
) -> Vec<IsaFeature> {
    let listed: Vec<IsaFeature> = description.isa.iter().filter_map(|name| name.parse().ok()).collect();
    let lacking: Vec<IsaFeature> = listed.iter().copied().filter(|&f| !host_has(f)).collect();
    if lacking.is_empty() {
        return lacking;
    }
    description.isa.retain(|name| name.parse::<IsaFeature>().map_or(true, |f| !lacking.contains(&f)));
    let has = with_implied(listed.iter().copied().filter(|f| !lacking.contains(f)));
    description.kernels.retain(|k| k.required_isa().iter().all(|f| has.contains(f)));
    lacking
}

fn resolve_builtin(name: &str) -> Result<HostResolution, TargetError> {
    let processors = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    match name {
        "x86" => {
            let host = HostFeatures::detect();
            if host.avx512 {
                Ok(HostResolution {
                    target: Target::builtin("x86-avx512", processors)?,
                    note: Some("x86 resolved to x86-avx512 (the host has AVX-512F, BW and VL)".into()),
                })
            } else if host.avx2 && host.avxvnni {
                Ok(HostResolution {
                    target: Target::builtin("x86-avx2-vnni", processors)?,
                    note: Some(
                        "x86 resolved to x86-avx2-vnni (the host has AVX2, FMA and AVX-VNNI, not AVX-512)"
                            .into(),
                    ),
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
    avxvnni: bool,
    avx512: bool,
}

impl HostFeatures {
    #[cfg(target_arch = "x86_64")]
    fn detect() -> Self {
        let host = |features: &[IsaFeature]| features.iter().all(|f| f.on_host());
        HostFeatures {
            avx2: host(&[IsaFeature::Avx2, IsaFeature::Fma]),
            avxvnni: host(&[IsaFeature::Avxvnni]),
            avx512: host(&[IsaFeature::Avx512f, IsaFeature::Avx512bw, IsaFeature::Avx512vl]),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn detect() -> Self {
        HostFeatures { avx2: false, avxvnni: false, avx512: false }
    }
}
