//! `morello kernels`: the kernels of a target, each as its definition in `morello-core` states it.

use anyhow::{Context, Result};
use morello_core::dtype::Dtype;
use morello_core::target::{KernelCost, Target};

use crate::database::eprint_line;
use crate::output;
use crate::spec_args::load_target;

/// Examples shown after `morello kernels --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello kernels
  morello kernels --target x86-avx512
  morello kernels --target my-target.toml
  morello kernels --target x86 --as-file > mine.toml   (the whole target as a file, to edit)

Each kernel is defined in one file, morello-core/src/kernels/<name>.rs: its operand rules, cost
formula and calibration specs are there; this lists what the cost model charges for it.";

/// Arguments of `morello kernels`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The target: `x86` (the host's x86 target), `x86-avx2`, `x86-avx512`, or a target file.
    #[arg(long, default_value = crate::spec_args::DEFAULT_TARGET)]
    target: String,
    /// Print the whole target (levels, geometry, cost constants, kernels) as a TOML target file
    /// instead: edit it and load it with `--target FILE`, or time its kernel beside the original's
    /// with `morello bench ... --versus-target FILE`.
    #[arg(long)]
    as_file: bool,
}

/// Runs `morello kernels`.
pub fn run(args: &Args) -> Result<()> {
    let (target, note) = load_target(&args.target)?;
    if let Some(note) = note {
        eprint_line(&note);
    }
    if args.as_file {
        let text = target.description_value().to_toml().context("cannot write the target as TOML")?;
        return output::print(&text);
    }
    output::print(&listing(&target))
}

/// The listing: a heading, then per kernel of the target, in the order the search tries them, its
/// name, ISA features and summary, its cost formula, and its units and constants.
fn listing(target: &Target) -> String {
    let mut text = format!(
        "Kernels of target {}, in the order the search tries them (each defined in\n\
         morello-core/src/kernels/<name>.rs; its constants are the target's):\n",
        target.name()
    );
    for &kind in target.kernels() {
        let isa: Vec<&str> = kind.required_isa().iter().map(|f| f.name()).collect();
        let isa = if isa.is_empty() { String::new() } else { format!(" (needs {})", isa.join(", ")) };
        let costs = target.costs();
        let mut constants =
            format!("fixed {}, per_unit {}", costs.kernel(kind).fixed, costs.kernel(kind).per_unit);
        if costs.kernel(kind) != kind.default_cost() {
            constants.push_str(&format!(" (default {})", pair(kind.default_cost())));
        }
        for dtype in Dtype::ALL {
            if let Some(cost) = costs.dtype_kernels.get(&dtype).and_then(|m| m.get(&kind)) {
                constants.push_str(&format!("; on {dtype}: {}", pair(*cost)));
            }
        }
        text.push_str(&format!(
            "\n{}{isa}\n  {}\n  cost: {}\n  units: {}; {constants}\n",
            kind.name(),
            kind.summary(),
            kind.cost_formula(),
            kind.units(),
        ));
    }
    text
}

fn pair(cost: KernelCost) -> String {
    format!("{}, {}", cost.fixed, cost.per_unit)
}

#[cfg(test)]
mod tests {
    use morello_core::kernels::KernelKind;

    use super::*;

    #[test]
    fn every_kernel_of_the_target_is_listed_with_its_definition() {
        for name in ["x86-avx2", "x86-avx2-vnni", "x86-avx512"] {
            let target = Target::builtin(name, 1).expect("a built-in target");
            let text = listing(&target);
            for kind in KernelKind::ALL {
                let line = format!("\n{}", kind.name());
                assert_eq!(
                    text.contains(&format!("{line}\n")) || text.contains(&format!("{line} (")),
                    target.kernels().contains(&kind),
                    "{name}: {kind}\n{text}"
                );
            }
            for &kind in target.kernels() {
                assert!(text.contains(&format!("\n  units: {};", kind.units())), "{kind}");
                assert!(
                    text.contains(&format!("\n  {}\n  cost: {}\n", kind.summary(), kind.cost_formula())),
                    "{kind}"
                );
            }
        }
    }
}
