//! A census of the sub-spec graph a search explores: how many distinct specs, by kind, by level
//! of their operands, and how many have dims that are not powers of two (remainders).
//!
//! ```text
//! cargo run --release -p morello-search --example space_census -- "matmul 100x100x100" [x86] [threads]
//! ```

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use morello_core::spec::SpecBuilder;
use morello_core::target::Target;
use morello_search::{ActionConfig, Search, explore_only};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args.get(1).map_or("matmul 48x40x36", String::as_str);
    let target_name = args.get(2).map_or("x86-avx512", String::as_str);
    let processors: u32 = args.get(3).map_or(2, |p| p.parse().expect("a processor count"));
    let target = Target::builtin(target_name, processors).expect("a built-in target");
    let spec = SpecBuilder::parse(text).expect("a spec").build(&target).expect("a valid spec");
    let specs = explore_only(&spec, &target, ActionConfig::default(), u64::MAX);
    println!("{text} on {target_name} ({processors} processors): {} distinct specs", specs.len());
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    let mut shapes: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_levels: BTreeMap<String, u64> = BTreeMap::new();
    let mut dim_sizes: BTreeMap<u32, u64> = BTreeMap::new();
    for s in &specs {
        let odd = s.shape.dims().iter().any(|d| !d.is_power_of_two());
        let levels: Vec<String> =
            s.operands.iter().map(|o| target.levels()[o.level.index()].name.clone()).collect();
        let key = format!(
            "{:<12} {:<5} serial={:<5}",
            s.kind.name(),
            if odd { "odd" } else { "pow2" },
            s.serial_only
        );
        *by.entry(key).or_default() += 1;
        *by_levels.entry(levels.join(",")).or_default() += 1;
        let shape: Vec<String> = s.shape.dims().iter().map(u32::to_string).collect();
        *shapes.entry(format!("{} {}", s.kind.name(), shape.join("x"))).or_default() += 1;
        for &d in s.shape.dims() {
            *dim_sizes.entry(d).or_default() += 1;
        }
    }
    for (k, v) in &by {
        println!("{v:>8}  {k}");
    }
    let mut levels: Vec<_> = by_levels.into_iter().collect();
    levels.sort_by_key(|l| std::cmp::Reverse(l.1));
    println!("operand levels ({} combinations), the most frequent:", levels.len());
    for (k, v) in levels.iter().take(8) {
        println!("{v:>8}  {k}");
    }
    println!("distinct (kind, shape): {}", shapes.len());
    let mut top: Vec<_> = shapes.into_iter().collect();
    top.sort_by_key(|s| std::cmp::Reverse(s.1));
    for (k, v) in top.iter().take(8) {
        println!("{v:>8}  {k}");
    }
    let sizes: Vec<String> = dim_sizes.keys().map(u32::to_string).collect();
    println!("dim sizes ({}): {}", sizes.len(), sizes.join(" "));
    if std::env::var_os("CENSUS_SOLVE").is_some() {
        let search = Search::new(&target).threads(processors as usize);
        let report = search.fill(&spec).expect("solved");
        println!("{report}");
        let entries = search.memo_table().entries();
        let mut sizes: Vec<(usize, String)> =
            entries.iter().map(|(s, f)| (f.entries().len(), s.display(&target).to_string())).collect();
        let total: usize = sizes.iter().map(|s| s.0).sum();
        sizes.sort();
        let n = sizes.len();
        println!(
            "frontier entries: total {total}, median {}, p90 {}, p99 {}, max {}",
            sizes[n / 2].0,
            sizes[n * 9 / 10].0,
            sizes[n * 99 / 100].0,
            sizes[n - 1].0
        );
        for (len, spec) in sizes.iter().rev().take(5) {
            println!("{len:>8}  {spec}");
        }
    }
}
