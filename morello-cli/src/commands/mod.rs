//! One module per subcommand, each with `Args` and `run`.

pub mod bench;
pub mod calibrate;
pub mod compile;
pub mod db;
pub mod indexing;
pub mod kernels;
pub mod layout;
pub mod precompute;
pub mod run;
pub mod search;
pub mod xla;
