//! Solves one spec and prints a census of the memo table: specs by kind and operand levels.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::collections::BTreeMap;

use morello_core::spec::LogicalSpec;
use morello_core::target::Target;
use morello_search::Search;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target = Target::builtin(&args[1], 2).unwrap();
    let spec = LogicalSpec::parse(&args[2], &target).unwrap().canonicalize(&target).unwrap();
    if let Some(max) = args.get(3) {
        // Explore only, up to a number of specs, and summarise what was found.
        let specs = morello_search::explore_only(&spec, &target, Default::default(), max.parse().unwrap());
        println!("explored {} specs", specs.len());
        let mut states: BTreeMap<String, usize> = BTreeMap::new();
        for s in &specs {
            let sig: Vec<String> = s.operands.iter().map(|o| format!("{}", o.display(&target))).collect();
            *states
                .entry(format!(
                    "{}{} {}",
                    s.kind.name(),
                    if s.serial_only { " serial" } else { "" },
                    sig.join(" | ").replace("f32 ", "")
                ))
                .or_default() += 1;
        }
        let mut sv: Vec<(usize, String)> = states.into_iter().map(|(k, v)| (v, k)).collect();
        sv.sort();
        sv.reverse();
        println!("distinct signatures: {}", sv.len());
        for (v, k) in sv.iter().take(40) {
            println!("{v:>8} {k}");
        }
        return;
    }
    let search = Search::new(&target);
    let solution = search.solve(&spec).unwrap();
    println!("cost {}; {}", solution.cost, solution.report);
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_levels: BTreeMap<String, usize> = BTreeMap::new();
    let mut empty = 0;
    let mut frontier_sizes: BTreeMap<usize, usize> = BTreeMap::new();
    for (s, f) in search.memo_table().entries() {
        *by_kind
            .entry(format!("{}{}", s.kind.name(), if s.serial_only { " serial" } else { "" }))
            .or_default() += 1;
        let levels: Vec<&str> = s.operands.iter().map(|o| target.level(o.level).name.as_str()).collect();
        if f.is_empty() {
            empty += 1;
            let key = format!("{} {}", s.kind.name(), levels.join(","));
            if std::env::var("SHOW").is_ok_and(|v| v == key) && by_levels.get(&key).copied().unwrap_or(0) < 25
            {
                println!("  {}", s.display(&target));
            }
            *by_levels.entry(key).or_default() += 1;
        }
        *frontier_sizes.entry(f.entries().len()).or_default() += 1;
    }
    println!("unsatisfiable: {empty}");
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    let mut shapes: BTreeMap<String, usize> = BTreeMap::new();
    for (s, _) in search.memo_table().entries() {
        let sig: Vec<String> = s.operands.iter().map(|o| format!("{}", o.display(&target))).collect();
        *states.entry(format!("{} {}", s.kind.name(), sig.join(" | ").replace("f32 ", ""))).or_default() += 1;
        *shapes.entry(format!("{} {}", s.kind.name(), s.shape)).or_default() += 1;
    }
    println!("distinct operand-state signatures: {}, distinct kind+shape: {}", states.len(), shapes.len());
    let mut sv: Vec<(usize, String)> = shapes.into_iter().map(|(k, v)| (v, k)).collect();
    sv.sort();
    sv.reverse();
    for (v, k) in sv.iter().take(8) {
        println!("{v:>8} {k}");
    }
    println!("frontier sizes: {frontier_sizes:?}");
    for (k, v) in by_kind {
        println!("{v:>8} {k}");
    }
    let mut levels: Vec<(usize, String)> = by_levels.into_iter().map(|(k, v)| (v, k)).collect();
    levels.sort();
    levels.reverse();
    for (v, k) in levels.iter().take(30) {
        println!("{v:>8} {k}");
    }
}
