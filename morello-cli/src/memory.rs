//! Memory: how much this machine has (read from the OS), the search's budget (`--max-memory`), and
//! the check that refuses, before searching, a kernel whose buffers this machine cannot hold.
//!
//! ```text
//! physical   MemTotal of /proc/meminfo, or the cgroup's limit if lower (memory.max in cgroup v2,
//!            memory.limit_in_bytes in v1); unknown elsewhere (then no default budget)
//! budget     --max-memory SIZE: bytes (`4GiB`, `512MiB`, `1000000`) or a share of physical
//!            memory (`25%`); default half of physical memory: a bound on the process. The
//!            search's own estimate (memo and graph, morello_search::Search::max_memory) gets a
//!            share of it (search_budget: the rest is the allocator's slack and what saving the
//!            table copies); at it the search stops cleanly, saves, and the command exits with 1.
//! runnable   `run` and `bench` estimate what verifying the kernel takes
//!            (morello_codegen::verification_bytes) and refuse, with status 2, a spec that needs
//!            more than physical memory, before searching or compiling anything
//! ```

use std::fmt;
use std::path::Path;

use anyhow::Result;
use morello_codegen::{kernel_signature, verification_bytes};
use morello_core::target::parse_size;

use crate::failure::bad_input;
use crate::spec_args::Resolved;

/// The default budget's share of physical memory, in percent: the rest is left for the kernel's
/// own buffers and everything else on the machine.
pub const DEFAULT_PERCENT: u64 = 50;

/// The share of `--max-memory`, in percent, that the search's estimate of its memo and graph may
/// reach when what it solves is saved to a table. The estimate is 0.85-0.95 of the resident set
/// (the rest is the allocator's slack), and a save copies the memo into a table, clones that to
/// merge it with the file, and the file keeps a copy of what it last wrote: measured on an AMD
/// Zen 3, the resident set reached 1.2 times the estimate's peak in a search that finished and 2.4
/// times the budget in one stopped by it with checkpoints (`docs/search.md`, "Memory").
pub const SEARCH_SHARE_WITH_TABLE: u64 = 35;

/// The share of `--max-memory`, in percent, for the search's estimate without a table to save
/// (measured, the resident set reached 1.1-1.3 times the estimate).
pub const SEARCH_SHARE_WITHOUT_TABLE: u64 = 65;

// With the overheads measured (2.3 and 1.3 times the estimate), the process stays under 90% of
// `--max-memory`.
const _: () = assert!(SEARCH_SHARE_WITH_TABLE * 23 / 10 < 90 && SEARCH_SHARE_WITHOUT_TABLE * 13 / 10 < 90);

/// The budget of the search's estimate (`Search::max_memory`) under `--max-memory` `bytes`, when
/// it `saves` a table or not.
pub fn search_budget(bytes: u64, saves: bool) -> u64 {
    share(bytes, if saves { SEARCH_SHARE_WITH_TABLE } else { SEARCH_SHARE_WITHOUT_TABLE })
}

/// A memory size as `--max-memory` takes it: a number of bytes or a share of physical memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySize {
    /// Bytes.
    Bytes(u64),
    /// Percent of physical memory (1 to 100).
    Percent(u64),
}

/// Parses `--max-memory`: `4GiB`, `512MiB`, `1000000` (bytes), or `25%` of physical memory.
///
/// # Errors
/// A message for clap (which exits with status 2).
pub fn parse_memory_size(text: &str) -> Result<MemorySize, String> {
    let size = match text.trim().strip_suffix('%') {
        Some(percent) => match percent.trim().parse::<u64>() {
            Ok(p @ 1..=100) => MemorySize::Percent(p),
            _ => return Err(format!("`{text}` is not a percentage from 1% to 100%")),
        },
        None => MemorySize::Bytes(parse_size(text)?),
    };
    if size == MemorySize::Bytes(0) {
        return Err("the memory budget must be more than 0 bytes".to_string());
    }
    Ok(size)
}

/// The search's budget in bytes: `size` if given, else [`DEFAULT_PERCENT`] of physical memory;
/// `None` when it depends on physical memory and that is unknown.
pub fn budget(size: Option<MemorySize>) -> Option<u64> {
    match size.unwrap_or(MemorySize::Percent(DEFAULT_PERCENT)) {
        MemorySize::Bytes(bytes) => Some(bytes),
        MemorySize::Percent(percent) => physical_memory().map(|total| share(total, percent)),
    }
}

