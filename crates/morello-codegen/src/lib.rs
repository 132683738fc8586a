//! morello-codegen (in progress).
