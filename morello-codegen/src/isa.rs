//! Compiler flags for instruction-set features: the one table from an [`IsaFeature`] (defined,
//! with what each implies, in `morello-core`) to the `-m...` flag gcc and clang both accept.
//!
//! Host detection of the same features is [`IsaFeature::on_host`], wrapped for builds in
//! [`crate::host`].

use morello_core::target::IsaFeature;

/// The gcc/clang flag that enables `feature`, e.g. `-mavx512bf16`.
pub fn compiler_flag(feature: IsaFeature) -> &'static str {
    match feature {
        IsaFeature::Avx => "-mavx",
        IsaFeature::Avx2 => "-mavx2",
        IsaFeature::Fma => "-mfma",
        IsaFeature::F16c => "-mf16c",
        IsaFeature::Avx512f => "-mavx512f",
        IsaFeature::Avx512bw => "-mavx512bw",
        IsaFeature::Avx512dq => "-mavx512dq",
        IsaFeature::Avx512vl => "-mavx512vl",
        IsaFeature::Avx512bf16 => "-mavx512bf16",
        IsaFeature::Avx512vnni => "-mavx512vnni",
        IsaFeature::Avx512vbmi2 => "-mavx512vbmi2",
    }
}

/// The compiler flags for a set of features, in [`IsaFeature::ALL`] order, without duplicates.
pub fn compiler_flags(features: &[IsaFeature]) -> Vec<&'static str> {
    IsaFeature::ALL.into_iter().filter(|f| features.contains(f)).map(compiler_flag).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_the_feature_name_after_m() {
        for feature in IsaFeature::ALL {
            assert_eq!(compiler_flag(feature), format!("-m{}", feature.name()));
        }
    }

    #[test]
    fn flags_follow_table_order_without_duplicates() {
        let flags = compiler_flags(&[IsaFeature::Fma, IsaFeature::Avx2, IsaFeature::Fma]);
        assert_eq!(flags, ["-mavx2", "-mfma"]);
    }
}
