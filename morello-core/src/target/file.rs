//! Target descriptions as files (TOML or JSON) and their validation.
//!
//! ```toml
//! name = "tpu-like"
//! cache_line_bytes = 128
//! processors = 1
//! kernels = ["MultAdd", "MemsetZero", "ValueAssign"]
//!
//! [[levels]]
//! name = "HBM"
//! kind = "memory"
//! capacity = "16GiB"
//! cost_per_line = 40
//! parallel = true
//! moves_to = ["VMEM"]
//! ```
//!
//! Capacities are integers or strings with a `KiB`, `MiB`, `GiB` or `TiB` suffix.

use serde::{Deserialize, Serialize};

use super::{CacheGeometry, CostConstants, IsaFeature, LevelId, LevelKind, MAX_LEVELS, MemoryLevel, Target};
use crate::kernel_kind::KernelKind;

/// Why a target description is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The file is not valid TOML/JSON or has unknown or missing fields (the user's file).
    #[error("cannot read the target description: {0}")]
    Syntax(String),
    /// A rule of target descriptions is broken (the user's file).
    #[error("invalid target `{target}`: {message}")]
    Invalid {
        /// The target's name.
        target: String,
        /// Which rule, and where.
        message: String,
    },
    /// No built-in target has this name (the user's input).
    #[error(
        "unknown target `{0}`; built-in targets are x86, x86-avx2, x86-avx2-vnni, x86-avx512 and arm-neon, or give a target file"
    )]
    Unknown(String),
    /// The host cannot run the built-in target asked for (the machine).
    #[error("{0}")]
    HostUnsupported(String),
}

/// A memory capacity as written in a file: an integer, or a string such as `32KiB`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Capacity {
    /// A plain number.
    Number(u64),
    /// A number with a binary suffix.
    Text(String),
}

impl Capacity {
    fn value(&self) -> Result<u64, String> {
        match self {
            Capacity::Number(n) => Ok(*n),
            Capacity::Text(text) => parse_size(text),
        }
    }
}

/// Parses `32KiB`, `1MiB`, `4GiB`, `1TiB`, `512B` or a plain number.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, multiplier) =
        [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
            .iter()
            .find_map(|(suffix, m)| t.strip_suffix(suffix).map(|d| (d.trim(), *m)))
            .unwrap_or((t, 1));
    let n: u64 = digits.parse().map_err(|_| {
        format!("`{text}` is not a size; write a number, optionally with KiB, MiB, GiB or TiB")
    })?;
    n.checked_mul(multiplier).ok_or_else(|| format!("`{text}` is too large"))
}

/// One level as written in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelDescription {
    /// Short name.
    pub name: String,
    /// `scalar-registers`, `vector-registers`, `cache` or `memory`.
    pub kind: LevelKind,
    /// Registers, or bytes.
    pub capacity: Capacity,
    /// Vector widths in bytes (vector registers only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_bytes: Vec<u32>,
    /// Cost of touching one cache line here.
    #[serde(default)]
    pub cost_per_line: u64,
    /// Extra lines' worth charged per contiguous run of a tensor here (default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub run_overhead_lines: u64,
    /// Cost of a cache line read from (or written to) here by a vector load or store straight
    /// into (or from) vector registers (default: `cost_per_line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cost_per_line: Option<u64>,
    /// What a line a register block's loads bring from here costs the load side of its step
    /// (default 0: the fastest cache; `docs/cost-model.md`, "Register blocks").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fill_cost_per_line: u64,
    /// What such a line costs when the block reads its vector side as a strided stream, each row a
    /// run of its own (default: `fill_cost_per_line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strided_fill_cost_per_line: Option<u64>,
    /// Whether parallel loops may split tensors here.
    #[serde(default)]
    pub parallel: bool,
    /// Whether moves may allocate new buffers here (default true); cache views are always allowed.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub allocates: bool,
    /// Whether moves may pack matmul operands into new buffers here in the panel layouts register
    /// microkernels consume, where a cache view would crowd a set (default false; caches only).
    #[serde(default, skip_serializing_if = "is_false")]
    pub packs: bool,
    /// Names of levels a tensor here may move to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves_to: Vec<String>,
    /// Associativity of a cache level (lines per set); with it the cost model counts the sets a
    /// tile's lines fall into. Caches only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ways: Option<u32>,
    /// Sets of a cache level (default: capacity / (ways * line_bytes)); needs `ways`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<u32>,
    /// Line size of a cache level in bytes (default: the target's `cache_line_bytes`); needs `ways`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_bytes: Option<u32>,
}

