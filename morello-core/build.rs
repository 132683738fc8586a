//! Declares the two catalogues of core from their files: the kernels (`src/kernels/`) and the
//! operators (`src/operators/`).
//!
//! Every `src/kernels/<name>.rs` that holds a kernel's `DEFINITION` has a module doc whose first
//! paragraph says what the kernel computes (after `` `Name`: ``) and whose `text` block states, one
//! entry a line (continued on indented lines),
//!
//! ```text
//! ordinal:  14
//! constants: fixed 4, per_unit 1 per row / f32 lanes
//! isa:      Avx512f, Avx512bf16
//! applies:  ...
//! cost:     fixed + per_unit * ceil(n / lanes) + ...
//! ```
//!
//! its place in the catalogue, its default cost constants and what `per_unit` counts (`none` when
//! there is no `per`), the ISA features its code needs (`IsaFeature` variants; none when the line
//! is missing) and its cost formula. This script writes `$OUT_DIR/kernel_catalogue.rs`, the
//! `kernel_catalogue!` macro listing `Kernel = ordinal => module { summary: "..", cost: "..",
//! fixed: N, per_unit: N, units: "..", isa: [..], },` (the variant is the file name in CamelCase)
//! in ordinal order, which `src/kernel_kind.rs` includes.
//!
//! Every `src/operators/<name>.rs` that holds an operator's `DEFINITION` has a module doc whose
//! first paragraph says what the operator computes (after `` `Name`: ``) and whose `text` block
//! states `ordinal:  N`. This script writes `$OUT_DIR/operator_catalogue.rs`, the
//! `operator_catalogue!` macro listing `Operator = ordinal => module "file" { summary: "..", },`
//! in ordinal order (the module a raw identifier where the file name is a keyword: `r#move`),
//! which `src/operators/mod.rs` includes.
//!
//! In both catalogues the ordinals must be 0, 1, 2, ... without gaps: a kernel's is the order the
//! search tries kernels in and the variant number stored tables refer to, an operator's the
//! variant number of its kind in stored tables, so a new one takes the next. Anything else stops
//! the build with a message naming the file.

use std::fmt::Write as _;
use std::path::Path;

const KERNELS: &str = "src/kernels";
const KERNEL_DEFINITION: &str = "pub(super) const DEFINITION: KernelDefinition";
const OPERATORS: &str = "src/operators";
const OPERATOR_DEFINITION: &str = "pub(super) const DEFINITION: OperatorDefinition";

/// A kernel file's facts for the list.
struct Kernel {
    ordinal: isize,
    module: String,
    summary: String,
    cost: String,
    fixed: u64,
    per_unit: u64,
    units: String,
    isa: Vec<String>,
}

/// An operator file's facts for the list.
struct Operator {
    ordinal: isize,
    module: String,
    summary: String,
}

fn main() {
    println!("cargo::rerun-if-changed={KERNELS}");
    println!("cargo::rerun-if-changed={OPERATORS}");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut errors = Vec::new();
    for (file, list) in
        [("kernel_catalogue.rs", kernel_catalogue()), ("operator_catalogue.rs", operator_catalogue())]
    {
        match list {
            Ok(text) => {
                std::fs::write(Path::new(&out).join(file), text).expect("the build script writes its output")
            }
            Err(why) => errors.extend(why),
        }
    }
    if !errors.is_empty() {
        for error in errors {
            println!("cargo::error={error}");
        }
        std::process::exit(1);
    }
}

/// The `(module, text)` of every file of `dir` that holds `marker` (a catalogue's definitions:
/// `mod.rs`, `tests.rs` and shared helpers do not).
fn definition_files(dir: &str, marker: &str) -> Result<Vec<(String, String)>, Vec<String>> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| vec![format!("cannot read {dir}: {e}")])?;
    for entry in entries {
        let path = entry.map_err(|e| vec![format!("cannot read {dir}: {e}")])?.path();
        let Some(module) =
            path.file_stem().and_then(|s| s.to_str()).filter(|_| path.extension().is_some_and(|e| e == "rs"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| vec![format!("cannot read {}: {e}", path.display())])?;
        if text.contains(marker) {
            files.push((module.to_string(), text));
        }
    }
    files.sort();
    Ok(files)
}

