//! The documents' references to the repository are checked against it, so the map cannot go stale
//! without a test failing:
//!
//! - every path `ARCHITECTURE.md` names in backticks exists: from the repository root
//!   (`morello-core/src/cost.rs`, `docs/search.md`, `deploy/slurm/`), or, inside a crate's section
//!   (a `###` heading naming the crate), from that crate's `src/` or its directory (`spec/conv.rs`,
//!   `build.rs`);
//! - every code item it names in backticks (`CanonicalSpec`, `Search::max_memory`, `db::OpenTable`,
//!   `kernel_catalogue!`) is defined somewhere in the workspace's Rust sources: each segment of the
//!   path as a `fn`, type, trait, constant, module, macro, field or enum variant (a kernel's
//!   `KernelKind` variant, which the build script makes from a file name, by its file in
//!   `morello-core/src/kernels/`);
//! - every relative link of `README.md`, `ARCHITECTURE.md` and `docs/*.md` reaches a file, and a
//!   link to a section of a Markdown file reaches a heading of it;
//! - every citation of a section (a Markdown file's name, a comma and the section's title in
//!   double quotes, in those documents and in the comments of the sources) names a heading of that
//!   file (the heading's text, or its text before a colon).
//!
//! So `ARCHITECTURE.md` writes what is not code (a target's name, a level, a command) without
//! backticks, or with a space in it, as `matmul 64x64x64` or `morello search`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this crate's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate is in the workspace").to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The workspace's crate directories (`morello-core`, ..., `benches`), from `Cargo.toml`.
fn crate_dirs(root: &Path) -> Vec<String> {
    let manifest = read(&root.join("Cargo.toml"));
    let members = manifest.split("members = [").nth(1).expect("the workspace lists its members");
    let members = &members[..members.find(']').expect("the list is closed")];
    members.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}

/// Files under `dir` (recursively) whose names end with one of `extensions`, leaving out build
/// output (a directory with a `CACHEDIR.TAG`) and XLA's fixtures.
fn files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "fixtures" | ".git") && !path.join("CACHEDIR.TAG").exists() {
                files(&path, extensions, out);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// The workspace's Rust sources.
fn rust_sources(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in crate_dirs(root) {
        files(&root.join(dir), &[".rs"], &mut out);
    }
    out.sort();
    out
}

/// The documents: `README.md`, `ARCHITECTURE.md` and `docs/*.md`.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs = Vec::new();
    files(&root.join("docs"), &[".md"], &mut docs);
    docs.sort();
    out.extend(docs);
    out
}

/// A document's lines outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The inline code spans of a line (text between single backticks).
fn code_spans(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        out.push(&after[..close]);
        rest = &after[close + 1..];
    }
    out
}

const PATH_ENDINGS: [&str; 12] =
    [".rs", ".md", ".toml", ".sh", ".sbatch", ".yaml", ".py", ".txt", ".c", ".svg", ".lock", ".mdb"];

