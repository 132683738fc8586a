//! Targets as data: memory levels, vector widths, processors, kernels and cost constants.
//!
//! A [`Target`] is a validated value, never a type parameter: the built-in x86 targets
//! ([`Target::builtin`]) and targets read from TOML or JSON ([`Target::from_toml`],
//! [`Target::from_json`]) are the same type. Levels are listed from the slowest (where user
//! tensors live) to the fastest; a [`LevelId`] is an index into that list.
//!
//! This module does no I/O: the CLI reads files and passes their text here.

mod builtin;
mod costs;
mod file;
mod memvec;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kernel_kind::KernelKind;

pub use crate::isa::{Architecture, IsaFeature, UnknownIsaFeature, with_implied};
pub use crate::kernel_kind::KernelCost;
pub use builtin::{
    HOST_CACHES_MARK, HostCache, HostCacheKind, HostResolution, resolve_target, resolve_target_on_host,
};
pub use costs::CostConstants;
pub use file::{TargetDescription, TargetError, parse_size};
pub use memvec::{MAX_LEVELS, MemVec};

/// The index of a memory level in its target's level list (slowest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LevelId(pub u8);

impl LevelId {
    /// The index as a `usize`.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What kind of storage a memory level is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LevelKind {
    /// Scalar registers: one element per register; capacity counts registers.
    ScalarRegisters,
    /// Vector registers: capacity counts registers of the widest vector width.
    VectorRegisters,
    /// A hardware-managed cache: moving a tile here without changing its layout allocates nothing
    /// new, it only claims capacity. Capacity in bytes.
    Cache,
    /// Addressable memory (main memory, HBM, VMEM): capacity in bytes.
    Memory,
}

impl LevelKind {
    /// Whether capacity counts registers rather than bytes.
    pub const fn counts_registers(self) -> bool {
        matches!(self, LevelKind::ScalarRegisters | LevelKind::VectorRegisters)
    }
}

/// One memory level of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLevel {
    /// Short name used in specs and on the command line (`GL`, `L1`, `VRF`, ...).
    pub name: String,
    /// The kind of storage.
    pub kind: LevelKind,
    /// Registers (for register levels) or bytes.
    pub capacity: u64,
    /// Vector widths in bytes that registers of this level hold (vector registers only).
    pub vector_bytes: Vec<u32>,
    /// Cost of touching one cache line of a tensor stored here.
    pub cost_per_line: u64,
    /// Extra lines' worth charged for each contiguous run of a tensor stored here (starting a
    /// stream the prefetchers must pick up, often on a new page), so that a tile read as many
    /// short runs costs more than the same lines in a few long ones.
    pub run_overhead_lines: u64,
    /// Cost of a cache line moved between here and vector registers by a vector load or store
    /// kernel, when it differs from `cost_per_line` (see [`MemoryLevel::vector_cost_per_line`]).
    pub load_cost_per_line: Option<u64>,
    /// What each line a register block's loads bring from here costs the load side of its step,
    /// beside the loads' issue (`CostConstants::load_issue`): the rate at which this level refills
    /// the fastest cache, in cost units per line (0 for the fastest cache and registers). See
    /// [`crate::cost::register_block::register_step_stall`].
    pub fill_cost_per_line: u64,
    /// What each such line costs instead when the register block reads its vector side as a
    /// *strided* stream: each of its rows a separate run of the buffer (a column of a row-major
    /// matrix), where the prefetchers start over at every row and, at a pitch of a page or more,
    /// on a new page; `None`: as `fill_cost_per_line`. A packed panel, read as one run, pays
    /// `fill_cost_per_line` ([`MemoryLevel::fill_cost`]).
    pub strided_fill_cost_per_line: Option<u64>,
    /// Whether a parallel loop may split tensors that live here.
    pub parallel: bool,
    /// Whether a move may allocate a new buffer here (to change the layout, or to pack a tile).
    /// Cache views and register moves are always allowed.
    pub allocates: bool,
    /// Whether a move may pack a matmul operand into a new buffer here in a layout a register
    /// microkernel consumes (panels as wide as a register block), even where `allocates` is false,
    /// where a cache view of it would crowd some set beyond the cache's ways: the copies BLAS
    /// libraries make, and only those, so the space stays small.
    pub packs: bool,
    /// Levels a tensor here may be moved to (strictly faster: the move graph is acyclic).
    pub moves_to: Vec<LevelId>,
    /// How a cache maps addresses to lines (caches only; `None` if the description gives none, and
    /// then the cost model counts capacity only, never set conflicts).
    pub geometry: Option<CacheGeometry>,
}

