//! Tests over the whole catalogue, and the applicability of kernels whose tests predate their
//! files' own: a kernel's specs it takes and near misses it must refuse go in its definition
//! file's `#[cfg(test)] mod tests`, with [`check_avx2`] from here.

use super::*;

fn check(target: &Target, kernel: KernelKind, yes: &[&str], no: &[&str]) {
    for (texts, expected) in [(yes, true), (no, false)] {
        for text in texts {
            let spec = LogicalSpec::parse(text, target).unwrap().canonicalize(target).unwrap();
            assert_eq!(kernel.applies(&spec, target), expected, "{kernel} on {text}");
        }
    }
}

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

/// [`check`] on a built-in target (a kernel file's own applicability test).
pub(super) fn check_on(target: &str, kernel: KernelKind, yes: &[&str], no: &[&str]) {
    check(&Target::builtin(target, 2).unwrap(), kernel, yes, no);
}

/// [`check`] on the built-in `x86-avx2` target (a kernel file's own applicability test).
pub(super) fn check_avx2(kernel: KernelKind, yes: &[&str], no: &[&str]) {
    check(&avx2(), kernel, yes, no);
}

#[test]
fn broadcast_vec_mult_add() {
    check(
        &avx2(),
        KernelKind::BroadcastVecMultAdd,
        &[
            "MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)",
            "MatmulAccum(1x1x1x16, f32 RF row-major, f32 VRF row-major v8, f32 VRF row-major v8)",
            "MatmulAccum(1x8x1x1, f32 VRF row-major v4, f32 L1 row-major, f32 VRF row-major v4)",
            "MatmulAccum(1x1x1x8, i32 L1 row-major, i32 VRF row-major v8, i32 VRF row-major v8)",
        ],
        &[
            "MatmulAccum(1x1x1x8, f32 L1 row-major, f32 L1 row-major, f32 VRF row-major v8)",
            "MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v4)",
            "MatmulAccum(1x2x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)",
            "MatmulAccum(1x1x2x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8)",
        ],
    );
}

#[test]
fn broadcast_vec_mult_add_bf16() {
    let avx512 = Target::builtin("x86-avx512", 2).unwrap();
    let yes16 = [
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)",
        "MatmulAccum(1x1x1x64, bf16 RF row-major, bf16 L1 row-major, f32 VRF row-major v16)",
        // Vector loads may stream from L2 on the built-in x86 targets.
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L2 row-major, f32 VRF row-major v16)",
    ];
    let no = [
        // rhs must be where vector loads come from (L1 or L2), not main memory.
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 GL row-major, f32 VRF row-major v16)",
        // Not a row of rhs: a column, or rows of k.
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major c0, f32 VRF row-major v16)",
        "MatmulAccum(1x1x2x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)",
        "MatmulAccum(1x2x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)",
        // Out of index order, 4-lane vectors, an output not in registers, other dtypes.
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 [0, 1, 2 oe(16)], f32 VRF row-major v16)",
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v4)",
        "MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 L1 row-major)",
        "MatmulAccum(1x1x1x16, f32 L1 row-major, f32 L1 row-major, f32 VRF row-major v16)",
        "Matmul(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v16)",
    ];
    check(&avx512, KernelKind::BroadcastVecMultAddBf16, &yes16, &no);
    let yes8 = ["MatmulAccum(1x1x1x16, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v8)"];
    check(&avx2(), KernelKind::BroadcastVecMultAddBf16, &yes8, &[]);
}

#[test]
fn fills() {
    let t = avx2();
    check(
        &t,
        KernelKind::VectorFill,
        &["FillZero(4x8, f32 VRF row-major v8)", "FillNegInf(8, f32 VRF row-major v4)"],
        &["FillZero(4x8, f32 L1 row-major)"],
    );
    check(
        &t,
        KernelKind::MemsetZero,
        &["FillZero(4x8, f32 GL row-major)", "FillZero(4x8, u32 L1 col-major)"],
        &[
            "FillZero(4x8, f32 GL row-major c1)",
            "FillNegInf(4x8, f32 GL row-major)",
            "FillZero(8, f32 VRF row-major v8)",
        ],
    );
    check(
        &t,
        KernelKind::ValueFill,
        &["FillMin(1, i32 RF row-major)", "FillZero(1x1, f32 GL row-major)"],
        &["FillZero(2, f32 RF row-major)"],
    );
    check(
        &t,
        KernelKind::ValueAssign,
        &["Move(1, f32 L1 row-major, f32 RF row-major)", "Move(1x1, bf16 GL row-major, f32 GL row-major)"],
        &["Move(2, f32 L1 row-major, f32 RF row-major)"],
    );
}

