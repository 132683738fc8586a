//! The edges of the sub-spec graph a solve explores: one per action of a spec, with its sub-specs
//! and its [`Linear`] form, stored compactly.
//!
//! A large search holds millions of edges at once (`matmul 1000x1000x1000`: 5.4 million), so an
//! edge keeps what its parts almost always are in 64 bytes, without an allocation:
//!
//! ```text
//! children  one or two sub-specs (more are kept on the heap)
//! weights   the first child's (a loop's full tile: its iterations), every other child's 1 (as
//!           the linear forms of `Combine` are); any other list is kept whole
//! own       nothing, or units at one level (a move's new tensor); several levels are kept whole
//! ```
//!
//! Not the graph itself: the node tables and the solving live in `solve.rs`.

use morello_core::cost::Cost;
use morello_core::target::MemVec;

use crate::actions::Linear;

/// One action of a spec in the graph: its index, its sub-specs (graph ids), and how their
/// results combine.
pub(crate) struct Edge {
    children: Children,
    weights: Weights,
    base: Cost,
    own: Own,
    action: u16,
    /// [`Linear::credit`], which fits beside `action`: the only credit, a loop's shared
    /// loads, is at most [`morello_core::cost::register_block::MAX_CREDIT`].
    credit: u32,
}

impl Edge {
    pub(crate) fn new(action: u16, children: Vec<u32>, linear: Linear) -> Edge {
        Edge {
            children: Children::new(children),
            weights: Weights::new(linear.weights),
            base: linear.base,
            own: Own::new(linear.own),
            action,
            credit: u32::try_from(linear.credit).expect("credits fit in 32 bits"),
        }
    }

    /// The action's index in `actions(spec)`.
    pub(crate) fn action(&self) -> u16 {
        self.action
    }

    /// The sub-specs' graph ids, in order.
    pub(crate) fn children(&self) -> &[u32] {
        self.children.get()
    }

    /// Each sub-spec's graph id with its weight.
    pub(crate) fn weighted_children(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.children().iter().enumerate().map(|(i, &c)| (c, self.weights.get(i)))
    }

    /// The constant part of the cost.
    #[cfg(test)]
    pub(crate) fn base(&self) -> Cost {
        self.base
    }

    /// What the node's cost subtracts from the sum ([`Linear::credit`]).
    pub(crate) fn credit(&self) -> Cost {
        Cost::from(self.credit)
    }

    /// The node's cost when its weighted children cost `children` in all.
    pub(crate) fn cost(&self, children: Cost) -> Cost {
        self.base.saturating_add(children).saturating_sub(self.credit())
    }

    /// Memory the node itself holds while its children run.
    pub(crate) fn own(&self) -> MemVec {
        self.own.get()
    }

    /// Bytes the edge holds on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.children.heap_bytes() + self.weights.heap_bytes() + self.own.heap_bytes()
    }
}

/// The sub-specs' graph ids: up to two in place (98.5% of 1000^3's edges), more on the heap.
enum Children {
    /// One or two ids; a second of [`NO_CHILD`] means one.
    Few([u32; 2]),
    Many(Box<[u32]>),
}

/// The place of a missing second child in [`Children::Few`] (graph ids stay below it).
const NO_CHILD: u32 = u32::MAX;

impl Children {
    fn new(children: Vec<u32>) -> Children {
        match children[..] {
            [one] if one != NO_CHILD => Children::Few([one, NO_CHILD]),
            [one, two] if one != NO_CHILD && two != NO_CHILD => Children::Few([one, two]),
            _ => Children::Many(children.into_boxed_slice()),
        }
    }

    fn get(&self) -> &[u32] {
        match self {
            Children::Few(ids) if ids[1] == NO_CHILD => &ids[..1],
            Children::Few(ids) => ids,
            Children::Many(ids) => ids,
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Children::Few(_) => 0,
            Children::Many(ids) => ids.len() * size_of::<u32>(),
        }
    }
}

/// The children's weights.
enum Weights {
    /// The first child's weight; every other child's is 1.
    FirstThenOnes(u64),
    Each(Box<[u64]>),
}

impl Weights {
    fn new(weights: Vec<u64>) -> Weights {
        match weights.split_first() {
            None => Weights::FirstThenOnes(1),
            Some((&first, rest)) if rest.iter().all(|&w| w == 1) => Weights::FirstThenOnes(first),
            Some(_) => Weights::Each(weights.into_boxed_slice()),
        }
    }

    fn get(&self, i: usize) -> u64 {
        match self {
            Weights::FirstThenOnes(first) if i == 0 => *first,
            Weights::FirstThenOnes(_) => 1,
            Weights::Each(weights) => weights[i],
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Weights::FirstThenOnes(_) => 0,
            Weights::Each(weights) => weights.len() * size_of::<u64>(),
        }
    }
}

/// What the node holds itself.
enum Own {
    /// `units` at level `level` (nothing: 0 units).
    One {
        level: u8,
        units: u64,
    },
    Many(Box<MemVec>),
}

impl Own {
    fn new(own: MemVec) -> Own {
        let mut held = own.0.iter().enumerate().filter(|(_, units)| **units > 0);
        match (held.next(), held.next()) {
            (None, _) => Own::One { level: 0, units: 0 },
            (Some((level, &units)), None) => match u8::try_from(level) {
                Ok(level) => Own::One { level, units },
                Err(_) => Own::Many(Box::new(own)),
            },
            _ => Own::Many(Box::new(own)),
        }
    }

    fn get(&self) -> MemVec {
        match self {
            Own::One { level, units } => {
                let mut own = MemVec::ZERO;
                own.0[usize::from(*level)] = *units;
                own
            }
            Own::Many(own) => **own,
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Own::One { .. } => 0,
            Own::Many(_) => size_of::<MemVec>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use morello_core::target::MAX_LEVELS;
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn an_edge_takes_64_bytes() {
        assert!(size_of::<Edge>() <= 64, "{} bytes", size_of::<Edge>());
    }

    proptest! {
        /// An edge gives back the linear form it was made from, whatever the weights and the memory.
        #[test]
        fn an_edge_keeps_its_linear_form(
            base in any::<u64>(),
            credit in any::<u32>(),
            children in prop::collection::vec(
                (prop_oneof![3 => 0u32..1000, 1 => Just(NO_CHILD)], prop_oneof![Just(1u64), any::<u64>()]),
                0..5,
            ),
            own in prop::collection::vec(prop_oneof![3 => Just(0u64), 1 => any::<u64>()], MAX_LEVELS),
        ) {
            let own = MemVec(own.try_into().expect("MAX_LEVELS units"));
            let (ids, weights): (Vec<u32>, Vec<u64>) = children.iter().copied().unzip();
            let edge = Edge::new(7, ids.clone(), Linear { base, weights, own, credit: u64::from(credit) });
            prop_assert_eq!(edge.action(), 7);
            prop_assert_eq!(edge.children(), &ids[..]);
            prop_assert_eq!(edge.base(), base);
            prop_assert_eq!(edge.credit(), u64::from(credit));
            prop_assert_eq!(edge.own(), own);
            prop_assert_eq!(edge.weighted_children().collect::<Vec<_>>(), children);
        }
    }
}
