//! Instruction-set features: the one list of the extensions a target may name (x86's and
//! AArch64's), the architecture each belongs to, what each implies, and whether the host CPU has
//! it.
//!
//! A target lists the features its code may use (`isa = ["avx2", "fma"]`); a kernel lists the ones
//! its code needs ([`crate::kernels::KernelKind::required_isa`]). A feature implies the ones it is
//! built on, as the compilers' `-m` flags do, so a target that names `avx2` also has `avx`:
//!
//! ```text
//! avx2, fma, f16c                          -> avx
//! avx512f                                  -> avx2
//! avx512bw, avx512dq, avx512vl, avx512bf16,
//! avx512vnni, avx512vbmi2                  -> avx512f
//! avxvnni                                  -> avx2
//! neon                                     -> (AArch64's Advanced SIMD)
//! dotprod                                  -> neon
//! ```
//!
//! A target's features all belong to one [`Architecture`]: the code generator compiles for it
//! (with a cross compiler when the host is another).
//!
//! The code generator maps each feature to its compiler flag; this module knows nothing of
//! compilers.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The instruction-set architecture a feature belongs to, and the one a target's code is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Architecture {
    /// x86-64.
    X86_64,
    /// AArch64 (64-bit ARM).
    Aarch64,
}

impl Architecture {
    /// The architecture of the host this program runs on, if it is one of these.
    pub fn host() -> Option<Architecture> {
        if cfg!(target_arch = "x86_64") {
            Some(Architecture::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Architecture::Aarch64)
        } else {
            None
        }
    }

    /// The name used by compilers and Debian's packages: `x86_64` or `aarch64`.
    pub fn name(self) -> &'static str {
        match self {
            Architecture::X86_64 => "x86_64",
            Architecture::Aarch64 => "aarch64",
        }
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An instruction-set extension that generated code may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// AVX-VNNI: `vpdpbusd` on 256-bit vectors, VEX-encoded (Alder Lake, Sapphire Rapids and later
    /// Intel cores, Zen 5; not Zen 3 or Zen 4). Not implied by AVX-512 VNNI, nor implying it.
    Avxvnni,
    /// AArch64 Advanced SIMD (NEON): 128-bit vectors, part of every ARMv8-A core.
    Neon,
    /// AArch64's dot-product extension (`sdot`/`udot`, `vdotq_s32`): optional from ARMv8.2-A,
    /// in every ARMv8.4-A core (Neoverse N1 has it, Cortex-A72 does not).
    Dotprod,
}

use IsaFeature as F;

impl IsaFeature {
    /// Every feature, oldest extension first (the order lists of features are printed in).
    pub const ALL: [IsaFeature; 14] = [
        F::Avx,
        F::Avx2,
        F::Fma,
        F::F16c,
        F::Avx512f,
        F::Avx512bw,
        F::Avx512dq,
        F::Avx512vl,
        F::Avx512bf16,
        F::Avx512vnni,
        F::Avx512vbmi2,
        F::Avxvnni,
        F::Neon,
        F::Dotprod,
    ];

    /// The lower-case name, e.g. `avx512bf16` (the spelling of targets and of
    /// `is_x86_feature_detected!`).
    pub fn name(self) -> &'static str {
        match self {
            F::Avx => "avx",
            F::Avx2 => "avx2",
            F::Fma => "fma",
            F::F16c => "f16c",
            F::Avx512f => "avx512f",
            F::Avx512bw => "avx512bw",
            F::Avx512dq => "avx512dq",
            F::Avx512vl => "avx512vl",
            F::Avx512bf16 => "avx512bf16",
            F::Avx512vnni => "avx512vnni",
            F::Avx512vbmi2 => "avx512vbmi2",
            F::Avxvnni => "avxvnni",
            F::Neon => "neon",
            F::Dotprod => "dotprod",
        }
    }

    /// The name printed to people, e.g. `AVX-512 BF16`.
    pub fn display_name(self) -> &'static str {
        match self {
            F::Avx => "AVX",
            F::Avx2 => "AVX2",
            F::Fma => "FMA",
            F::F16c => "F16C",
            F::Avx512f => "AVX-512F",
            F::Avx512bw => "AVX-512 BW",
            F::Avx512dq => "AVX-512 DQ",
            F::Avx512vl => "AVX-512 VL",
            F::Avx512bf16 => "AVX-512 BF16",
            F::Avx512vnni => "AVX-512 VNNI",
            F::Avx512vbmi2 => "AVX-512 VBMI2",
            F::Avxvnni => "AVX-VNNI",
            F::Neon => "NEON",
            F::Dotprod => "NEON dot product",
        }
    }

    /// The features this one is built on (directly; [`with_implied`] follows them all).
    pub fn implies(self) -> &'static [IsaFeature] {
        match self {
            F::Avx | F::Neon => &[],
            F::Dotprod => &[F::Neon],
            F::Avx2 | F::Fma | F::F16c => &[F::Avx],
            F::Avxvnni => &[F::Avx2],
            F::Avx512f => &[F::Avx2],
            F::Avx512bw | F::Avx512dq | F::Avx512vl | F::Avx512bf16 | F::Avx512vnni | F::Avx512vbmi2 => {
                &[F::Avx512f]
            }
        }
    }

    /// The architecture whose cores have this extension.
    pub fn architecture(self) -> Architecture {
        match self {
            F::Neon | F::Dotprod => Architecture::Aarch64,
            _ => Architecture::X86_64,
        }
    }

    /// Whether the host CPU (and OS) supports the feature (`is_x86_feature_detected!`: CPUID and
    /// the OS's register-state support; `is_aarch64_feature_detected!` on ARM). Always false for a
    /// feature of another architecture than the host's.
    pub fn on_host(self) -> bool {
        detect(self)
    }
}