/// What is wrong with the ordinals of `(module, ordinal)`s sorted by ordinal: two alike, or a gap.
fn ordinal_errors(dir: &str, what: &str, sorted: &[(&str, isize)]) -> Vec<String> {
    let mut errors = Vec::new();
    for pair in sorted.windows(2) {
        if pair[0].1 == pair[1].1 {
            errors.push(format!(
                "{dir}/{}.rs and {dir}/{}.rs both have ordinal {}: each {what} has its own",
                pair[0].0, pair[1].0, pair[0].1
            ));
        }
    }
    if let Some((expected, (module, ordinal))) =
        sorted.iter().enumerate().find(|(i, (_, o))| *o != *i as isize && errors.is_empty())
    {
        errors.push(format!(
            "{dir}/{module}.rs has ordinal {ordinal} where {expected} is expected: {what} ordinals are 0, 1, 2, ... without gaps"
        ));
    }
    errors
}

/// The definition files of `dir` (those holding `marker`), each read by `parse`, in ordinal order
/// (`key` gives an item's module and ordinal), or what is wrong with them (`what` names an item).
fn read_catalogue<T>(
    dir: &str,
    marker: &str,
    what: &str,
    parse: impl Fn(&str, &str) -> Result<T, String>,
    key: impl Fn(&T) -> (&str, isize),
) -> Result<Vec<T>, Vec<String>> {
    let mut errors = Vec::new();
    let mut items: Vec<T> = Vec::new();
    for (module, text) in definition_files(dir, marker)? {
        match parse(&module, &text) {
            Ok(item) => items.push(item),
            Err(why) => errors.push(format!("{dir}/{module}.rs: {why}")),
        }
    }
    items.sort_by_key(|item| key(item).1);
    if errors.is_empty() {
        let sorted: Vec<(&str, isize)> = items.iter().map(&key).collect();
        errors = ordinal_errors(dir, what, &sorted);
    }
    if errors.is_empty() { Ok(items) } else { Err(errors) }
}

/// The exported macro `name!` that calls `$callback! { list }`, documented by `doc` (`///` lines).
fn catalogue_macro(name: &str, doc: &str, list: &str) -> String {
    format!(
        "{doc}#[macro_export]\n\
         macro_rules! {name} {{\n    ($callback:ident) => {{\n        $callback! {{\n{list}        }}\n    }};\n}}\n"
    )
}

/// The `kernel_catalogue!` macro, or what is wrong with the kernel files.
fn kernel_catalogue() -> Result<String, Vec<String>> {
    let kernels = read_catalogue(KERNELS, KERNEL_DEFINITION, "kernel", kernel, |k: &Kernel| {
        (k.module.as_str(), k.ordinal)
    })?;
    let mut list = String::new();
    for Kernel { ordinal, module, summary, cost, fixed, per_unit, units, isa } in &kernels {
        let _ = writeln!(
            list,
            "            {} = {ordinal} => {module} {{ summary: {summary:?}, cost: {cost:?}, fixed: {fixed}, \
             per_unit: {per_unit}, units: {units:?}, isa: [{}], }},",
            camel_case(module),
            isa.join(", ")
        );
    }
    Ok(catalogue_macro(
        "kernel_catalogue",
        "/// The kernel catalogue, `Kernel = ordinal => module { facts }` in ordinal order (generated by `build.rs` from\n\
         /// `src/kernels/*.rs`): calls `$callback! { ... }` with it.\n",
        &list,
    ))
}

/// The `operator_catalogue!` macro, or what is wrong with the operator files.
fn operator_catalogue() -> Result<String, Vec<String>> {
    let operators = read_catalogue(OPERATORS, OPERATOR_DEFINITION, "operator", operator, |o: &Operator| {
        (o.module.as_str(), o.ordinal)
    })?;
    let mut list = String::new();
    for Operator { ordinal, module, summary } in &operators {
        let ident = if KEYWORDS.contains(&module.as_str()) { format!("r#{module}") } else { module.clone() };
        let _ = writeln!(
            list,
            "            {} = {ordinal} => {ident} {module:?} {{ summary: {summary:?}, }},",
            camel_case(module),
        );
    }
    Ok(catalogue_macro(
        "operator_catalogue",
        "/// The operator catalogue, `Operator = ordinal => module \"file\" { facts }` in ordinal order (generated by\n\
         /// `build.rs` from `src/operators/*.rs`): calls `$callback! { ... }` with it.\n",
        &list,
    ))
}