/// Whether a code span names a file or directory.
fn is_path(span: &str) -> bool {
    !span.is_empty()
        && !span.contains(char::is_whitespace)
        && !span.contains(['<', '>', '*', '{', '$', '='])
        && !span.contains("::")
        && !span.starts_with('-')
        && span.contains(|c: char| c.is_ascii_alphanumeric())
        && (span.contains('/') || PATH_ENDINGS.iter().any(|e| span.ends_with(e)))
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The item paths a code span names, as segments (`Search::new(..).solve` gives `[Search, new]`
/// and `[solve]`; `A::{B, C}` gives `[A, B]` and `[A, C]`; a macro keeps its `!`), or nothing
/// when the span is not code (spaces, flags, text forms).
fn item_paths(span: &str) -> Vec<Vec<String>> {
    if span.contains(char::is_whitespace) && !span.contains('{') {
        return Vec::new();
    }
    // Drop call arguments and generic arguments.
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in span.chars() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let plain = plain.replace("::.", ".").trim_end_matches("::").to_string();
    let mut out = Vec::new();
    for part in plain.split('.').filter(|p| !p.is_empty()) {
        let (head, group) = match (part.find("::{"), part.strip_suffix('}')) {
            (Some(at), Some(_)) => (&part[..at], Some(&part[at + 3..part.len() - 1])),
            _ => (part, None),
        };
        let head: Vec<String> = head.split("::").map(str::to_string).collect();
        let valid = |segments: &[String]| {
            segments.iter().enumerate().all(|(i, s)| {
                is_identifier(s)
                    || (i + 1 == segments.len() && s.ends_with('!') && is_identifier(&s[..s.len() - 1]))
            })
        };
        match group {
            Some(group) => {
                for member in group.split(',').map(str::trim) {
                    let mut path = head.clone();
                    path.extend(member.split("::").map(str::to_string));
                    if valid(&path) {
                        out.push(path);
                    } else {
                        return Vec::new();
                    }
                }
            }
            None if valid(&head) => out.push(head),
            None => return Vec::new(),
        }
    }
    out
}

/// The names the Rust sources define: functions, types, traits, constants, statics, modules and
/// macros by their keyword; fields and enum variants by a line that starts with the name followed
/// by `:`, `,`, `(`, `{` or `=`.
fn defined_names(sources: &[PathBuf]) -> BTreeSet<String> {
    const KEYWORDS: [&str; 10] =
        ["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union", "macro_rules!"];
    let mut names = BTreeSet::new();
    for path in sources {
        let text = read(path);
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let words: Vec<&str> = code
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '!'))
                .filter(|w| !w.is_empty())
                .collect();
            for pair in words.windows(2) {
                if KEYWORDS.contains(&pair[0]) {
                    names.insert(pair[1].trim_end_matches('!').to_string());
                }
            }
            let mut rest = code.trim_start();
            for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
                rest = rest.strip_prefix(prefix).unwrap_or(rest);
            }
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let (name, after) = rest.split_at(end);
            if is_identifier(name) && after.trim_start().starts_with([':', ',', '(', '{', '=']) {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// Names that are not the workspace's but may be named as code: the language's and the standard
/// library's, and the crates the workspace depends on (from `Cargo.toml`).
fn outside_names(root: &Path) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = [
        "std", "crate", "self", "super", "Self", "Some", "None", "Ok", "Err", "Option", "Result", "Vec",
        "String", "Box", "Arc", "u8", "u16", "u32", "u64", "i32", "i64", "f32", "f64", "usize", "bool",
        "cfg", "test", "unsafe",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    let manifest = read(&root.join("Cargo.toml"));
    let deps = manifest.split("[workspace.dependencies]").nth(1).expect("workspace dependencies");
    for line in deps.lines().take_while(|l| !l.starts_with('[')) {
        if let Some((name, _)) = line.split_once('=') {
            names.insert(name.trim().replace('-', "_"));
        }
    }
    names
}

/// Checks every backticked path and item of `ARCHITECTURE.md`; returns what it could not find.
fn stale_references(root: &Path) -> Vec<String> {
    let crates = crate_dirs(root);
    let sources = rust_sources(root);
    let defined = defined_names(&sources);
    let outside = outside_names(root);
    let kernel_files = |name: &str| {
        let mut snake = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        }
        root.join("morello-core/src/kernels").join(format!("{snake}.rs")).is_file()
    };
    let text = read(&root.join("ARCHITECTURE.md"));
    let mut section: Option<String> = None;
    let mut stale = Vec::new();
    for (number, line) in prose_lines(&text) {
        if line.starts_with("## ") {
            section = None;
        }
        if line.starts_with("### ") {
            section = crates.iter().find(|c| line.contains(&format!("`{c}`"))).cloned();
        }
        if line.starts_with('#') {
            continue;
        }
        for span in code_spans(line) {
            if is_path(span) {
                let relative = span.trim_start_matches("./");
                let mut candidates = vec![root.join(relative)];
                if let Some(c) = &section {
                    candidates.push(root.join(c).join("src").join(relative));
                    candidates.push(root.join(c).join(relative));
                }
                if !candidates.iter().any(|p| p.exists()) {
                    stale.push(format!("ARCHITECTURE.md:{number}: no file or directory `{span}`"));
                }
            } else if let Some(name) = span.strip_prefix("morello-").filter(|_| !span.contains(' ')) {
                if !crates.contains(&format!("morello-{name}")) {
                    stale.push(format!("ARCHITECTURE.md:{number}: no crate `{span}`"));
                }
            } else {
                for path in item_paths(span) {
                    for segment in &path {
                        let (name, macro_) = match segment.strip_suffix('!') {
                            Some(name) => (name, true),
                            None => (segment.as_str(), false),
                        };
                        let found = outside.contains(name)
                            || name.starts_with("morello_")
                            || defined.contains(name)
                            || (!macro_ && kernel_files(name));
                        if !found {
                            stale.push(format!(
                                "ARCHITECTURE.md:{number}: `{span}`: `{name}` is defined nowhere"
                            ));
                        }
                    }
                }
            }
        }
    }
    stale
}

#[test]
fn every_path_and_item_the_architecture_map_names_exists() {
    let stale = stale_references(&root());
    assert!(stale.is_empty(), "ARCHITECTURE.md names what is not in the repository:\n{}", stale.join("\n"));
}

/// A heading's GitHub anchor: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c.to_ascii_lowercase() })
        .collect()
}

/// The headings of a Markdown file, without their `#`s and backticks.
fn headings(text: &str) -> Vec<String> {
    prose_lines(text)
        .into_iter()
        .filter(|(_, l)| l.starts_with('#'))
        .map(|(_, l)| l.trim_start_matches('#').trim().replace('`', ""))
        .collect()
}

