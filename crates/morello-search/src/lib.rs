//! morello-search (in progress).
