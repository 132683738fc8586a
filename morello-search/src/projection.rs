//! Which levels a spec's frontier keeps apart, for a search under fixed limits.
//!
//! A search answers one goal under one vector of limits `U` (the target's capacities unless the
//! caller gives tighter ones). A frontier need not answer every other budget: it must answer the
//! budgets the spec can be given inside some tree for a goal under `U`. Those differ from `U` only
//! at levels where an ancestor may hold memory while the spec runs: the levels its operands passed
//! through on their way to where they are. At every other level the spec's peaks only have to fit
//! `U`, so two implementations that both fit `U` and differ only there are interchangeable and
//! the cheaper one is enough. With `R(S)` the spec's *relevant levels*:
//!
//! ```text
//! F_U(S) = the entries of S's implementations whose peaks fit U, of which one entry survives
//!          for each (cost, peaks on R(S)) that no other beats on cost and on R(S)
//! R(S)   = { L : the level of some operand of S can be reached from L by moves }
//!                                  (operators whose definition says `FrontierLevels::
//!                                  ReachingOperands`: matmuls, with or without an epilogue, and
//!                                  convolutions, whose sub-specs keep every operand)
//!        = every level             (`FrontierLevels::All`: moves, fills, epilogues, softmax and its
//!                                  passes)
//! ```
//!
//! Why this loses no optimum under `U` (by induction from the kernels up): take an
//! implementation `I` of `P` that fits `U`, made by an action with own memory `o` from
//! implementations `I_i` of its children `S_i` (`peaks(I) = snap(o + max_i peaks(I_i))`, so each
//! `I_i` fits `U` too). By induction each `F_U(S_i)` has an entry `e_i` costing no more than `I_i`,
//! fitting `U`, with peaks no larger than `I_i`'s on `R(S_i)`. Two facts about the actions make
//! their combination `e` just as good as `I` on `R(P)` and fit `U` everywhere:
//!
//! 1. `R(P) ⊆ R(S_i)` for every child: tiles keep the operands' levels, a move's body has the
//!    moved operand at a level reachable from its old one, and moves and fills (copies, and the
//!    zero fill of zero-then-accumulate) keep every level. An epilogue is split off its matmul
//!    only when the bias adds no level to the matmul's (`actions/epilogue.rs`); its pass, like
//!    softmax and softmax's passes, keeps every level.
//! 2. The own memory `o` of an action lies at levels in every child's `R(S_i)`: a move holds its
//!    destination, where the body's moved operand lives (and its copies are moves); loops and
//!    blocks hold nothing; kernels have no children.
//!
//! At a level of `R(P)` or where `o > 0`, every `e_i` is at most `I_i` (facts 1 and 2), so `e` is at
//! most `I` there, within `U`. At any other level `e` is the maximum of the `e_i`, each within `U`.
//! The goal's frontier then holds an entry as cheap as the best implementation under `U`, and the
//! tree it rebuilds fits `U`. The property test `tests/optimality.rs` checks the result against an
//! enumeration of every implementation under random limits.
//!
//! What it saves: a matmul whose operands are all in main memory keeps one entry (the cheapest
//! within `U`) instead of a frontier over four levels; with operands in L2 it keeps one entry per
//! L2 budget. On `matmul 100x100x100` the largest frontier fell from 2,492 entries to 187.
//!
//! The memo holds frontiers for one `U`: the target's capacities ([`crate::Search`] solves a search
//! under tighter limits into a memo of its own). Fact 1 and fact 2 are checked on every edge the
//! search explores in debug builds, so a new action or kind that breaks them fails the tests.

use morello_core::operators::FrontierLevels;
use morello_core::spec::CanonicalSpec;
use morello_core::target::{LevelId, MAX_LEVELS, MemVec, Target};

use crate::peaks::{PeakCodec, Peaks};