/// Rust keywords an operator's file may be named after (its module is then a raw identifier).
const KEYWORDS: [&str; 8] = ["move", "type", "match", "loop", "box", "ref", "static", "use"];

/// The first paragraph of a module doc after `` `Name`: ``, capitalised, and the doc's lines.
fn summary_of<'t>(module: &str, text: &'t str, what: &str) -> Result<(String, Vec<&'t str>), String> {
    let doc: Vec<&str> =
        text.lines().map_while(|l| l.strip_prefix("//!")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    let first: Vec<&str> = doc.iter().take_while(|l| !l.trim().is_empty()).map(|l| l.trim()).collect();
    let name = format!("`{}`: ", camel_case(module));
    let summary = first.join(" ");
    let Some(summary) = summary.strip_prefix(&name).filter(|s| !s.is_empty()) else {
        return Err(format!("its module doc starts `//! {name}` and says what the {what} computes"));
    };
    let mut chars = summary.chars();
    let summary: String = chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars).collect();
    Ok((summary, doc))
}

/// The entry `key:` of a module doc's `text` block, its continuation lines joined.
fn doc_entry(doc: &[&str], key: &str) -> Option<String> {
    let start = doc.iter().position(|l| l.starts_with(&format!("{key}:")))?;
    let mut parts = vec![doc[start][key.len() + 1..].trim()];
    parts.extend(doc[start + 1..].iter().take_while(|l| l.starts_with(' ')).map(|l| l.trim()));
    Some(parts.join(" "))
}

/// An operator file's ordinal and summary, from its module doc.
fn operator(module: &str, text: &str) -> Result<Operator, String> {
    let (summary, doc) = summary_of(module, text, "operator")?;
    let ordinal = doc_entry(&doc, "ordinal").ok_or(
        "its module doc's `text` block states its kind's variant number in stored tables, `ordinal:  N` \
         (the next free N for a new operator)",
    )?;
    let ordinal = ordinal.parse().map_err(|_| format!("`ordinal:  {ordinal}` is not a number"))?;
    Ok(Operator { ordinal, module: module.to_string(), summary })
}

/// A kernel file's ordinal, facts, summary and cost formula, from its module doc.
fn kernel(module: &str, text: &str) -> Result<Kernel, String> {
    let (summary, doc) = summary_of(module, text, "kernel")?;
    let entry = |key: &str| doc_entry(&doc, key);
    let ordinal = entry("ordinal")
        .ok_or("its module doc's `text` block states its place in the catalogue, `ordinal:  N` (the next free N for a new kernel)")?;
    let ordinal = ordinal.parse().map_err(|_| format!("`ordinal:  {ordinal}` is not a number"))?;
    let cost = entry("cost").ok_or("its module doc's `text` block states its cost formula, `cost:  ...`")?;
    let constants = entry("constants").ok_or(
        "its module doc's `text` block states its default cost constants, `constants: fixed N, per_unit N per UNITS`",
    )?;
    let (fixed, per_unit, units) = constants_of(&constants).ok_or_else(|| {
        format!("`constants: {constants}` is not `fixed N, per_unit N` or `fixed N, per_unit N per UNITS`")
    })?;
    let isa = entry("isa")
        .map(|line| line.split(',').map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect())
        .unwrap_or_default();
    Ok(Kernel { ordinal, module: module.to_string(), summary, cost, fixed, per_unit, units, isa })
}

/// `fixed 4, per_unit 1 per row / f32 lanes` -> (4, 1, `row / f32 lanes`); units `none` without `per`.
fn constants_of(line: &str) -> Option<(u64, u64, String)> {
    let (fixed, rest) = line.strip_prefix("fixed ")?.split_once(", per_unit ")?;
    let (per_unit, units) = match rest.split_once(" per ") {
        Some((n, units)) => (n, units.trim()),
        None => (rest, "none"),
    };
    Some((fixed.trim().parse().ok()?, per_unit.trim().parse().ok()?, units.to_string()))
}

/// `broadcast_vec_mult_add_bf16` -> `BroadcastVecMultAddBf16`.
fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