/// `features` and every feature they imply, in [`IsaFeature::ALL`] order.
pub fn with_implied(features: impl IntoIterator<Item = IsaFeature>) -> BTreeSet<IsaFeature> {
    let mut all = BTreeSet::new();
    let mut pending: Vec<IsaFeature> = features.into_iter().collect();
    while let Some(feature) = pending.pop() {
        if all.insert(feature) {
            pending.extend(feature.implies());
        }
    }
    all
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn detect(feature: IsaFeature) -> bool {
    use std::arch::is_x86_feature_detected;
    match feature {
        F::Avx => is_x86_feature_detected!("avx"),
        F::Avx2 => is_x86_feature_detected!("avx2"),
        F::Fma => is_x86_feature_detected!("fma"),
        F::F16c => is_x86_feature_detected!("f16c"),
        F::Avx512f => is_x86_feature_detected!("avx512f"),
        F::Avx512bw => is_x86_feature_detected!("avx512bw"),
        F::Avx512dq => is_x86_feature_detected!("avx512dq"),
        F::Avx512vl => is_x86_feature_detected!("avx512vl"),
        F::Avx512bf16 => is_x86_feature_detected!("avx512bf16"),
        F::Avx512vnni => is_x86_feature_detected!("avx512vnni"),
        F::Avx512vbmi2 => is_x86_feature_detected!("avx512vbmi2"),
        F::Avxvnni => is_x86_feature_detected!("avxvnni"),
        F::Neon | F::Dotprod => false,
    }
}

#[cfg(target_arch = "aarch64")]
fn detect(feature: IsaFeature) -> bool {
    use std::arch::is_aarch64_feature_detected;
    match feature {
        F::Neon => is_aarch64_feature_detected!("neon"),
        F::Dotprod => is_aarch64_feature_detected!("dotprod"),
        _ => false,
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
fn detect(_feature: IsaFeature) -> bool {
    false
}

impl fmt::Display for IsaFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A feature name that is not in [`IsaFeature::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ISA feature `{0}`; known: {known}", known = known_names())]
pub struct UnknownIsaFeature(pub String);

fn known_names() -> String {
    IsaFeature::ALL.map(IsaFeature::name).join(", ")
}

impl FromStr for IsaFeature {
    type Err = UnknownIsaFeature;

    /// Parses a feature name such as `avx512f` (case-insensitive).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        IsaFeature::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| UnknownIsaFeature(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serde_uses_them() {
        for feature in IsaFeature::ALL {
            assert_eq!(feature.name().parse::<IsaFeature>(), Ok(feature));
            assert_eq!(feature.name().to_uppercase().parse::<IsaFeature>(), Ok(feature));
            let json = serde_json::to_string(&feature).expect("serialises");
            assert_eq!(json, format!("\"{}\"", feature.name()));
            assert_eq!(serde_json::from_str::<IsaFeature>(&json).expect("reads back"), feature);
        }
        let error = "sse9".parse::<IsaFeature>().expect_err("unknown");
        assert!(error.to_string().starts_with("unknown ISA feature `sse9`; known: avx, avx2,"), "{error}");
    }

    #[test]
    fn all_is_in_declaration_order() {
        let mut sorted = IsaFeature::ALL;
        sorted.sort();
        assert_eq!(sorted, IsaFeature::ALL);
    }

    #[test]
    fn implications_point_to_older_features_and_close_transitively() {
        for feature in IsaFeature::ALL {
            assert!(feature.implies().iter().all(|older| *older < feature), "{feature}");
        }
        let bf16: Vec<IsaFeature> = with_implied([F::Avx512bf16]).into_iter().collect();
        assert_eq!(bf16, [F::Avx, F::Avx2, F::Avx512f, F::Avx512bf16]);
        let x86_avx2: Vec<IsaFeature> = with_implied([F::Avx2, F::Fma]).into_iter().collect();
        assert_eq!(x86_avx2, [F::Avx, F::Avx2, F::Fma]);
    }

    #[test]
    fn features_imply_only_features_of_their_architecture() {
        for feature in IsaFeature::ALL {
            assert!(
                with_implied([feature]).iter().all(|f| f.architecture() == feature.architecture()),
                "{feature}"
            );
        }
        assert_eq!(F::Neon.architecture(), Architecture::Aarch64);
        assert_eq!(with_implied([F::Dotprod]).into_iter().collect::<Vec<_>>(), [F::Neon, F::Dotprod]);
        assert_eq!(F::Avx2.architecture(), Architecture::X86_64);
    }

    #[test]
    fn the_host_has_what_its_features_imply() {
        for feature in IsaFeature::ALL.into_iter().filter(|f| f.on_host()) {
            for implied in with_implied([feature]) {
                assert!(implied.on_host(), "the host has {feature} but not {implied}");
            }
        }
    }
}
