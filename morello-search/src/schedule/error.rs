//! [`ScheduleError`]: why a schedule step, a schedule file or a synthesis was refused.

use crate::error::SearchError;

/// Why a schedule could not take a step, be read, or be completed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A step that the search could not take on the spec it was applied to (the user's schedule).
    #[error("`{step}` cannot apply to {spec}: {why}")]
    Illegal {
        /// The step, as its text form writes it.
        step: String,
        /// The spec it was applied to.
        spec: String,
        /// Why not.
        why: Box<Refusal>,
    },
    /// The search could not complete an open leaf (stopped, or nothing fits its memory limits).
    #[error("cannot synthesize {spec}: {source}")]
    Synthesis {
        /// The open leaf's spec.
        spec: String,
        /// The search's error.
        source: Box<SearchError>,
    },
    /// A line of a schedule file is not a step (the file's fault): its line and column, 1-based.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// The line.
        line: usize,
        /// The column (in characters).
        column: usize,
        /// What was expected.
        message: String,
    },
    /// A step of a schedule file was refused: the line and column of the step, and why.
    #[error("line {line}, column {column}: {source}")]
    AtLine {
        /// The line.
        line: usize,
        /// The column (in characters).
        column: usize,
        /// The refusal.
        source: Box<ScheduleError>,
    },
    /// The finished implementation does not fit the schedule's memory limits (its own allocations
    /// plus what synthesis chose add up to more than a level holds).
    #[error("the scheduled implementation of {spec} needs {peaks}, above the limits {limits}")]
    TooLarge {
        /// The scheduled spec.
        spec: String,
        /// The implementation's peak memory.
        peaks: String,
        /// The limits.
        limits: String,
    },
    /// An implementation has a node that is not one of its spec's actions, so it has no schedule
    /// (a tree built under another action configuration or target).
    #[error("no schedule step builds the node `{node}` of {spec}")]
    NotAnAction {
        /// The node's description.
        node: String,
        /// Its spec.
        spec: String,
    },
}