/// A target as written in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDescription {
    /// Name.
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Bytes per cache line.
    pub cache_line_bytes: u32,
    /// Processors available to parallel loops.
    pub processors: u32,
    /// ISA features by name (`avx2`, `fma`, `avx512f`, ...: see [`IsaFeature`]).
    #[serde(default)]
    pub isa: Vec<String>,
    /// Levels, slowest first.
    pub levels: Vec<LevelDescription>,
    /// Kernels by name.
    pub kernels: Vec<KernelKind>,
    /// Cost constants (defaults where missing).
    #[serde(default)]
    pub costs: CostConstants,
}

impl TargetDescription {
    /// The description as TOML text, which [`Target::from_toml`] reads back to the same target;
    /// capacities that are whole KiB, MiB, GiB or TiB are written with that suffix (`32KiB`).
    ///
    /// # Errors
    /// [`TargetError::Syntax`] if TOML cannot hold a value (an integer above 2^63).
    pub fn to_toml(&self) -> Result<String, TargetError> {
        let mut desc = self.clone();
        for level in &mut desc.levels {
            if let Capacity::Number(n) = level.capacity {
                level.capacity = format_size(n);
            }
        }
        toml::to_string(&desc).map_err(|e| TargetError::Syntax(one_line(&e.to_string())))
    }
}

