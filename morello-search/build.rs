//! Fingerprints the sources that decide what a stored table entry means (this crate's and
//! `morello-core`'s), so that a table written by a build of the same sources is known to have
//! this build's model probe without running it (see `db/identity.rs`).

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let roots = [manifest.join("src"), manifest.join("../morello-core/src")];
    let mut files = Vec::new();
    for root in &roots {
        println!("cargo:rerun-if-changed={}", root.display());
        collect(root, &mut files);
    }
    files.sort();
    // FNV-1a 64 over each file's path (relative to the manifest) and content.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in &files {
        let relative = file.strip_prefix(&manifest).unwrap_or(file);
        feed(relative.to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(file).unwrap_or_default());
        feed(&[0]);
    }
    // No sources found (an unusual build): 0 means "unknown", and the probe always runs.
    let fingerprint = if files.is_empty() { 0 } else { hash.max(1) };
    println!("cargo:rustc-env=MORELLO_MODEL_SOURCES={fingerprint:016x}");
}
