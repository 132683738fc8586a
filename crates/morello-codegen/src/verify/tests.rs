//! Verification tests.
