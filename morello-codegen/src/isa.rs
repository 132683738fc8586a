//! x86 instruction-set features: the one table from a feature's name to its compiler flag.
//!
//! A target names the features its kernels use (`avx2`, `fma`, `avx512f`, ...). This module maps
//! each to the `-m...` flag gcc and clang both accept and to a name for people. Host detection of
//! the same features is in [`crate::host`].

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// An x86 instruction-set extension that generated code may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum IsaFeature {
    /// AVX (256-bit float vectors).
    Avx,
    /// AVX2 (256-bit integer vectors, gathers).
    Avx2,
    /// Fused multiply-add (FMA3).
    Fma,
    /// Half-precision conversions (F16C).
    F16c,
    /// AVX-512 Foundation.
    Avx512f,
    /// AVX-512 Byte and Word.
    Avx512bw,
    /// AVX-512 Doubleword and Quadword.
    Avx512dq,
    /// AVX-512 Vector Length (AVX-512 ops on 128- and 256-bit registers).
    Avx512vl,
    /// AVX-512 BF16 (`vdpbf16ps`, bf16 conversions).
    Avx512bf16,
    /// AVX-512 Vector Neural Network Instructions (`vpdpbusd`).
    Avx512vnni,
    /// AVX-512 VBMI2 (byte and word compress, expand, shifts).
    Avx512vbmi2,
}

/// One row of the feature table.
struct FeatureRow {
    feature: IsaFeature,
    name: &'static str,
    flag: &'static str,
    display: &'static str,
}

/// The table: lower-case name (as in `is_x86_feature_detected!` and targets), compiler flag, and
/// the name printed to people. Ordered from oldest to newest extension.
const TABLE: &[FeatureRow] = &[
    FeatureRow { feature: IsaFeature::Avx, name: "avx", flag: "-mavx", display: "AVX" },
    FeatureRow { feature: IsaFeature::Avx2, name: "avx2", flag: "-mavx2", display: "AVX2" },
    FeatureRow { feature: IsaFeature::Fma, name: "fma", flag: "-mfma", display: "FMA" },
    FeatureRow { feature: IsaFeature::F16c, name: "f16c", flag: "-mf16c", display: "F16C" },
    FeatureRow { feature: IsaFeature::Avx512f, name: "avx512f", flag: "-mavx512f", display: "AVX-512F" },
    FeatureRow { feature: IsaFeature::Avx512bw, name: "avx512bw", flag: "-mavx512bw", display: "AVX-512 BW" },
    FeatureRow { feature: IsaFeature::Avx512dq, name: "avx512dq", flag: "-mavx512dq", display: "AVX-512 DQ" },
    FeatureRow { feature: IsaFeature::Avx512vl, name: "avx512vl", flag: "-mavx512vl", display: "AVX-512 VL" },
    FeatureRow {
        feature: IsaFeature::Avx512bf16,
        name: "avx512bf16",
        flag: "-mavx512bf16",
        display: "AVX-512 BF16",
    },
    FeatureRow {
        feature: IsaFeature::Avx512vnni,
        name: "avx512vnni",
        flag: "-mavx512vnni",
        display: "AVX-512 VNNI",
    },
    FeatureRow {
        feature: IsaFeature::Avx512vbmi2,
        name: "avx512vbmi2",
        flag: "-mavx512vbmi2",
        display: "AVX-512 VBMI2",
    },
];

impl IsaFeature {
    /// Every feature, in table order (oldest extension first).
    pub const ALL: [IsaFeature; 11] = [
        IsaFeature::Avx,
        IsaFeature::Avx2,
        IsaFeature::Fma,
        IsaFeature::F16c,
        IsaFeature::Avx512f,
        IsaFeature::Avx512bw,
        IsaFeature::Avx512dq,
        IsaFeature::Avx512vl,
        IsaFeature::Avx512bf16,
        IsaFeature::Avx512vnni,
        IsaFeature::Avx512vbmi2,
    ];

    /// The features of an AVX2 target: `avx`, `avx2`, `fma`.
    pub const AVX2_TARGET: [IsaFeature; 3] = [IsaFeature::Avx, IsaFeature::Avx2, IsaFeature::Fma];

    /// The features of an AVX-512 target with BF16: AVX2's plus `avx512f`, `avx512bw`,
    /// `avx512dq`, `avx512vl`, `avx512bf16`.
    pub const AVX512_TARGET: [IsaFeature; 8] = [
        IsaFeature::Avx,
        IsaFeature::Avx2,
        IsaFeature::Fma,
        IsaFeature::Avx512f,
        IsaFeature::Avx512bw,
        IsaFeature::Avx512dq,
        IsaFeature::Avx512vl,
        IsaFeature::Avx512bf16,
    ];

    fn row(self) -> &'static FeatureRow {
        TABLE
            .iter()
            .find(|row| row.feature == self)
            .expect("the feature table has one row per IsaFeature variant")
    }

    /// The lower-case name, e.g. `avx512bf16` (the spelling of `is_x86_feature_detected!`).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The gcc/clang flag that enables the feature, e.g. `-mavx512bf16`.
    pub fn compiler_flag(self) -> &'static str {
        self.row().flag
    }

    /// The name printed to people, e.g. `AVX-512 BF16`.
    pub fn display_name(self) -> &'static str {
        self.row().display
    }
}

/// The compiler flags for a set of features, in table order, without duplicates.
pub fn compiler_flags(features: &[IsaFeature]) -> Vec<&'static str> {
    TABLE.iter().filter(|row| features.contains(&row.feature)).map(|row| row.flag).collect()
}

impl fmt::Display for IsaFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<IsaFeature> for &'static str {
    fn from(feature: IsaFeature) -> Self {
        feature.name()
    }
}

/// The error for a feature name not in the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown instruction-set feature `{0}` (known: {known})", known = known_names())]
pub struct UnknownFeature(pub String);

fn known_names() -> String {
    TABLE.iter().map(|row| row.name).collect::<Vec<_>>().join(", ")
}

impl FromStr for IsaFeature {
    type Err = UnknownFeature;

    /// Parses a lower-case feature name such as `avx512f` (case-insensitive).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        TABLE
            .iter()
            .find(|row| row.name.eq_ignore_ascii_case(text))
            .map(|row| row.feature)
            .ok_or_else(|| UnknownFeature(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_has_one_row_and_round_trips() {
        assert_eq!(TABLE.len(), IsaFeature::ALL.len());
        for feature in IsaFeature::ALL {
            assert_eq!(feature.name().parse::<IsaFeature>(), Ok(feature));
            assert!(feature.compiler_flag().starts_with("-m"));
        }
        assert!("sse9".parse::<IsaFeature>().is_err());
    }

    #[test]
    fn flags_follow_table_order_without_duplicates() {
        let flags = compiler_flags(&[IsaFeature::Fma, IsaFeature::Avx2, IsaFeature::Fma]);
        assert_eq!(flags, ["-mavx2", "-mfma"]);
    }
}