#[test]
fn dot_products() {
    let t = avx2();
    check(
        &t,
        KernelKind::DotProductLoop,
        &["MatmulAccum(1x1x16x1, f32 L1 row-major, f32 L1 row-major, f32 RF row-major)"],
        &[
            "MatmulAccum(1x1x12x1, f32 L1 row-major, f32 L1 row-major, f32 RF row-major)",
            "MatmulAccum(1x1x16x1, f32 L1 row-major, f32 L1 row-major c0, f32 RF row-major)",
            "MatmulAccum(1x1x16x1, u32 L1 row-major, u32 L1 row-major, u32 RF row-major)",
            // Contiguous, but the odd-even strip puts the elements out of k order.
            "MatmulAccum(1x1x16x1, f32 L1 [0, 1, 2 oe(16)], f32 L1 row-major, f32 RF row-major)",
        ],
    );
    let bf16 = "MatmulAccum(1x1x64x1, bf16 L1 row-major, bf16 L1 row-major, f32 RF row-major)";
    check(&Target::builtin("x86-avx512", 2).unwrap(), KernelKind::DotProductBf16, &[bf16], &[]);
    check(&t, KernelKind::DotProductBf16, &[], &[bf16]);
}

#[test]
fn names_round_trip() {
    for k in KernelKind::ALL {
        assert_eq!(k.name().parse::<KernelKind>(), Ok(k));
    }
}

#[test]
fn dot_products_refuse_rank_4_moves_and_fills() {
    let t = Target::builtin("x86-avx512", 2).unwrap();
    for text in ["Move(1x1x16x1, f32 GL row-major, f32 GL col-major)", "FillZero(1x1x64x1, f32 GL row-major)"]
    {
        let spec = LogicalSpec::parse(text, &t).unwrap().canonicalize(&t).unwrap();
        assert!(!KernelKind::DotProductLoop.applies(&spec, &t), "{text}");
        assert!(!KernelKind::DotProductBf16.applies(&spec, &t), "{text}");
    }
}

/// Every kernel file's doc says what it computes and its cost formula (`build.rs` requires both;
/// `morello kernels` prints them), each on one line.
#[test]
fn every_kernel_has_a_one_line_summary() {
    for k in KernelKind::ALL {
        let (summary, cost) = (k.summary(), k.cost_formula());
        assert!(summary.len() > 10 && summary.ends_with('.') && !summary.contains('\n'), "{k}: `{summary}`");
        assert!(cost.contains("fixed") || cost.contains("per_unit"), "{k}: `{cost}`");
        assert!(!cost.contains('\n') && !cost.contains("  "), "{k}: `{cost}`");
    }
}

/// Every kernel of the built-in targets names calibration specs, with distinct labels, that parse
/// and that it applies to: a kernel without a calibration case fails here.
#[test]
fn every_kernel_names_calibration_specs_it_applies_to() {
    let mut calibrated = std::collections::BTreeSet::new();
    for name in ["x86-avx2", "x86-avx2-vnni", "x86-avx512", "arm-neon"] {
        let target = Target::builtin(name, 2).unwrap();
        let sites = CalibrationSites::of(&target).unwrap();
        assert_eq!((sites.l1.as_str(), sites.vrf.as_str(), sites.rf.as_deref()), ("L1", "VRF", Some("RF")));
        for &k in target.kernels() {
            let cases = k.calibration(&sites);
            assert!(!cases.is_empty(), "{name}: {k} names no calibration spec");
            let labels: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.label.as_str()).collect();
            assert_eq!(labels.len(), cases.len(), "{name}: {k} repeats a calibration label");
            for case in &cases {
                let spec = LogicalSpec::parse(&case.spec, &target).unwrap().canonicalize(&target).unwrap();
                assert!(k.applies(&spec, &target), "{name}: {k} does not apply to its case {}", case.spec);
            }
            calibrated.insert(k);
        }
    }
    assert_eq!(calibrated.len(), KernelKind::ALL.len(), "a kernel is in no built-in target");
}

/// The variants are numbered by their files' ordinals and `ALL` is in that order (`build.rs`
/// generates the list), so stored tables, which refer to kernels by number, read back the same.
#[test]
fn the_catalogue_is_in_ordinal_order() {
    for (i, kind) in KernelKind::ALL.into_iter().enumerate() {
        assert_eq!(kind as usize, i, "{kind}");
    }
    assert_eq!(KernelKind::ALL[0], KernelKind::MultAdd);
}