/// The relevant levels of specs for one target (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Projection {
    /// For each level, the levels from which it can be reached by moves (itself included), a
    /// bit per level id.
    reached_from: [u8; MAX_LEVELS],
    codec: PeakCodec,
}

impl Projection {
    /// The projection for `target`.
    pub fn new(target: &Target) -> Self {
        let n = target.levels().len();
        let mut reaches = [0u8; MAX_LEVELS];
        for (from, reach) in reaches.iter_mut().enumerate().take(n) {
            *reach = 1 << from;
            loop {
                let mut next = *reach;
                for (level, l) in target.levels().iter().enumerate() {
                    if *reach & (1 << level) != 0 {
                        for d in &l.moves_to {
                            next |= 1 << d.index();
                        }
                    }
                }
                if next == *reach {
                    break;
                }
                *reach = next;
            }
        }
        let mut reached_from = [0u8; MAX_LEVELS];
        for (to, from_set) in reached_from.iter_mut().enumerate().take(n) {
            for (from, reach) in reaches.iter().enumerate().take(n) {
                if reach & (1 << to) != 0 {
                    *from_set |= 1 << from;
                }
            }
        }
        Projection { reached_from, codec: PeakCodec::new(target) }
    }

    /// The levels `spec`'s frontier keeps apart, as a bit per level id.
    pub fn levels(&self, spec: &CanonicalSpec) -> u8 {
        match spec.kind.frontier_levels() {
            FrontierLevels::ReachingOperands => self.operand_levels(spec.operands.iter().map(|o| o.level)),
            FrontierLevels::All => u8::MAX,
        }
    }

    /// The levels from which any of `levels` can be reached by moves, as a bit per level id.
    pub fn operand_levels(&self, levels: impl IntoIterator<Item = LevelId>) -> u8 {
        levels.into_iter().fold(0, |m, l| m | self.reached_from[l.index()])
    }

    /// [`Projection::levels`] as a mask of [`Peaks`] bytes.
    pub fn mask(&self, spec: &CanonicalSpec) -> Peaks {
        match self.levels(spec) {
            u8::MAX => Peaks::ALL,
            levels => self.codec.mask(levels),
        }
    }

    /// Whether an action of `parent` holding `own` may have `child` as a sub-spec without losing
    /// an optimum: facts 1 and 2 of the module docs.
    pub fn keeps(&self, parent: &CanonicalSpec, own: &MemVec, child: &CanonicalSpec) -> bool {
        let held = own.0.iter().enumerate().filter(|(_, v)| **v > 0).fold(0u8, |m, (i, _)| m | (1 << i));
        let needed = self.levels(parent) | held;
        self.levels(child) & needed == needed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::spec::LogicalSpec;

    use super::*;

    fn spec(text: &str, t: &Target) -> CanonicalSpec {
        LogicalSpec::parse(text, t).unwrap().canonicalize(t).unwrap()
    }

    #[test]
    fn relevant_levels_are_those_operands_came_through() {
        let t = Target::builtin("x86-avx2", 1).unwrap();
        let p = Projection::new(&t);
        let bits = |names: &[&str]| names.iter().fold(0u8, |m, n| m | (1 << t.level_id(n).unwrap().index()));
        let gl = "Matmul(1x4x4x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)";
        assert_eq!(p.levels(&spec(gl, &t)), bits(&["GL"]));
        let l2 = "Matmul(1x4x4x4, f32 L2 row-major, f32 GL row-major, f32 GL row-major)";
        assert_eq!(p.levels(&spec(l2, &t)), bits(&["GL", "L2"]));
        let vrf = "MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)";
        assert_eq!(p.levels(&spec(vrf, &t)), bits(&["GL", "L2", "L1", "VRF"]));
        assert_eq!(p.levels(&spec("Move(4x4, f32 GL row-major, f32 GL col-major)", &t)), u8::MAX);
        assert_eq!(p.mask(&spec("FillZero(4x4, f32 GL row-major)", &t)), Peaks::ALL);
    }
}