/// `n` bytes with the largest binary suffix that divides it exactly (`32KiB`), else the number.
fn format_size(n: u64) -> Capacity {
    [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .iter()
        .find(|(_, m)| n >= *m && n % m == 0)
        .map_or(Capacity::Number(n), |(suffix, m)| Capacity::Text(format!("{}{suffix}", n / m)))
}

impl Target {
    /// Reads a target from TOML text.
    ///
    /// # Errors
    /// [`TargetError`] for malformed text or a description that breaks a rule.
    pub fn from_toml(text: &str) -> Result<Target, TargetError> {
        let desc: TargetDescription =
            toml::from_str(text).map_err(|e| TargetError::Syntax(one_line(&e.to_string())))?;
        Target::new(desc)
    }

    /// Reads a target from JSON text.
    ///
    /// # Errors
    /// [`TargetError`] for malformed text or a description that breaks a rule.
    pub fn from_json(text: &str) -> Result<Target, TargetError> {
        let desc: TargetDescription =
            serde_json::from_str(text).map_err(|e| TargetError::Syntax(one_line(&e.to_string())))?;
        Target::new(desc)
    }

    /// Validates a description.
    ///
    /// # Errors
    /// [`TargetError::Invalid`] naming the broken rule.
    pub fn new(desc: TargetDescription) -> Result<Target, TargetError> {
        let invalid = |message: String| TargetError::Invalid { target: desc.name.clone(), message };
        if desc.name.trim().is_empty() {
            return Err(invalid("the name is empty".into()));
        }
        if desc.levels.is_empty() || desc.levels.len() > MAX_LEVELS {
            return Err(invalid(format!(
                "a target needs 1 to {MAX_LEVELS} levels, found {}",
                desc.levels.len()
            )));
        }
        if desc.processors == 0 {
            return Err(invalid("processors must be at least 1".into()));
        }
        if !desc.cache_line_bytes.is_power_of_two() {
            return Err(invalid(format!(
                "cache_line_bytes must be a power of two, found {}",
                desc.cache_line_bytes
            )));
        }
        let isa = desc
            .isa
            .iter()
            .map(|name| name.parse::<IsaFeature>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(e.to_string()))?;
        if let Some(other) = isa.iter().find(|f| f.architecture() != isa[0].architecture()) {
            return Err(invalid(format!(
                "the ISA features `{}` ({}) and `{other}` ({}) belong to two architectures; a target's code is built for one",
                isa[0],
                isa[0].architecture(),
                other.architecture()
            )));
        }
        for (i, level) in desc.levels.iter().enumerate() {
            if desc.levels[..i].iter().any(|l| l.name.eq_ignore_ascii_case(&level.name)) {
                return Err(invalid(format!("level name `{}` is used twice", level.name)));
            }
        }
        let mut levels = Vec::with_capacity(desc.levels.len());
        for (i, level) in desc.levels.iter().enumerate() {
            let capacity =
                level.capacity.value().map_err(|e| invalid(format!("level `{}`: {e}", level.name)))?;
            if capacity == 0 {
                return Err(invalid(format!("level `{}` has capacity 0", level.name)));
            }
            if level.kind.counts_registers() && capacity > 127 {
                return Err(invalid(format!(
                    "level `{}` has {capacity} registers; at most 127 are supported",
                    level.name
                )));
            }
            let is_vector = level.kind == LevelKind::VectorRegisters;
            if is_vector && level.vector_bytes.is_empty() {
                return Err(invalid(format!("vector-register level `{}` needs vector_bytes", level.name)));
            }
            if !is_vector && !level.vector_bytes.is_empty() {
                return Err(invalid(format!(
                    "level `{}` is not vector registers but lists vector_bytes",
                    level.name
                )));
            }
            if let Some(w) = level.vector_bytes.iter().find(|w| **w == 0 || !w.is_power_of_two()) {
                return Err(invalid(format!(
                    "level `{}`: vector width {w} is not a power of two",
                    level.name
                )));
            }
            if level.kind.counts_registers() && level.parallel {
                return Err(invalid(format!("register level `{}` cannot be parallel", level.name)));
            }
            let mut moves_to = Vec::new();
            for dest in &level.moves_to {
                let j =
                    desc.levels.iter().position(|l| l.name.eq_ignore_ascii_case(dest)).ok_or_else(|| {
                        invalid(format!("level `{}` moves to unknown level `{dest}`", level.name))
                    })?;
                if j <= i {
                    return Err(invalid(format!(
                        "level `{}` moves to `{dest}`, which is not listed after it; moves go from slower to faster levels",
                        level.name
                    )));
                }
                moves_to.push(LevelId(j as u8));
            }
            let geometry = geometry(level, capacity, desc.cache_line_bytes).map_err(&invalid)?;
            if level.packs && level.kind != LevelKind::Cache {
                return Err(invalid(format!("level `{}` is not a cache but packs", level.name)));
            }
            let mut vector_bytes = level.vector_bytes.clone();
            vector_bytes.sort_unstable();
            vector_bytes.dedup();
            levels.push(MemoryLevel {
                name: level.name.clone(),
                kind: level.kind,
                capacity,
                vector_bytes,
                cost_per_line: level.cost_per_line,
                run_overhead_lines: level.run_overhead_lines,
                load_cost_per_line: level.load_cost_per_line,
                fill_cost_per_line: level.fill_cost_per_line,
                strided_fill_cost_per_line: level.strided_fill_cost_per_line,
                parallel: level.parallel,
                allocates: level.allocates,
                packs: level.packs,
                moves_to,
                geometry,
            });
        }
        let mut kernels = desc.kernels.clone();
        kernels.sort();
        kernels.dedup();
        let target = Target {
            name: desc.name.clone(),
            description: desc.description.clone(),
            levels,
            cache_line_bytes: desc.cache_line_bytes,
            processors: desc.processors,
            isa,
            kernels,
            costs: desc.costs.clone(),
        };
        for kernel in &target.kernels {
            if let Some(missing) = kernel.required_isa().iter().find(|f| !target.has_isa(**f)) {
                return Err(invalid(format!("kernel {kernel} needs the ISA feature `{missing}`")));
            }
        }
        Ok(target)
    }
}

pub(super) fn describe(target: &Target) -> TargetDescription {
    TargetDescription {
        name: target.name.clone(),
        description: target.description.clone(),
        cache_line_bytes: target.cache_line_bytes,
        processors: target.processors,
        isa: target.isa.iter().map(|f| f.name().to_string()).collect(),
        levels: target
            .levels
            .iter()
            .map(|l| LevelDescription {
                name: l.name.clone(),
                kind: l.kind,
                capacity: Capacity::Number(l.capacity),
                vector_bytes: l.vector_bytes.clone(),
                cost_per_line: l.cost_per_line,
                run_overhead_lines: l.run_overhead_lines,
                load_cost_per_line: l.load_cost_per_line,
                fill_cost_per_line: l.fill_cost_per_line,
                strided_fill_cost_per_line: l.strided_fill_cost_per_line,
                parallel: l.parallel,
                allocates: l.allocates,
                packs: l.packs,
                moves_to: l.moves_to.iter().map(|id| target.levels[id.index()].name.clone()).collect(),
                ways: l.geometry.map(|g| g.ways),
                sets: l.geometry.map(|g| g.sets),
                line_bytes: l.geometry.map(|g| g.line_bytes),
            })
            .collect(),
        kernels: target.kernels.clone(),
        costs: target.costs.clone(),
    }
}

/// The geometry a level's `ways`, `sets` and `line_bytes` describe, checked against its kind and
/// capacity: caches only, `ways` given whenever the others are, powers of two for sets and lines,
/// and `line_bytes * ways * sets` equal to the capacity.
fn geometry(
    level: &LevelDescription,
    capacity: u64,
    target_line: u32,
) -> Result<Option<CacheGeometry>, String> {
    let name = &level.name;
    let Some(ways) = level.ways else {
        if level.sets.is_some() || level.line_bytes.is_some() {
            return Err(format!("level `{name}` gives sets or line_bytes without ways"));
        }
        return Ok(None);
    };
    if level.kind != LevelKind::Cache {
        return Err(format!("level `{name}` is not a cache but gives ways"));
    }
    let line_bytes = level.line_bytes.unwrap_or(target_line);
    if ways == 0 || line_bytes == 0 || !line_bytes.is_power_of_two() {
        return Err(format!(
            "level `{name}`: ways must be at least 1 and line_bytes a power of two, found {ways} and {line_bytes}"
        ));
    }
    let way_lines = u64::from(ways) * u64::from(line_bytes);
    let sets = match level.sets {
        Some(sets) => u64::from(sets),
        None if capacity % way_lines == 0 => capacity / way_lines,
        None => {
            return Err(format!(
                "level `{name}`: capacity {capacity} is not a whole number of sets of {ways} ways of {line_bytes}-byte lines"
            ));
        }
    };
    let Ok(sets) = u32::try_from(sets) else {
        return Err(format!("level `{name}`: {sets} sets are too many"));
    };
    if sets == 0 || !sets.is_power_of_two() {
        return Err(format!("level `{name}`: sets must be a power of two, found {sets}"));
    }
    let geometry = CacheGeometry { line_bytes, ways, sets };
    if geometry.capacity() != capacity {
        return Err(format!(
            "level `{name}`: {sets} sets x {ways} ways x {line_bytes}-byte lines is {} bytes, not its capacity {capacity}",
            geometry.capacity()
        ));
    }
    Ok(Some(geometry))
}

fn yes() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
