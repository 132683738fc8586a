//! The `morello` command-line tool: argument parsing, files, output and exit codes.
//!
//! Each subcommand lives in `commands/<name>.rs` with one `run` entry point. Exit status: 0 on
//! success, 1 when the work ran but failed (for example no implementation fits), 2 for bad input
//! (including a file the user named that cannot be read), 128 + n when signal n stopped it.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;
mod database;
mod failure;
mod input;
mod memory;
mod numbers;
mod output;
mod progress;
mod sampling;
mod signals;
mod spec_args;
mod wisdom;

/// Finds provably optimal implementations of tensor kernels and emits them as C.
///
/// Start with `morello search matmul 64x64x64` to find the best implementation of a 64x64x64
/// f32 matrix multiplication for this machine.
#[derive(Debug, Parser)]
#[command(name = "morello", version, about, long_about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Find the best implementation of a spec for a target.
    #[command(after_help = format!("{}\n\n{}", commands::search::EXAMPLES, spec_args::SPEC_FORMS))]
    Search(commands::search::Args),
    /// Inspect, check and merge memo tables (the solved specs searches load and save).
    #[command(after_help = commands::db::EXAMPLES)]
    Db(commands::db::Args),
    /// Fill a memo table with every power-of-two matmul up to a size, in parallel, resumably.
    #[command(after_help = commands::precompute::EXAMPLES)]
    Precompute(commands::precompute::Args),
    /// Search, emit C, compile, run on seeded inputs and verify against the reference.
    #[command(after_help = format!("{}\n\n{}", commands::run::EXAMPLES, spec_args::SPEC_FORMS))]
    Run(commands::run::Args),
    #[command(flatten)]
    Bench(commands::bench::Command),
    /// Measure the target's kernels and memory levels here and write a target file with fitted costs.
    #[command(after_help = commands::calibrate::EXAMPLES)]
    Calibrate(commands::calibrate::Args),
    /// List a target's kernels: ISA features, cost units and constants, what each computes.
    #[command(after_help = commands::kernels::EXAMPLES)]
    Kernels(commands::kernels::Args),
    /// Show the buffer-indexing expression, buffer size and contiguity of a layout.
    #[command(after_help = commands::layout::EXAMPLES)]
    Layout(commands::layout::Args),
    /// Read an XLA shape (`f32[16,256]{1,0:T(8,128)}`): its tiling, buffer, offsets and morello layout.
    #[command(after_help = commands::xla::EXAMPLES)]
    Xla(commands::xla::Args),
    /// Compile an HLO module to C: its dots, softmax, convolutions and transposes searched, the
    /// rest plain loops; with --verify, checked against the reference evaluator.
    #[command(after_help = commands::compile::EXAMPLES)]
    Compile(commands::compile::Args),
    /// Print the indexing maps of an HLO instruction or fusion: which operand elements each
    /// output element reads, or the reverse.
    #[command(after_help = commands::indexing::EXAMPLES)]
    Indexing(commands::indexing::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Search(args) => commands::search::run(&args),
        Command::Db(args) => commands::db::run(&args),
        Command::Precompute(args) => commands::precompute::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Bench(command) => commands::bench::run(&command),
        Command::Calibrate(args) => commands::calibrate::run(&args),
        Command::Kernels(args) => commands::kernels::run(&args),
        Command::Layout(args) => commands::layout::run(&args),
        Command::Xla(args) => commands::xla::run(&args),
        Command::Indexing(args) => commands::indexing::run(&args),
        Command::Compile(args) => commands::compile::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => failure::report(&err),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
