//! The host CPU: which [`IsaFeature`]s it can execute, so a caller refuses to run a binary that
//! would die with SIGILL and says why instead.
//!
//! Detection is [`IsaFeature::on_host`] (`is_x86_feature_detected!`: CPUID plus the OS's
//! register-state support). On a non-x86 host no feature is available. Its caches, which the
//! `x86` target takes its L1 and L2 from, are read from Linux's sysfs ([`host_caches`]).

use morello_core::target::{HostCache, IsaFeature};

use crate::error::CodegenError;

/// Whether the host CPU (and OS) supports `feature`.
pub fn host_supports(feature: IsaFeature) -> bool {
    feature.on_host()
}

/// The features of [`IsaFeature::ALL`] that the host supports, in table order.
pub fn host_features() -> Vec<IsaFeature> {
    IsaFeature::ALL.into_iter().filter(|f| f.on_host()).collect()
}

/// The features in `required` that the host lacks, in table order, without duplicates.
pub fn missing_features(required: &[IsaFeature]) -> Vec<IsaFeature> {
    IsaFeature::ALL.into_iter().filter(|f| required.contains(f) && !f.on_host()).collect()
}

/// Checks that the host can run code using `required`.
///
/// # Errors
/// [`CodegenError::MissingHostFeatures`] naming what is missing, e.g. "the host cannot run
/// AVX-512 BF16 instructions".
pub fn require_features(required: &[IsaFeature]) -> Result<(), CodegenError> {
    let missing = missing_features(required);
    if missing.is_empty() { Ok(()) } else { Err(CodegenError::MissingHostFeatures { missing }) }
}

/// The host's caches as Linux describes them under `/sys/devices/system/cpu/cpu0/cache/`, for
/// `x86` (empty where the directory is missing or unreadable: the built-in defaults apply then).
pub fn host_caches() -> Vec<HostCache> {
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else { return Vec::new() };
    let mut caches = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index")) {
            continue;
        }
        let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        if let Ok(cache) = HostCache::from_sysfs(
            &read("level"),
            &read("type"),
            &read("size"),
            &read("ways_of_associativity"),
            &read("number_of_sets"),
            &read("coherency_line_size"),
        ) {
            caches.push(cache);
        }
    }
    caches.sort_by_key(|c| c.level);
    caches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_the_complement_of_supported() {
        let supported = host_features();
        let missing = missing_features(&IsaFeature::ALL);
        for feature in IsaFeature::ALL {
            assert_ne!(supported.contains(&feature), missing.contains(&feature), "{feature}");
        }
        assert_eq!(require_features(&supported).ok(), Some(()));
    }

    #[test]
    fn the_error_names_the_missing_instructions() {
        let error =
            CodegenError::MissingHostFeatures { missing: vec![IsaFeature::Avx512vl, IsaFeature::Avx512bf16] };
        assert_eq!(error.to_string(), "the host cannot run AVX-512 VL and AVX-512 BF16 instructions");
    }
}