/// Why a step is refused; each says what to do instead where there is something to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Every leaf on the default path is already implemented.
    #[error("no open leaf is left on the default path (use `sub PATH {{ ... }}` for another leaf)")]
    NoOpenLeaf,
    /// A node on the default path has several children and none is the default.
    #[error(
        "the node `{node}` has {children} children and none is the default: name one with `sub PATH {{ ... }}`"
    )]
    AmbiguousLeaf {
        /// The node's action.
        node: String,
        /// Its children.
        children: usize,
    },
    /// A `sub` path names a child that does not exist.
    #[error("path {path} has no child {index} at its step {depth} (that node has {children} children)")]
    NoSuchChild {
        /// The path as written.
        path: String,
        /// Which step of the path (1-based).
        depth: usize,
        /// The child asked for.
        index: usize,
        /// The children there are.
        children: usize,
    },
    /// An operand index or name the spec does not have.
    #[error("operand {operand} does not exist: the spec's operands are {operands}")]
    NoSuchOperand {
        /// The operand as written.
        operand: String,
        /// The spec's operands, by index and name.
        operands: String,
    },
    /// A level name the target does not have.
    #[error("the target has no level `{level}` (its levels: {levels})")]
    NoSuchLevel {
        /// The name.
        level: String,
        /// The target's levels.
        levels: String,
    },
    /// The operand's level does not move to the level asked for.
    #[error("operand {operand} is in {from}, which moves only to {reachable}")]
    UnreachableLevel {
        /// The operand.
        operand: String,
        /// Its level.
        from: String,
        /// The levels it moves to.
        reachable: String,
    },
    /// A layout that does not parse or does not fit the operand's shape.
    #[error("layout `{layout}` is not valid for the operand's shape {shape}: {message}")]
    BadLayout {
        /// The layout as written.
        layout: String,
        /// The operand's shape.
        shape: String,
        /// Why.
        message: String,
    },
    /// The moved operand does not fit the level (or what the schedule left of it).
    #[error("the moved operand needs {needs} of {level}, but {available} is available there")]
    DoesNotFit {
        /// The level.
        level: String,
        /// What the move holds.
        needs: u64,
        /// What is left of the level's capacity or the schedule's limits.
        available: u64,
    },
    /// No move of the search takes the operand there in that layout and vector size.
    #[error("the search does not move it there that way; the moves it offers there: {offered}")]
    NoSuchMove {
        /// The destinations the search offers at that level.
        offered: String,
    },
    /// `pack` asked where the search only makes a cache view (or nothing).
    #[error("the search makes no packed copy there; the moves it offers there: {offered}")]
    NoPacking {
        /// The destinations the search offers at that level.
        offered: String,
    },
    /// A tile shape whose rank is not the output's.
    #[error("the shape has {given} dims but the output has {expected}")]
    RankMismatch {
        /// The dims given.
        given: usize,
        /// The output's rank.
        expected: usize,
    },
    /// A tile size of zero, or larger than its dim.
    #[error("tile size {size} of dim {dim} is outside 1..={extent}")]
    SizeOutOfRange {
        /// The dim's name.
        dim: String,
        /// The size asked for.
        size: u32,
        /// The dim's extent.
        extent: u32,
    },
    /// A tile shape equal to the whole output: nothing to tile.
    #[error("the tile is the whole iteration space: nothing to tile")]
    NothingToTile,
    /// A size the search's tile sizes do not include.
    #[error(
        "the search does not try size {size} on dim {dim} (it tries {tried}; `--all-tile-sizes` tries every size)"
    )]
    SizeNotTried {
        /// The dim's name.
        dim: String,
        /// The size asked for.
        size: u32,
        /// The sizes it tries.
        tried: String,
    },
    /// The tile does not cut the operands into tiles their layouts and vector registers hold (a
    /// packed layout's strip or a vector split in two, or a sliding window that does not fit).
    #[error("a tile of {size} on dim {dim} does not cut the operands' layouts or vectors into whole tiles")]
    TileDoesNotFit {
        /// The dim's name.
        dim: String,
        /// The size asked for.
        size: u32,
    },
    /// `split` (or a tile of a reduction dim) on a spec that overwrites its output.
    #[error("the spec overwrites its output, so its reduction cannot be split: apply `to_accum` first")]
    NotAccumulating,
    /// `split` on an operator without exactly one reduction dim.
    #[error("`split` needs exactly one reduction dim, and this operator has {count}: use `tile DIM SIZE`")]
    NoSingleReduction {
        /// The reduction dims.
        count: usize,
    },
    /// A dim name the operator does not have.
    #[error("no iteration dim `{dim}` (the dims: {dims})")]
    NoSuchDim {
        /// The name.
        dim: String,
        /// The operator's dims.
        dims: String,
    },
    /// A parallel tile where the search takes none.
    #[error("no parallel loop here: {reason}")]
    NotParallel {
        /// Why.
        reason: String,
    },
    /// A kernel name that does not exist.
    #[error("no kernel is named `{kernel}`")]
    NoSuchKernel {
        /// The name.
        kernel: String,
    },
    /// A kernel the target does not have.
    #[error("target {target} has no kernel {kernel}")]
    KernelNotOnTarget {
        /// The kernel.
        kernel: String,
        /// The target.
        target: String,
    },
    /// A kernel that does not implement this spec.
    #[error("kernel {kernel} does not implement this spec (the kernels that do: {applicable})")]
    KernelDoesNotApply {
        /// The kernel.
        kernel: String,
        /// The kernels that do.
        applicable: String,
    },
    /// A rewrite that does not apply to this spec.
    #[error("it does not apply here; the kinds of step that do: {offered}")]
    NotApplicable {
        /// The kinds of step the search offers on this spec.
        offered: String,
    },
    /// The step exists, but a sub-spec it makes can never reach a kernel.
    #[error("no kernel can implement its sub-spec {child}")]
    Infeasible {
        /// The sub-spec.
        child: String,
    },
}
