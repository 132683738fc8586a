//! One module per subcommand, each with `Args` and `run`.

pub mod indexing;
pub mod layout;
pub mod run;
pub mod search;
pub mod xla;
