//! The workspace's module graph has no import circles: within each crate, no two modules (source
//! files) reach each other through `crate::`, `super::` or `self::` paths, directly or through
//! others. A module may use its ancestors and descendants (a parent declares and re-exports its
//! children; a child builds on its parent's items): those edges are part of one tree and are not
//! counted. Test code (`tests` modules and `#[cfg(test)] mod tests` blocks) and comments are left
//! out.
//!
//! A circle makes two modules one concept split across two files: neither can be read, tested or
//! moved without the other. The fix is to move what both need into a third module below both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module: its path inside its crate (`["db", "table"]` for `src/db/table.rs`).
type Module = Vec<String>;

/// The module path of a source file under `src`, or `None` for a test module.
fn module_of(src: &Path, file: &Path) -> Option<Module> {
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    if parts.iter().any(|p| p == "tests" || p == "proptests") {
        return None;
    }
    Some(parts)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without comments and without its trailing `#[cfg(test)] mod tests` block.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Reads a path or use tree after `at` (just past `crate::` and the like): every full path it
/// names, as segments (`a::{b, c::d}` gives `[a, b]` and `[a, c, d]`).
fn paths_at(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let skip_space = |at: &mut usize| {
        while *at < code.len() && code[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    let mut path = prefix;
    loop {
        skip_space(&mut at);
        if at < code.len() && code[at] == b'{' {
            at += 1;
            loop {
                skip_space(&mut at);
                if at >= code.len() || code[at] == b'}' {
                    return at + 1;
                }
                at = paths_at(code, at, path.clone(), out);
                skip_space(&mut at);
                if at < code.len() && code[at] == b',' {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < code.len() && (code[at].is_ascii_alphanumeric() || code[at] == b'_') {
            at += 1;
        }
        if start == at {
            out.push(path);
            return at;
        }
        path.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// The modules of its crate that `module`'s code names.
fn uses(module: &Module, code: &str, modules: &BTreeSet<Module>) -> BTreeSet<Module> {
    let bytes = code.as_bytes();
    let mut named = Vec::new();
    for (at, _) in code.match_indices("::") {
        let before = &code[..at];
        let word_start =
            before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let word = &before[word_start..];
        if !matches!(word, "crate" | "super" | "self") {
            continue;
        }
        if word_start > 0 && before[..word_start].ends_with("::") {
            continue; // `super::super::x`: read from the first `super`
        }
        // The module the path starts from.
        let mut base: Module = match word {
            "crate" => Vec::new(),
            _ => module.clone(),
        };
        let mut rest = at + 2;
        if word == "super" {
            base.pop();
            while code[rest..].starts_with("super::") {
                base.pop();
                rest += "super::".len();
            }
        }
        let mut paths = Vec::new();
        paths_at(bytes, rest, Vec::new(), &mut paths);
        for path in paths {
            let mut full = base.clone();
            let mut best = None;
            for segment in path {
                full.push(segment);
                if modules.contains(&full) {
                    best = Some(full.clone());
                }
            }
            named.extend(best);
        }
    }
    named.into_iter().filter(|t| !(t.starts_with(module) || module.starts_with(t))).collect()
}

/// Strongly connected components of more than one module (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on_stack: BTreeSet<Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit(s: &mut State<'_>, v: &Module) {
        let i = s.index.len();
        s.index.insert(v.clone(), i);
        s.low.insert(v.clone(), i);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

/// Each crate's module graph, by crate directory name.
fn graphs() -> BTreeMap<String, BTreeMap<Module, BTreeSet<Module>>> {
    let workspace =
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the CLI crate is in the workspace");
    let mut out = BTreeMap::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(workspace)
        .expect("the workspace directory reads")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .collect();
    crates.sort();
    for dir in crates {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let parsed: Vec<(Module, String)> = files
            .iter()
            .filter_map(|f| {
                let module = module_of(&src, f)?;
                let text = std::fs::read_to_string(f).expect("a source file reads");
                Some((module, code_of(&text)))
            })
            .collect();
        let modules: BTreeSet<Module> = parsed.iter().map(|(m, _)| m.clone()).collect();
        let edges = parsed.iter().map(|(m, code)| (m.clone(), uses(m, code, &modules))).collect();
        out.insert(
            dir.file_name().expect("a crate directory has a name").to_string_lossy().into_owned(),
            edges,
        );
    }
    out
}

#[test]
fn no_crate_has_an_import_circle() {
    let graphs = graphs();
    assert!(graphs.len() >= 6, "found the workspace's crates: {:?}", graphs.keys().collect::<Vec<_>>());
    let mut problems = Vec::new();
    for (krate, edges) in &graphs {
        for circle in circles(edges) {
            let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
            let links: Vec<String> = circle
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| circle.contains(b))
                        .map(move |b| format!("{} -> {}", a.join("::"), b.join("::")))
                })
                .collect();
            problems.push(format!("{krate}: {} ({})", names.join(", "), links.join("; ")));
        }
    }
    assert!(problems.is_empty(), "import circles:\n{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_and_reads_use_trees() {
    let modules: BTreeSet<Module> =
        [vec![], vec!["a".to_string()], vec!["b".to_string()], vec!["b".to_string(), "c".to_string()]]
            .into_iter()
            .collect();
    let a = vec!["a".to_string()];
    let c = vec!["b".to_string(), "c".to_string()];
    // `a` names `b::c` through a nested use tree; `b::c` names `a` through `super::super`.
    let from_a = uses(&a, "use crate::{x, b::{c::Thing, y}};", &modules);
    assert_eq!(from_a, BTreeSet::from([vec!["b".to_string()], c.clone()]));
    let from_c = uses(&c, "fn f() -> super::super::a::T { todo() }", &modules);
    assert_eq!(from_c, BTreeSet::from([a.clone()]));
    // A child naming its parent is not an edge.
    assert!(uses(&c, "use super::Thing;", &modules).is_empty());
    let edges = BTreeMap::from([(a.clone(), from_a), (c.clone(), from_c)]);
    assert_eq!(circles(&edges), vec![vec![a, c]]);
}