/// The geometry of a set-associative cache: `sets` sets of `ways` lines of `line_bytes` bytes. A
/// line at byte address `a` can only live in set `(a / line_bytes) mod sets`, so a tile whose
/// rows are a multiple of `line_bytes * sets` apart competes for one set per column of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CacheGeometry {
    /// Bytes per line (a power of two).
    pub line_bytes: u32,
    /// Lines per set (the associativity).
    pub ways: u32,
    /// Sets (a power of two).
    pub sets: u32,
}

impl CacheGeometry {
    /// Bytes one way spans: addresses this far apart map to the same set.
    pub const fn way_bytes(&self) -> u64 {
        self.line_bytes as u64 * self.sets as u64
    }

    /// The cache's capacity in bytes.
    pub const fn capacity(&self) -> u64 {
        self.way_bytes() * self.ways as u64
    }
}

impl MemoryLevel {
    /// Cost of a cache line that a vector load or store kernel moves straight between this level
    /// and vector registers: `load_cost_per_line` if set, else `cost_per_line`. Vector loads from
    /// a cache the hardware prefetches into can stream at close to the rate of the faster level,
    /// overlapped with arithmetic, although a tensor viewed or copied there costs `cost_per_line`.
    pub fn vector_cost_per_line(&self) -> u64 {
        self.load_cost_per_line.unwrap_or(self.cost_per_line)
    }

    /// What a line a register block's loads bring from here costs its step's load side:
    /// `strided_fill_cost_per_line` (if set) for a strided stream, else `fill_cost_per_line`.
    pub fn fill_cost(&self, strided: bool) -> u64 {
        if strided {
            self.strided_fill_cost_per_line.unwrap_or(self.fill_cost_per_line)
        } else {
            self.fill_cost_per_line
        }
    }
}

/// A validated target description.
///
/// # Invariants
/// At least one level; at most [`MAX_LEVELS`]; names unique; the move graph acyclic; vector widths
/// exactly on vector-register levels, each a multiple of every dtype size that uses it; capacities
/// positive; at least one processor; the cache line a power of two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    name: String,
    description: String,
    levels: Vec<MemoryLevel>,
    cache_line_bytes: u32,
    processors: u32,
    isa: Vec<IsaFeature>,
    kernels: Vec<KernelKind>,
    costs: CostConstants,
}

impl Target {
    /// The target's name (`x86-avx2`, or the name in its file).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A one-line description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Memory levels, slowest first.
    pub fn levels(&self) -> &[MemoryLevel] {
        &self.levels
    }

    /// One level.
    ///
    /// # Panics
    /// If `id` is not a level of this target (a caller bug: ids come from this target).
    pub fn level(&self, id: LevelId) -> &MemoryLevel {
        &self.levels[id.index()]
    }

    /// The id of the level called `name` (case-insensitive).
    pub fn level_id(&self, name: &str) -> Option<LevelId> {
        self.levels.iter().position(|l| l.name.eq_ignore_ascii_case(name)).map(|i| LevelId(i as u8))
    }

