//! Which level placements can ever reach a kernel: a sound filter on moves.
//!
//! The abstract state of a spec is its kind and, per operand, its level and dtype (shapes and
//! layouts forgotten). From a state, tiling keeps the state; a move changes one operand's level
//! (with a copy-in and copy-out that must themselves be feasible); zero-then-accumulate switches
//! to the accumulating kind and needs a feasible zero fill; an operator's own rewrites give its
//! parts (`PrimitiveKind::parts`: softmax's passes, a matmul and its epilogue, the matmul a
//! convolution is), which must all be feasible; a kernel ends the path when its
//! [`KernelKind::could_apply`] holds. A spec whose state has no path to a kernel has no
//! implementation, so the search never generates one: this cannot lose an optimum. Operands in
//! vector registers never move again, so a spec with some is also checked against the shapes and
//! layouts kernels need after tiling.
//!
//! [`KernelKind::could_apply`]: morello_core::kernels::KernelKind::could_apply

use dashmap::DashMap;
use morello_core::dtype::Dtype;
use morello_core::operators::{KernelReach, Parts};
use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::{LevelId, LevelKind, Target};
use rustc_hash::FxBuildHasher;
use smallvec::SmallVec;

/// The abstract state of a spec (operands beyond [`MAX_OPERANDS`] are not expected: primitives
/// have at most four).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    kind: PrimitiveKind,
    levels: SmallVec<[LevelId; MAX_OPERANDS]>,
    dtypes: SmallVec<[Dtype; MAX_OPERANDS]>,
}

const MAX_OPERANDS: usize = 4;

/// Memoised feasibility of abstract states for one target.
#[derive(Debug)]
pub struct Feasibility<'t> {
    target: &'t Target,
    cache: DashMap<State, bool, FxBuildHasher>,
}

impl<'t> Feasibility<'t> {
    /// An empty cache for `target`.
    pub fn new(target: &'t Target) -> Self {
        Feasibility { target, cache: DashMap::with_hasher(FxBuildHasher) }
    }

    /// Whether `spec` may have an implementation: its abstract state can reach a kernel, and, if
    /// some operands are in vector registers (where they stay), some kernel could take them after
    /// tiling ([`KernelKind::could_apply_after_tiling`]).
    ///
    /// [`KernelKind::could_apply_after_tiling`]: morello_core::kernels::KernelKind::could_apply_after_tiling
    pub fn spec(&self, spec: &CanonicalSpec) -> bool {
        let levels_ok = self.state(State {
            kind: spec.kind,
            levels: spec.operands.iter().map(|o| o.level).collect(),
            dtypes: spec.operands.iter().map(|o| o.dtype).collect(),
        });
        let in_vectors =
            spec.operands.iter().any(|o| self.target.level(o.level).kind == LevelKind::VectorRegisters);
        // An operator that reaches kernels only through its parts (a convolution as a matmul) has
        // the kernels' tiling rules checked there.
        let through_parts = spec.kind.kernel_reach() == KernelReach::Parts;
        levels_ok
            && (!in_vectors
                || through_parts
                || self.target.kernels().iter().any(|k| k.could_apply_after_tiling(spec, self.target)))
    }

    /// As [`Feasibility::spec`], for an explicit kind, levels and dtypes.
    pub fn levels(&self, kind: PrimitiveKind, levels: &[LevelId], dtypes: &[Dtype]) -> bool {
        self.state(State { kind, levels: SmallVec::from_slice(levels), dtypes: SmallVec::from_slice(dtypes) })
    }

    fn state(&self, state: State) -> bool {
        if let Some(known) = self.cache.get(&state) {
            return *known;
        }
        let result = self.compute(&state);
        self.cache.insert(state, result);
        result
    }

    fn compute(&self, s: &State) -> bool {
        let target = self.target;
        let kinds: Vec<LevelKind> = s.levels.iter().map(|&l| target.level(l).kind).collect();
        if target.kernels().iter().any(|k| k.could_apply(s.kind, &kinds, &s.dtypes, target)) {
            return true;
        }
        // The operator's own rewrites: any alternative whose parts are all feasible.
        let parts = s.kind.parts(&s.levels, &s.dtypes, target);
        let (Parts::Also(alternatives) | Parts::Only(alternatives)) = &parts else { return self.usual(s) };
        if alternatives.iter().any(|all| all.iter().all(|p| self.levels(p.kind, &p.levels, &p.dtypes))) {
            return true;
        }
        if matches!(parts, Parts::Only(_)) {
            return false;
        }
        self.usual(s)
    }

    /// Whether zero-then-accumulate or a move reaches a kernel from `s`.
    fn usual(&self, s: &State) -> bool {
        let target = self.target;
        if let Some(accum) = s.kind.as_accum() {
            let out = s.levels.len() - 1;
            if self.levels(accum, &s.levels, &s.dtypes)
                && self.levels(
                    PrimitiveKind::Fill { value: s.kind.accum_init() },
                    &[s.levels[out]],
                    &[s.dtypes[out]],
                )
            {
                return true;
            }
        }
        let directions = s.kind.directions();
        for (i, &level) in s.levels.iter().enumerate() {
            for &dest in &target.level(level).moves_to {
                let mut moved = s.levels.clone();
                moved[i] = dest;
                let body = || self.levels(s.kind, &moved, &s.dtypes);
                if target.level(dest).kind == LevelKind::Cache && body() {
                    return true;
                }
                let allowed = s.kind.moved_operand_shrinks(&s.levels, i, dest);
                let d = s.dtypes[i];
                let copy_in =
                    || !directions[i].reads() || self.levels(PrimitiveKind::Move, &[level, dest], &[d, d]);
                let copy_out =
                    || !directions[i].writes() || self.levels(PrimitiveKind::Move, &[dest, level], &[d, d]);
                if allowed && body() && copy_in() && copy_out() {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_no_kernel_can_finish_are_infeasible() {
        let t = Target::builtin("x86-avx2", 1).unwrap();
        let f = Feasibility::new(&t);
        let id = |n: &str| t.level_id(n).unwrap();
        let accum = PrimitiveKind::Matmul { accum: true };
        let f32s = [Dtype::F32; 3];
        // Both inputs in vector registers: no kernel takes that.
        assert!(!f.levels(accum, &[id("VRF"), id("VRF"), id("GL")], &f32s));
        // Inputs in scalar registers and the output in vector registers: nothing moves out of RF.
        assert!(!f.levels(accum, &[id("RF"), id("RF"), id("VRF")], &f32s));
        // The usual placements are fine.
        assert!(f.levels(PrimitiveKind::Matmul { accum: false }, &[id("GL"), id("GL"), id("GL")], &f32s));
        assert!(f.levels(accum, &[id("L1"), id("VRF"), id("VRF")], &f32s));
        // bf16 matmuls need the AVX-512 dot product (or scalar code through registers).
        let bf16 = [Dtype::Bf16, Dtype::Bf16, Dtype::F32];
        assert!(f.levels(accum, &[id("GL"), id("GL"), id("GL")], &bf16));
        assert!(!f.levels(accum, &[id("L1"), id("VRF"), id("VRF")], &bf16));
    }
}
