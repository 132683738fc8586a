//! Tests of indexing maps.

mod maps;
