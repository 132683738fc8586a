//! Solves one spec and prints the implementation and the search's report.
//!
//! `cargo run --release -p morello-search --example solve -- x86-avx2 'Matmul(1x4x4x4, u32 GL row-major, u32 GL row-major, u32 GL row-major)' [threads]`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use morello_core::spec::LogicalSpec;
use morello_core::target::Target;
use morello_search::Search;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: solve TARGET SPEC [THREADS]");
        std::process::exit(2);
    }
    let target = Target::builtin(&args[1], 2).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let spec = LogicalSpec::parse(&args[2], &target)
        .and_then(|s| Ok(s.canonicalize(&target)?))
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    let mut search = Search::new(&target);
    if let Some(t) = args.get(3) {
        search = search.threads(t.parse().unwrap_or(1));
    }
    match search.solve(&spec) {
        Ok(solution) => {
            print!("{}", solution.imp.render(&target));
            println!("cost {}; {}", solution.cost, solution.report);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
