//! A census of the sub-spec graph a search explores: how many distinct specs, by kind, by the
//! remainders in their shapes, by pitch class, by level and layout of each operand, and by the
//! action that first needed them; and how many specs differ from another only in their pitches or
//! their `serial_only` flag.
//!
//! ```text
//! cargo run --release -p morello-search --example space_census -- "matmul 100x100x100" [x86-avx512] [processors]
//! ```
//!
//! With `CENSUS_SOLVE=1` it also solves the goal and lists the frontier sizes; `CENSUS_QUICK=1`
//! leaves out the actions that first needed each spec (which enumerates their actions again).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};

use morello_core::spec::{CanonicalSpec, LogicalSpec, SpecBuilder, TensorSpec};
use morello_core::target::Target;
use morello_search::actions::{Plan, PlanShape, actions};
use morello_search::{Action, ActionConfig, Feasibility, Search, explore_only};

/// Counts of something, printed most frequent first.
#[derive(Default)]
struct Tally(BTreeMap<String, u64>);

impl Tally {
    fn add(&mut self, key: impl Into<String>) {
        *self.0.entry(key.into()).or_default() += 1;
    }

    fn print(&self, title: &str, top: usize) {
        let mut rows: Vec<_> = self.0.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        println!("{title} ({} classes):", rows.len());
        for (k, v) in rows.iter().take(top) {
            println!("{v:>9}  {k}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args.get(1).map_or("matmul 48x40x36", String::as_str);
    let target_name = args.get(2).map_or("x86-avx512", String::as_str);
    let processors: u32 = args.get(3).map_or(2, |p| p.parse().expect("a processor count"));
    let target = Target::builtin(target_name, processors).expect("a built-in target");
    let spec = SpecBuilder::parse(text).expect("a spec").build(&target).expect("a valid spec");
    let config = ActionConfig::default();
    let explored = explore_only(&spec, &target, config, u64::MAX);
    println!("{text} on {target_name} ({processors} processors): {} distinct specs", explored.len());
    let level = |t: &TensorSpec| target.levels()[t.level.index()].name.clone();

    let mut kinds = Tally::default();
    let mut remainders = Tally::default();
    let mut pitches = Tally::default();
    let mut placements = Tally::default();
    let mut operand_forms = Tally::default();
    let mut creators = Tally::default();
    let mut dims = Tally::default();
    for e in &explored {
        let s = &e.spec;
        kinds.add(format!("{:<16} serial={}", s.kind.name(), s.serial_only));
        let names = s.kind.dim_names(s.shape.rank());
        let shape: Vec<String> = s
            .shape
            .dims()
            .iter()
            .zip(&names)
            .filter(|(d, _)| **d > 1)
            .map(|(d, n)| format!("{n}:{}", if d.is_power_of_two() { "pow2" } else { "odd" }))
            .collect();
        remainders.add(format!("{:<12} {}", s.kind.name(), shape.join(" ")));
        let pitch: Vec<String> =
            s.operands.iter().map(|o| o.pitch.map_or("-".to_string(), |p| format!("s{p}"))).collect();
        pitches.add(format!("{:<12} {}", s.kind.name(), pitch.join(" ")));
        let levels: Vec<String> = s.operands.iter().map(level).collect();
        placements.add(format!("{:<12} {}", s.kind.name(), levels.join(",")));
        for (i, o) in s.operands.iter().enumerate() {
            let contiguous = if o.is_fully_contiguous() { "one run" } else { "runs" };
            operand_forms.add(format!(
                "{:<12} #{i} {} {} {contiguous}{}",
                s.kind.name(),
                level(o),
                o.layout,
                o.vector_size.map_or(String::new(), |v| format!(" v{v}"))
            ));
        }
        for &d in s.shape.dims() {
            dims.add(format!("{d:>6}"));
        }
    }
    // What first needed each spec: the action's kind and the child's role in it.
    let feasibility = Feasibility::new(&target);
    let mut cache: HashMap<usize, Vec<Vec<String>>> = HashMap::new();
    let quick = std::env::var_os("CENSUS_QUICK").is_some();
    for e in explored.iter().filter(|_| !quick) {
        let Some((parent, action, place)) = e.parent else {
            creators.add("the goal");
            continue;
        };
        let parent_spec = &explored[parent].spec;
        let roles = cache.entry(parent).or_insert_with(|| {
            actions(parent_spec, &target, &config, &feasibility)
                .iter()
                .map(|(action, plan)| roles(action, plan, parent_spec, &target))
                .collect()
        });
        creators.add(format!("{:<28} <- {}", roles[usize::from(action)][place], parent_spec.kind.name()));
        if cache.len() > 4096 {
            cache.clear();
        }
    }
    kinds.print("by kind", 40);
    remainders.print("by remainder (which dims are not powers of two)", 24);
    pitches.print("by pitch of each operand", 24);
    placements.print("by level of each operand", 24);
    operand_forms.print("by operand level and layout", 24);
    creators.print("by the action that first needed them", 40);
    println!("distinct dim sizes: {}", dims.0.len());
    let mut shapes: HashMap<(String, Vec<u32>), u64> = HashMap::new();
    for e in &explored {
        *shapes.entry((e.spec.kind.name().to_string(), e.spec.shape.dims().to_vec())).or_default() += 1;
    }
    let mut per_shape: Vec<u64> = shapes.values().copied().collect();
    per_shape.sort_unstable();
    let n = per_shape.len();
    println!(
        "distinct (kind, shape): {n}; specs per (kind, shape): median {}, p90 {}, max {}",
        per_shape[n / 2],
        per_shape[n * 9 / 10],
        per_shape[n - 1]
    );
    duplicates("pitches", &explored.iter().map(|e| &e.spec).collect::<Vec<_>>(), |s| {
        let mut l = s.logical().clone();
        l.operands.iter_mut().for_each(|o| o.pitch = None);
        l
    });
    duplicates("serial_only", &explored.iter().map(|e| &e.spec).collect::<Vec<_>>(), |s| {
        let mut l = s.logical().clone();
        l.serial_only = false;
        l
    });
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

/// The role of each child of an action in words (`tile boundary`, `move L1 buffer copy`).
fn roles(action: &Action, plan: &Plan, parent: &CanonicalSpec, target: &Target) -> Vec<String> {
    let level = |t: &TensorSpec| target.levels()[t.level.index()].name.clone();
    (0..plan.children.len())
        .map(|place| match (action, &plan.shape) {
            (Action::Move { destination, kind, .. }, PlanShape::Alloc { prologue, .. }) => {
                let part = if place == usize::from(*prologue) { "body" } else { "copy" };
                format!("move {} {kind:?} {part}", level(destination))
            }
            (Action::Tile { size, dim }, _) => {
                let even = if parent.shape.dim(*dim) % size == 0 { "even" } else { "uneven" };
                format!("tile {} ({even})", if place == 0 { "body" } else { "boundary" })
            }
            (Action::ParallelTile { .. }, _) => {
                format!("parallel tile {}", if place == 0 { "body" } else { "boundary" })
            }
            (Action::ToAccum, _) => format!("to-accum {}", if place == 0 { "fill" } else { "accumulate" }),
            (other, _) => {
                let name = format!("{other:?}");
                format!("{} #{place}", name.split([' ', '(', '{']).next().unwrap_or("?"))
            }
        })
        .collect()
}

/// How many specs differ from another only in what `forget` erases.
fn duplicates(what: &str, specs: &[&CanonicalSpec], forget: impl Fn(&CanonicalSpec) -> LogicalSpec) {
    let mut groups: HashMap<LogicalSpec, u64> = HashMap::new();
    for s in specs {
        *groups.entry(forget(s)).or_default() += 1;
    }
    let extra: u64 = groups.values().map(|n| n - 1).sum();
    let largest = groups.values().max().copied().unwrap_or(0);
    println!(
        "specs equal but for their {what}: {extra} beyond the first of each ({largest} at most in one group)"
    );
}