/// `percent` percent of `total`.
fn share(total: u64, percent: u64) -> u64 {
    u64::try_from(u128::from(total) * u128::from(percent) / 100).unwrap_or(u64::MAX)
}

/// The memory this process may use on this machine: the physical memory, or the cgroup's limit if
/// lower. `None` if the system does not say (not Linux).
pub fn physical_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| meminfo_total(&text))?;
    let limit = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|path| cgroup_limit(Path::new(path)))
        .min();
    Some(limit.map_or(total, |limit| limit.min(total)))
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn meminfo_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.trim_start_matches("MemTotal:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// A cgroup's memory limit (`max` or a number of bytes), if the file exists and sets one.
fn cgroup_limit(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Bytes in a few digits with a binary unit: `512 B`, `1.5 KiB`, `23.5 GiB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        if unit == 0 { write!(f, "{} B", self.0) } else { write!(f, "{value:.1} {}", UNITS[unit]) }
    }
}

/// Refuses (status 2), before anything is searched or compiled, a spec whose verification needs
/// more memory than this machine has ([`verification_bytes`]); `command` names what was asked.
///
/// # Errors
/// [`crate::failure::BadInput`] saying how much is needed and what there is.
pub fn check_runnable(resolved: &Resolved, command: &str) -> Result<()> {
    let (Some(physical), Ok(signature)) = (physical_memory(), kernel_signature(&resolved.spec, "kernel"))
    else {
        return Ok(());
    };
    let needed = verification_bytes(&signature);
    if needed <= physical {
        return Ok(());
    }
    let buffers: u128 =
        signature.params.iter().map(|p| p.elements as u128 * p.c_type.size_bytes() as u128).sum();
    let buffers = u64::try_from(buffers).unwrap_or(u64::MAX);
    Err(bad_input(format!(
        "`morello {command}` of {} needs at least {} of memory to run and verify the kernel (its buffers \
         alone take {}), more than this machine's {}: search it without running it (`morello search`), \
         or choose a smaller spec",
        resolved.spec.display(&resolved.target),
        Bytes(needed),
        Bytes(buffers),
        Bytes(physical)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search's estimate gets a share of `--max-memory` that leaves room for what it does not
    /// count (measured: 1.3 times the estimate without a table, 2.3 times with one).
    #[test]
    fn the_search_keeps_to_a_share_of_the_budget_that_leaves_room_for_a_save() {
        let mib = 1 << 20;
        assert_eq!(search_budget(100 * mib, true), 35 * mib);
        assert_eq!(search_budget(100 * mib, false), 65 * mib);
        assert_eq!(search_budget(u64::MAX, false), u64::MAX / 100 * 65 + 9, "no overflow");
    }

    #[test]
    fn sizes_are_bytes_or_a_share() {
        assert_eq!(parse_memory_size("4GiB"), Ok(MemorySize::Bytes(4 << 30)));
        assert_eq!(parse_memory_size("512 MiB"), Ok(MemorySize::Bytes(512 << 20)));
        assert_eq!(parse_memory_size("1000"), Ok(MemorySize::Bytes(1000)));
        assert_eq!(parse_memory_size("25%"), Ok(MemorySize::Percent(25)));
        for bad in ["0", "0%", "101%", "-5%", "lots", "4GB", ""] {
            assert!(parse_memory_size(bad).is_err(), "{bad}");
        }
        assert_eq!(share(1000, 25), 250);
        assert_eq!(budget(Some(MemorySize::Bytes(7))), Some(7));
    }

    #[test]
    fn meminfo_and_cgroup_limits_are_read() {
        let meminfo = "MemTotal:       24683656 kB\nMemFree:         9307912 kB\n";
        assert_eq!(meminfo_total(meminfo), Some(24_683_656 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("memory.max");
        std::fs::write(&file, "max\n").expect("written");
        assert_eq!(cgroup_limit(&file), None, "no limit");
        std::fs::write(&file, "8589934592\n").expect("written");
        assert_eq!(cgroup_limit(&file), Some(8 << 30));
        assert_eq!(cgroup_limit(&dir.path().join("missing")), None);
        if let Some(physical) = physical_memory() {
            assert!(physical > 1 << 20, "{physical}");
        }
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(64 << 30).to_string(), "64.0 GiB");
        assert_eq!(Bytes(u64::MAX).to_string(), "16.0 EiB");
    }
}