/// The relative link targets of a Markdown line: `[text](target)`, without web addresses.
fn links(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices("](") {
        let rest = &line[at + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with("mailto:") && !target.is_empty() {
            out.push(target);
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_documents_reaches_a_file_and_a_heading() {
    let root = root();
    let mut broken = Vec::new();
    for document in documents(&root) {
        let text = read(&document);
        let name = document.strip_prefix(&root).unwrap_or(&document).display().to_string();
        for (number, line) in prose_lines(&text) {
            for target in links(line) {
                let (file, section) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() {
                    document.clone()
                } else {
                    document.parent().expect("a document is in a directory").join(file)
                };
                if !path.exists() {
                    broken.push(format!("{name}:{number}: `{target}`: no such file"));
                } else if !section.is_empty()
                    && path.extension().is_some_and(|e| e == "md")
                    && !headings(&read(&path)).iter().any(|h| anchor(h) == section)
                {
                    broken.push(format!("{name}:{number}: `{target}`: no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A file's text as one line: comment markers dropped from source files, whitespace collapsed, so
/// a citation that wraps is read whole.
fn flattened(path: &Path) -> String {
    let text = read(path);
    let markdown = path.extension().is_some_and(|e| e == "md");
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.trim_start();
        if !markdown {
            for marker in ["//!", "///", "//", "#"] {
                if let Some(rest) = line.strip_prefix(marker) {
                    line = rest;
                    break;
                }
            }
        }
        out.push_str(line.trim());
        out.push(' ');
    }
    out
}

/// The section citations of a flattened text (a Markdown file's name, optionally as a link, a
/// comma and a title in double quotes), as (file name, title).
fn citations(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut read_up_to = 0;
    for (at, _) in text.match_indices(".md") {
        if at < read_up_to {
            continue; // the link target of a citation already read
        }
        let start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.')))
            .map_or(0, |i| i + 1);
        let file = &text[start..at + 3];
        let mut rest = &text[at + 3..];
        rest = rest.trim_start_matches(['`', ']']);
        if let Some(link) = rest.strip_prefix('(') {
            rest = link.split_once(')').map_or("", |(_, r)| r);
        }
        rest = rest.trim_start_matches(['`', ')']);
        let Some(after_comma) = rest.strip_prefix(',') else { continue };
        let Some(quoted) = after_comma.trim_start().strip_prefix('"') else { continue };
        let Some((title, _)) = quoted.split_once('"') else { continue };
        read_up_to = text.len() - quoted.len() + title.len();
        out.push((file.rsplit('/').next().unwrap_or(file).to_string(), title.to_string()));
    }
    out
}

#[test]
fn every_cited_section_is_a_heading_of_the_file_it_names() {
    let root = root();
    let mut markdown = documents(&root);
    markdown.push(root.join("docs/adding-a-kernel.md"));
    let mut cited_in = documents(&root);
    cited_in.extend(rust_sources(&root));
    files(&root.join("benches"), &[".py"], &mut cited_in);
    let mut stale = Vec::new();
    for file in cited_in {
        let name = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        for (document, title) in citations(&flattened(&file)) {
            let Some(target) =
                markdown.iter().find(|p| p.file_name().is_some_and(|n| n == document.as_str()))
            else {
                stale.push(format!("{name}: cites \"{title}\" of `{document}`, which is not a document"));
                continue;
            };
            let found = headings(&read(target)).iter().any(|h| {
                let title = title.replace('`', "");
                *h == title || h.split(':').next() == Some(title.as_str())
            });
            if !found {
                stale.push(format!("{name}: cites \"{title}\" of `{document}`, which has no such heading"));
            }
        }
    }
    assert!(stale.is_empty(), "stale section citations:\n{}", stale.join("\n"));
}

#[test]
fn the_checks_find_what_is_missing() {
    // Each reader on a line it must see through.
    assert_eq!(code_spans("a `b` c `d/e.rs` f"), ["b", "d/e.rs"]);
    assert!(is_path("spec/conv.rs") && is_path("deploy/slurm/") && !is_path("--db") && !is_path("a::b"));
    assert_eq!(item_paths("Search::new(..).solve"), [vec!["Search", "new"], vec!["solve"]]);
    assert_eq!(
        item_paths("TableLocation::{Memory, File}"),
        [vec!["TableLocation", "Memory"], vec!["TableLocation", "File"]]
    );
    assert_eq!(item_paths("text.parse::<HloModule>()"), [vec!["text"], vec!["parse"]]);
    assert_eq!(item_paths("kernel_catalogue!"), [vec!["kernel_catalogue!"]]);
    assert!(item_paths("matmul 64x64x64").is_empty() && item_paths("--max-memory").is_empty());
    assert_eq!(anchor("MKL, oneDNN and XNNPACK"), "mkl-onednn-and-xnnpack");
    assert_eq!(links("see [a](docs/a.md#b) and [c](https://x.y)"), ["docs/a.md#b"]);
    assert_eq!(
        citations("(`docs/cost-model.md`, \"Register blocks\")"),
        [("cost-model.md".to_string(), "Register blocks".to_string())]
    );
    assert_eq!(
        citations("([`search.md`](search.md), \"Packing\")"),
        [("search.md".to_string(), "Packing".to_string())]
    );
    // A name defined nowhere is reported.
    let defined = defined_names(&[root().join("morello-cli/tests/cli/architecture.rs")]);
    assert!(defined.contains("stale_references") && !defined.contains("no_such_function_anywhere"));
}
