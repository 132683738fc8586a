//! Estimates of the memory a search holds, for its memory budget ([`crate::Search::max_memory`]).
//!
//! The estimate counts what the search's data structures hold, from their sizes and capacities,
//! not what the allocator or the system report (the library does no I/O):
//!
//! ```text
//! memo        per spec held (solved, or read from a table): the spec (its struct and heap), its frontier (the Arc, the entries),
//!             and its slot in the hash map
//! graph       per spec of the current call, while it explores and solves: the spec (one shared
//!             allocation, which the id map and the node table both point to), its slot in the id
//!             map, its node slots (spec, known frontier, edges, frontier, height), and, until
//!             the spec is solved, its actions' edges (children and weights)
//! ```
//!
//! Hash maps are counted at an average load (`MAP_SLOTS_PER_ENTRY` slots of key and value per
//! entry, plus a control byte) and growing vectors at their average slack (`VEC_SLOTS_PER_ITEM`).
//! What is not counted: allocator overhead and fragmentation, thread stacks, the transient
//! partial products of one node being solved, and the program itself; `docs/search.md` gives the
//! measured ratio of the estimate to the resident set size.

use morello_core::spec::CanonicalSpec;

use crate::frontier::Frontier;

/// Slots a hash map holds per entry on average: hashbrown doubles its table when it is 7/8 full,
/// so the load swings between 7/16 and 7/8 (8/7 to 16/7 slots per entry).
const MAP_SLOTS_PER_ENTRY: f64 = 1.7;

/// Items a growing vector holds room for per item on average (capacity doubles when full).
pub(crate) const VEC_SLOTS_PER_ITEM: f64 = 1.5;

/// Bytes of one hash-map entry with a key and value of these sizes, at the average load.
pub(crate) fn map_entry_bytes(key_and_value: usize) -> u64 {
    ((key_and_value + 1) as f64 * MAP_SLOTS_PER_ENTRY) as u64
}

/// Bytes of `items` vector slots of `size` bytes each, at the average slack.
pub(crate) fn vec_slots_bytes(items: usize, size: usize) -> u64 {
    (items as f64 * size as f64 * VEC_SLOTS_PER_ITEM) as u64
}

/// Bytes a spec takes outside the map or vector slot that holds it (its heap).
pub(crate) fn spec_heap_bytes(spec: &CanonicalSpec) -> u64 {
    spec.heap_bytes() as u64
}

/// Bytes a shared frontier takes: the Arc's counters, the frontier and its entries.
pub(crate) fn frontier_bytes(frontier: &Frontier) -> u64 {
    (2 * size_of::<usize>() + size_of::<Frontier>() + frontier.heap_bytes()) as u64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use morello_core::spec::SpecBuilder;
    use morello_core::target::Target;

    use super::*;

    #[test]
    fn a_spec_counts_its_operands_on_the_heap() {
        let target = Target::builtin("x86-avx2", 1).unwrap();
        let matmul = SpecBuilder::matmul(4, 4, 4).build(&target).unwrap();
        let heap = spec_heap_bytes(&matmul);
        assert!(heap >= 3 * size_of::<morello_core::spec::TensorSpec>() as u64, "{heap}");
    }
}