    /// Every level id, slowest first.
    pub fn level_ids(&self) -> impl Iterator<Item = LevelId> + '_ {
        (0..self.levels.len()).map(|i| LevelId(i as u8))
    }

    /// The level where user tensors live by default: the slowest one.
    pub fn home_level(&self) -> LevelId {
        LevelId(0)
    }

    /// Bytes per cache line.
    pub fn cache_line_bytes(&self) -> u32 {
        self.cache_line_bytes
    }

    /// How many processors a parallel loop may use.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// The ISA features the target lists, as written (`avx2`, `fma`, `avx512f`, ...).
    pub fn isa(&self) -> &[IsaFeature] {
        &self.isa
    }

    /// The ISA features emitted code may use: those listed and every one they imply.
    pub fn isa_with_implied(&self) -> std::collections::BTreeSet<IsaFeature> {
        with_implied(self.isa.iter().copied())
    }

    /// Whether the target has an ISA feature, listed or implied by one listed (`avx2` implies
    /// `avx`).
    pub fn has_isa(&self, feature: IsaFeature) -> bool {
        self.isa.contains(&feature) || self.isa_with_implied().contains(&feature)
    }

    /// The architecture the target's code is built for: that of its ISA features (all of one, a
    /// rule of target files), or `None` for a target that lists none (its code is portable C and
    /// is built for the host).
    pub fn architecture(&self) -> Option<Architecture> {
        self.isa.first().map(|f| f.architecture())
    }

    /// Whether the target's code may use fused multiply-adds of f32 vectors: x86 `fma`, or NEON
    /// (every AArch64 core has them).
    pub fn has_fused_multiply_add(&self) -> bool {
        self.has_isa(IsaFeature::Fma) || self.has_isa(IsaFeature::Neon)
    }

    /// The kernels the search may select, in a fixed order.
    pub fn kernels(&self) -> &[KernelKind] {
        &self.kernels
    }

    /// Cost constants.
    pub fn costs(&self) -> &CostConstants {
        &self.costs
    }

    /// Whether a tensor at `level` is, or can move to, a level parallel loops may split.
    pub fn can_reach_parallel(&self, level: LevelId) -> bool {
        let l = self.level(level);
        l.parallel || l.moves_to.iter().any(|&d| self.can_reach_parallel(d))
    }

    /// Whether a tensor at `level` can move to a cache (a faster one: `level` is not the fastest).
    pub fn moves_to_a_cache(&self, level: LevelId) -> bool {
        self.level(level).moves_to.iter().any(|&d| self.level(d).kind == LevelKind::Cache)
    }

    /// The capacity of every level, as a memory vector (the default memory limits).
    pub fn capacities(&self) -> MemVec {
        MemVec::from_fn(self.levels.len(), |i| self.levels[i].capacity)
    }

    /// The widest vector, in bytes, that any vector-register level holds (0 if none).
    pub fn max_vector_bytes(&self) -> u32 {
        self.levels.iter().flat_map(|l| l.vector_bytes.iter().copied()).max().unwrap_or(0)
    }

    /// The description this target was built from (what a target file holds).
    pub fn description_value(&self) -> TargetDescription {
        file::describe(self)
    }

    /// This target with `processors` processors for parallel loops: a different target, with its
    /// own fingerprint (and memo tables), unless the count is unchanged.
    ///
    /// # Errors
    /// [`TargetError::Invalid`] for zero processors (or a count the description rules refuse).
    pub fn with_processors(&self, processors: u32) -> Result<Target, TargetError> {
        if processors == self.processors {
            return Ok(self.clone());
        }
        let mut description = self.description_value();
        description.processors = processors;
        Target::new(description)
    }

    /// A copy with different cost constants (for calibration).
    pub fn with_costs(&self, costs: CostConstants) -> Target {
        Target { costs, ..self.clone() }
    }

    /// A stable 64-bit fingerprint of the full description (for database headers).
    pub fn fingerprint(&self) -> u64 {
        let text = serde_json::to_string(&self.description_value()).expect("a target description serialises");
        fnv1a(text.as_bytes())
    }

    /// Names of the levels, slowest first, for headers such as `peaks(GL, L2, L1, VRF, RF)`.
    pub fn level_names(&self) -> Vec<&str> {
        self.levels.iter().map(|l| l.name.as_str()).collect()
    }

    /// The span of addresses over which the set mapping of every cache level with a geometry
    /// repeats (the largest `line_bytes * sets`), or `None` if no level has a geometry. Buffer
    /// strides are kept modulo this in specs ([`crate::spec::TensorSpec::pitch`]): two strides
    /// congruent modulo it place a tile's lines in the same sets of every cache.
    pub fn set_period_bytes(&self) -> Option<u64> {
        self.levels.iter().filter_map(|l| l.geometry.map(|g| g.way_bytes())).max()
    }

    /// The fewest ways of any cache level with a geometry (`None` if none has one): a tensor of at
    /// most this many lines fits in every such cache wherever its lines fall.
    pub fn min_ways(&self) -> Option<u32> {
        self.levels.iter().filter_map(|l| l.geometry.map(|g| g.ways)).min()
    }

    /// Kernel costs by kernel (defaults filled in).
    pub fn kernel_costs(&self) -> &BTreeMap<KernelKind, KernelCost> {
        &self.costs.kernels
    }
}

/// 64-bit FNV-1a, a small stable hash for fingerprints (not cryptographic).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests;
