//! The slow end-to-end tests, in a target of their own that `cargo test` runs only when asked
//! (`cargo test -p morello-cli --test e2e`; CI runs it): the search's answers to many specs
//! emitted, compiled, run and verified (`searched_kernels`), the same through the command line (`run`),
//! timed against baselines (`bench`), calibrated (`calibrate`); searches stopped
//! by signals (`signals`); sharded precomputes and the cluster scripts (`shards`, `slurm`); and
//! precompute and merge killed at random points (`fault_injection`); the `arm-neon` target
//! cross-compiled and verified under qemu (`arm`).

#[path = "../common/mod.rs"]
mod common;

mod arm;
mod bench;
mod calibrate;
mod fault_injection;
mod run;
mod searched_kernels;
mod shards;
mod signals;
mod slurm;
