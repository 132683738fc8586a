//! The edges of the sub-spec graph a solve explores: one per action of a spec, with its sub-specs
//! and its [`Linear`] form, stored compactly.
//!
//! A large search holds millions of edges at once (`matmul 1000x1000x1000`: 5.4 million), so an
//! edge keeps what the linear forms of [`crate::actions::Combine`] almost always are, in 64 bytes
//! and one allocation (its children):
//!
//! ```text
//! weights   the first child's (a loop's full tile: its iterations), every other child's 1;
//!           any other list is kept whole
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
    children: Box<[u32]>,
    weights: Weights,
    base: Cost,
    own: Own,
    action: u16,
}

impl Edge {
    pub(crate) fn new(action: u16, children: Vec<u32>, linear: Linear) -> Edge {
        Edge {
            children: children.into_boxed_slice(),
            weights: Weights::new(linear.weights),
            base: linear.base,
            own: Own::new(linear.own),
            action,
        }
    }

    /// The action's index in `actions(spec)`.
    pub(crate) fn action(&self) -> u16 {
        self.action
    }

    /// The sub-specs' graph ids, in order.
    pub(crate) fn children(&self) -> &[u32] {
        &self.children
    }

    /// Each sub-spec's graph id with its weight.
    pub(crate) fn weighted_children(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.children.iter().enumerate().map(|(i, &c)| (c, self.weights.get(i)))
    }

    /// The constant part of the cost.
    pub(crate) fn base(&self) -> Cost {
        self.base
    }

    /// Memory the node itself holds while its children run.
    pub(crate) fn own(&self) -> MemVec {
        self.own.get()
    }

    /// Bytes the edge holds on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.children.len() * size_of::<u32>() + self.weights.heap_bytes() + self.own.heap_bytes()
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
            weights in prop::collection::vec(prop_oneof![Just(1u64), any::<u64>()], 0..5),
            own in prop::collection::vec(prop_oneof![3 => Just(0u64), 1 => any::<u64>()], MAX_LEVELS),
        ) {
            let own = MemVec(own.try_into().expect("MAX_LEVELS units"));
            let children: Vec<u32> = (0..weights.len() as u32).collect();
            let edge = Edge::new(7, children.clone(), Linear { base, weights: weights.clone(), own });
            prop_assert_eq!(edge.action(), 7);
            prop_assert_eq!(edge.children(), &children[..]);
            prop_assert_eq!(edge.base(), base);
            prop_assert_eq!(edge.own(), own);
            let back: Vec<(u32, u64)> = edge.weighted_children().collect();
            prop_assert_eq!(back, children.into_iter().zip(weights).collect::<Vec<_>>());
        }
    }
}
