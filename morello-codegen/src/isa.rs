//! Compiler flags for instruction-set features: the one table from an [`IsaFeature`] (defined,
//! with what each implies, in `morello-core`) to the `-m...` flag gcc and clang both accept.
//! NEON needs none: every AArch64 compiler enables it by default (`-march=armv8-a`); the
//! dot-product extension is `-march=armv8.2-a+dotprod`, which both compilers accept.
//!
//! Host detection of the same features is [`IsaFeature::on_host`], wrapped for builds in
//! [`crate::host`].

use morello_core::target::IsaFeature;

/// The gcc/clang flag that enables `feature`, e.g. `-mavx512bf16` (`-march=armv8.2-a+dotprod` for
/// AArch64's dot products); `None` for a feature every compiler of its architecture enables (NEON).
pub fn compiler_flag(feature: IsaFeature) -> Option<&'static str> {
    Some(match feature {
        IsaFeature::Neon => return None,
        IsaFeature::Dotprod => "-march=armv8.2-a+dotprod",
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
        IsaFeature::Avxvnni => "-mavxvnni",
    })
}

/// The compiler flags for a set of features, in [`IsaFeature::ALL`] order, without duplicates.
pub fn compiler_flags(features: &[IsaFeature]) -> Vec<&'static str> {
    IsaFeature::ALL.into_iter().filter(|f| features.contains(f)).filter_map(compiler_flag).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::target::Architecture;

    #[test]
    fn every_x86_flag_is_the_feature_name_after_m() {
        for feature in IsaFeature::ALL.into_iter().filter(|f| f.architecture() == Architecture::X86_64) {
            assert_eq!(compiler_flag(feature), Some(format!("-m{}", feature.name()).as_str()));
        }
        assert_eq!(compiler_flag(IsaFeature::Neon), None);
        assert_eq!(compiler_flag(IsaFeature::Dotprod), Some("-march=armv8.2-a+dotprod"));
    }

    #[test]
    fn flags_follow_table_order_without_duplicates() {
        let flags = compiler_flags(&[IsaFeature::Fma, IsaFeature::Avx2, IsaFeature::Fma]);
        assert_eq!(flags, ["-mavx2", "-mfma"]);
    }
}
