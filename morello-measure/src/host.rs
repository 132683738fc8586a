//! The host's fingerprint: what makes one machine's timings differ from another's, as one line of
//! text and its hash, so that measured winners (wisdom) are kept per machine.
//!
//! ```text
//! description  "<CPU model name> (family F model M); <target ISA features the host has>; caches <L1d 32K, ...>"
//! fingerprint  FNV-1a 64 of the description
//! ```
//!
//! Read from `/proc/cpuinfo` (the first processor's `model name`, `cpu family` and `model`) and
//! `/sys/devices/system/cpu/cpu0/cache/index*/` (`level`, `type`, `size`); what a file does not
//! say is written as `unknown`, so a machine without them still has a stable fingerprint. The
//! same machine gives the same line on every run (nothing in it changes while it runs: no
//! frequencies, no core counts in use); two machines with the same CPU model, features and caches
//! share it, which is what wisdom wants (they time alike).

use morello_core::target::{IsaFeature, Target};

/// A machine as wisdom keys it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFingerprint {
    /// FNV-1a 64 of `description`.
    pub fingerprint: u64,
    /// The CPU, the target's features it has, and its caches, one line.
    pub description: String,
}

/// This machine's fingerprint for code built for `target` (the features named are the target's
/// that the host supports).
pub fn host_fingerprint(target: &Target) -> HostFingerprint {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut caches = Vec::new();
    for index in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |file: &str| std::fs::read_to_string(format!("{dir}/{file}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else {
            continue;
        };
        caches.push(CacheText { level, kind, size });
    }
    let features: Vec<IsaFeature> = target.isa_with_implied().into_iter().filter(|f| f.on_host()).collect();
    fingerprint_of(&cpuinfo, &caches, &features)
}

/// The texts of one sysfs cache directory's `level`, `type` and `size` files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheText {
    /// `level`, e.g. `1`.
    pub level: String,
    /// `type`: `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// `size`, e.g. `32K`.
    pub size: String,
}

/// The fingerprint of a machine whose `/proc/cpuinfo` is `cpuinfo`, with `caches` and `features`.
pub fn fingerprint_of(cpuinfo: &str, caches: &[CacheText], features: &[IsaFeature]) -> HostFingerprint {
    // The first processor's fields (every processor of one machine says the same).
    let first = cpuinfo.split("\n\n").next().unwrap_or_default();
    let field = |name: &str| {
        first
            .lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map_or_else(|| "unknown".to_string(), |(_, value)| value.trim().to_string())
    };
    let features = if features.is_empty() {
        "no target features".to_string()
    } else {
        features.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    };
    let mut cache_names: Vec<String> = caches
        .iter()
        .map(|c| {
            let suffix = match c.kind.trim() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            format!("L{}{suffix} {}", c.level.trim(), c.size.trim())
        })
        .collect();
    cache_names.sort();
    cache_names.dedup();
    let caches = if cache_names.is_empty() { "unknown".to_string() } else { cache_names.join(", ") };
    let description = format!(
        "{} (family {} model {}); {features}; caches {caches}",
        field("model name"),
        field("cpu family"),
        field("model")
    );
    HostFingerprint { fingerprint: fnv(description.as_bytes()), description }
}

/// FNV-1a 64 (stable across runs, builds and Rust versions, unlike the standard hasher).
fn fnv(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash: u64, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZEN3: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
                        model name\t: AMD EPYC 7B13\nflags\t\t: fpu avx2 fma\n\nprocessor\t: 1\n\
                        model name\t: something else\n";

    fn caches() -> Vec<CacheText> {
        let cache = |level: &str, kind: &str, size: &str| CacheText {
            level: format!("{level}\n"),
            kind: format!("{kind}\n"),
            size: format!("{size}\n"),
        };
        vec![cache("1", "Data", "32K"), cache("1", "Instruction", "32K"), cache("2", "Unified", "512K")]
    }

    #[test]
    fn the_description_names_the_cpu_its_features_and_caches() {
        let host = fingerprint_of(ZEN3, &caches(), &[IsaFeature::Avx2, IsaFeature::Fma]);
        assert_eq!(
            host.description,
            "AMD EPYC 7B13 (family 25 model 1); avx2, fma; caches L1d 32K, L1i 32K, L2 512K"
        );
        assert_eq!(host, fingerprint_of(ZEN3, &caches(), &[IsaFeature::Avx2, IsaFeature::Fma]), "stable");
    }

    #[test]
    fn another_cpu_feature_set_or_cache_is_another_host() {
        let base = fingerprint_of(ZEN3, &caches(), &[IsaFeature::Avx2]);
        let other_cpu = fingerprint_of(&ZEN3.replace("7B13", "7763"), &caches(), &[IsaFeature::Avx2]);
        let other_features = fingerprint_of(ZEN3, &caches(), &[]);
        let mut smaller = caches();
        smaller[2].size = "256K".into();
        let other_cache = fingerprint_of(ZEN3, &smaller, &[IsaFeature::Avx2]);
        for other in [other_cpu, other_features, other_cache] {
            assert_ne!(base.fingerprint, other.fingerprint, "{}", other.description);
        }
    }

    #[test]
    fn a_machine_that_says_nothing_still_has_a_stable_fingerprint() {
        let host = fingerprint_of("", &[], &[]);
        assert_eq!(
            host.description,
            "unknown (family unknown model unknown); no target features; caches unknown"
        );
        assert_eq!(host, fingerprint_of("", &[], &[]));
    }
}
