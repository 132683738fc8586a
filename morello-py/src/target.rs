//! Target names as the CLI reads them: `x86` (the best built-in x86 target this host runs, with
//! its L1 and L2 from this host's caches), `x86-avx2`, `x86-avx2-vnni`, `x86-avx512`, `arm-neon`,
//! or the path of a TOML or JSON target file (`docs/targets.md`).

use morello_codegen::host::host_caches;
use morello_core::target::{Target, resolve_target_on_host};
use pyo3::PyResult;

use crate::error::bad_input;

/// The built-in target names.
const BUILTIN: [&str; 5] = ["x86", "x86-avx2", "x86-avx2-vnni", "x86-avx512", "arm-neon"];

/// The target `name` names, with `processors` processors when given.
///
/// # Errors
/// An unknown name or unreadable file, a bad target file, or zero processors.
pub fn load_target(name: &str, processors: Option<u32>) -> PyResult<Target> {
    let target = if BUILTIN.contains(&name) {
        resolve_target_on_host(name, &host_caches())
            .map_err(|e| bad_input(format!("target `{name}`: {e}")))?
            .target
    } else {
        let path = std::path::Path::new(name);
        if !path.exists() {
            return Err(bad_input(format!(
                "unknown target `{name}`: use x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon or the path of a target file"
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad_input(format!("cannot read the target file {name}: {e}")))?;
        let is_json = path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
        if is_json { Target::from_json(&text) } else { Target::from_toml(&text) }
            .map_err(|e| bad_input(format!("target file {name}: {e}")))?
    };
    match processors {
        None => Ok(target),
        Some(0) => Err(bad_input("processors must be at least 1")),
        Some(n) => target.with_processors(n).map_err(|e| bad_input(format!("processors={n}: {e}"))),
    }
}
