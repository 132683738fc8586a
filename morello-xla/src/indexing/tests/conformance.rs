//! Maps of the opcodes added for XLA conformance, each checked against the reference (brute
//! force over the op's semantics), and the answers for what has no map: unknown, and XLA's
//! KNOWN EMPTY for a fusion operand that is never read.

use crate::hlo::HloModule;
use crate::indexing::{Completeness, output_to_input};

use super::{check_against_reference, out_to_in};

const MIN: &str =
    "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] minimum(a, b)\n}\n";

fn module(body: &str) -> HloModule {
    let text = format!("{MIN}ENTRY e {{\n{body}\n}}");
    text.parse().unwrap_or_else(|e| panic!("{text}\n{e}"))
}

/// Checks every instruction of the entry against the reference.
fn check_all(module: &HloModule) {
    for (index, instr) in module.entry().instructions.iter().enumerate() {
        if !instr.operands.is_empty() {
            check_against_reference(module, crate::hlo::InstrId(index));
        }
    }
}

#[test]
fn elementwise_with_scalar_operands() {
    let m = module(
        "a = f32[2,3] parameter(0)\n b = f32[2,3] parameter(1)\n p = pred[] parameter(2)\n k = f32[] parameter(3)\n \
         s = f32[2,3] select(p, a, b)\n c = f32[2,3] clamp(k, a, k)\n w = f32[2,3] power(s, c)\n \
         x = f32[2,3] atan2(w, a)\n n = f32[2,3] rsqrt(x)\n ROOT r = f32[2,3] round-nearest-even(n)",
    );
    check_all(&m);
    let select = m.entry().instruction_by_name("s").unwrap();
    assert_eq!(out_to_in(&m, select, 0)[0], ["(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]"],);
}

#[test]
fn map_is_elementwise() {
    let m = module(
        "a = f32[2,3] parameter(0)\n b = f32[2,3] parameter(1)\n ROOT mp = f32[2,3] map(a, b), dimensions={0,1}, to_apply=min",
    );
    check_all(&m);
}

#[test]
fn dynamic_slice_offsets_are_clamped_symbols() {
    let m = module(
        "a = f32[4,5] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n \
         ROOT ds = f32[2,1] dynamic-slice(a, i, j), dynamic_slice_sizes={2,1}",
    );
    check_all(&m);
    let ds = m.entry().root;
    // The window of size 1 in dimension 1 has d1 in [0, 0]: `d1 + s1` is `s1`.
    assert_eq!(
        out_to_in(&m, ds, 0),
        [
            vec![
                "(d0, d1)[s0, s1] -> (d0 + s0, s1), domain: d0 in [0, 1], d1 in [0, 0], s0 in [0, 2], s1 in [0, 4]"
            ],
            vec!["(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 0]"],
            vec!["(d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 0]"],
        ]
    );
}

#[test]
fn dynamic_update_slice() {
    let m = module(
        "a = f32[4,3] parameter(0)\n u = f32[2,3] parameter(1)\n i = s32[] parameter(2)\n \
         ROOT dus = f32[4,3] dynamic-update-slice(a, u, i, i)",
    );
    check_all(&m);
}

#[test]
fn an_op_without_a_map_is_unknown_not_an_error() {
    let text = format!(
        "{MIN}fused {{\n  p0 = f32[4] parameter(0)\n  p1 = s32[2,1] parameter(1)\n  p2 = f32[4] parameter(2)\n  \
         g = f32[2] custom-call(p0, p1), custom_call_target=\"foo\"\n  \
         n = f32[2] slice(p2), slice={{[0:2]}}\n  ROOT s = f32[2] add(g, n)\n}}\n\
         ENTRY e {{\n  a = f32[4] parameter(0)\n  b = s32[2,1] parameter(1)\n  c = f32[4] parameter(2)\n  \
         ROOT f = f32[2] fusion(a, b, c), kind=kLoop, calls=fused\n}}"
    );
    let m: HloModule = text.parse().unwrap();
    let maps = output_to_input(&m, m.entry_id(), m.entry().root, 0).unwrap();
    assert_eq!(maps.len(), 3);
    assert_eq!(maps[0].completeness, Completeness::Unknown);
    assert_eq!(maps[1].completeness, Completeness::Unknown);
    // The slice's operand is known exactly, whatever happens in the custom call.
    assert_eq!(maps[2].completeness, Completeness::Complete);
    assert_eq!(maps[2].maps[0].to_string(), "(d0) -> (d0), domain: d0 in [0, 1]");
}

#[test]
fn a_fusion_operand_never_read_is_known_empty() {
    let text = "fused {\n  p0 = f32[4] parameter(0)\n  p1 = f32[4] parameter(1)\n  \
                c = f32[8] concatenate(p0, p1), dimensions={0}\n  ROOT s = f32[2] slice(c), slice={[1:3]}\n}\n\
                ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  \
                ROOT f = f32[2] fusion(a, b), kind=kLoop, calls=fused\n}";
    let m: HloModule = text.parse().unwrap();
    let maps = output_to_input(&m, m.entry_id(), m.entry().root, 0).unwrap();
    assert_eq!(maps[0].maps[0].to_string(), "(d0) -> (d0 + 1), domain: d0 in [0, 1]");
    assert!(maps[1].maps.is_empty());
    assert_eq!(maps[1].completeness, Completeness::Complete);
    check_against_reference(&m, m.entry().root);
}

#[test]
fn convolution_with_padding_strides_dilation_and_groups() {
    for body in [
        // The conv block of the JAX fixture: NHWC, HWIO, SAME padding.
        "x = f32[1,4,4,2] parameter(0)\n w = f32[3,3,2,2] parameter(1)\n \
         ROOT c = f32[1,4,4,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
        // Strides, lhs and rhs dilation, uneven padding, NCHW / OIHW.
        "x = f32[2,1,5,4] parameter(0)\n w = f32[3,1,2,2] parameter(1)\n \
         ROOT c = f32[2,3,5,3] convolution(x, w), window={size=2x2 stride=2x1 pad=1_0x0_1 lhs_dilate=2x1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01",
        // Feature groups: 4 input features in 2 groups, 4 output features.
        "x = f32[1,3,4] parameter(0)\n w = f32[2,2,4] parameter(1)\n \
         ROOT c = f32[1,2,4] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2",
        // Batch groups: a batch of 4 in 2 groups, 2 output features.
        "x = f32[4,3,1] parameter(0)\n w = f32[2,1,2] parameter(1)\n \
         ROOT c = f32[2,2,2] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2",
        // No spatial dimension.
        "x = f32[2,3] parameter(0)\n w = f32[3,4] parameter(1)\n ROOT c = f32[2,4] convolution(x, w), dim_labels=bf_io->bf",
    ] {
        let m = module(body);
        let root = m.entry().root;
        let maps = output_to_input(&m, m.entry_id(), root, 0).unwrap();
        assert!(maps.iter().all(|o| o.completeness == Completeness::Complete), "{body}");
        // Output to input against the reference; XLA has no input-to-output map.
        let expected = super::reference::output_to_input_relations(&m, m.entry(), root, 0);
        for o in &maps {
            let want = expected.get(&(o.operand, o.operand_output)).cloned().unwrap_or_default();
            assert_eq!(super::union(&o.maps), want, "{body}: operand {}", o.operand);
        }
        let back = crate::indexing::input_to_output(&m, m.entry_id(), root, 0).unwrap();
        assert!(back.iter().all(|o| o.completeness == Completeness::Unknown));
    }
    let m = module(
        "x = f32[1,4,4,2] parameter(0)\n w = f32[3,3,2,2] parameter(1)\n \
         ROOT c = f32[1,4,4,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
    );
    assert_eq!(
        out_to_in(&m, m.entry().root, 0)[1],
        [
            "(d0, d1, d2, d3)[s0, s1, s2] -> (s0, s1, s2, d3), domain: d0 in [0, 0], d1 in [0, 3], d2 in [0, 3], d3 in [0, 1], s0 in [0, 2], s1 in [0, 2], s2 in [0, 1]"
        ]
    );
}

/// Output-to-input maps against the reference, for ops without input-to-output maps (which
/// must then say unknown, as XLA's).
fn check_out_to_in_only(m: &HloModule, body: &str) {
    let root = m.entry().root;
    let maps = output_to_input(m, m.entry_id(), root, 0).unwrap();
    assert!(maps.iter().all(|o| o.completeness == Completeness::Complete), "{body}");
    let expected = super::reference::output_to_input_relations(m, m.entry(), root, 0);
    for o in &maps {
        let want = expected.get(&(o.operand, o.operand_output)).cloned().unwrap_or_default();
        assert_eq!(super::union(&o.maps), want, "{body}: operand {}", o.operand);
    }
    for key in expected.keys() {
        assert!(maps.iter().any(|o| (o.operand, o.operand_output) == *key), "{body}: no maps to {key:?}");
    }
    for operand in 0..m.entry().instructions[root.0].operands.len() {
        let back = crate::indexing::input_to_output(m, m.entry_id(), root, operand).unwrap();
        assert!(back.iter().all(|o| o.completeness == Completeness::Unknown), "{body}");
    }
}

#[test]
fn gather_in_every_form() {
    for body in [
        // XLA's simplified form: indices [N, K], index_vector_dim 1, nothing collapsed.
        "x = f32[5,6,4] parameter(0)\n i = s32[3,2] parameter(1)\n \
         ROOT g = f32[3,2,3,4] gather(x, i), offset_dims={1,2,3}, collapsed_slice_dims={}, \
         start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3,4}",
        // An embedding lookup: one row per index, the row dimension collapsed, implicit vector.
        "x = f32[7,3] parameter(0)\n i = s32[4] parameter(1)\n \
         ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
         start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
        // The index vector in dimension 0, the start map reversed, offset dims around the batch.
        "x = f32[4,5] parameter(0)\n i = s32[2,3] parameter(1)\n \
         ROOT g = f32[2,3,2] gather(x, i), offset_dims={0,2}, collapsed_slice_dims={}, \
         start_index_map={1,0}, index_vector_dim=0, slice_sizes={2,2}",
        // Batching dimensions: operand dim 0 follows start_indices dim 0.
        "x = f32[3,5,4] parameter(0)\n i = s32[3,2,1] parameter(1)\n \
         ROOT g = f32[3,2,2,4] gather(x, i), offset_dims={2,3}, collapsed_slice_dims={}, \
         start_index_map={1}, index_vector_dim=2, slice_sizes={1,2,4}, operand_batching_dims={0}, \
         start_indices_batching_dims={0}",
        // Iota start indices inside the clamp's range are folded in...
        "x = f32[6,3] parameter(0)\n i = s32[4,1] iota(), iota_dimension=0\n \
         ROOT g = f32[4,1,3] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, \
         start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
        // ... and where the clamp moves them, the map splits (XLA's does not clamp).
        "x = f32[3,2] parameter(0)\n i = s32[5,1] iota(), iota_dimension=0\n \
         ROOT g = f32[5,1,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, \
         start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
        // An iota along the index vector is the component number.
        "x = f32[3,4] parameter(0)\n i = s32[2,2] iota(), iota_dimension=1\n \
         ROOT g = f32[2,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, \
         start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}",
        // A scalar constant start index inside the range is folded; one outside is not.
        "x = f32[5,3] parameter(0)\n i = s32[] constant(2)\n \
         ROOT g = f32[2,3] gather(x, i), offset_dims={0,1}, collapsed_slice_dims={}, \
         start_index_map={0}, index_vector_dim=0, slice_sizes={2,3}",
        "x = f32[5,3] parameter(0)\n i = s32[] constant(7)\n \
         ROOT g = f32[2,3] gather(x, i), offset_dims={0,1}, collapsed_slice_dims={}, \
         start_index_map={0}, index_vector_dim=0, slice_sizes={2,3}",
    ] {
        check_out_to_in_only(&module(body), body);
    }
    // On XLA's simplified form the maps are XLA's (its GatherOp test, scaled down).
    let m = module(
        "x = f32[5,6,4] parameter(0)\n i = s32[3,2] parameter(1)\n \
         ROOT g = f32[3,2,3,4] gather(x, i), offset_dims={1,2,3}, collapsed_slice_dims={}, \
         start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3,4}",
    );
    assert_eq!(
        out_to_in(&m, m.entry().root, 0),
        [
            vec![
                "(d0, d1, d2, d3)[s0, s1] -> (d1 + s0, d2 + s1, d3), domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 2], d3 in [0, 3], s0 in [0, 3], s1 in [0, 3]"
            ],
            vec![
                "(d0, d1, d2, d3)[s0] -> (d0, s0), domain: d0 in [0, 2], d1 in [0, 1], d2 in [0, 2], d3 in [0, 3], s0 in [0, 1]"
            ],
        ]
    );
}

#[test]
fn gather_attributes_are_checked() {
    for (body, message) in [
        (
            "x = f32[5,3] parameter(0)\n i = s32[4,2] parameter(1)\n \
             ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
             start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
            "start_index_map",
        ),
        (
            "x = f32[5,3] parameter(0)\n i = s32[4] parameter(1)\n \
             ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
             start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}",
            "dimension 0",
        ),
        (
            "x = f32[5,3] parameter(0)\n i = s32[4] parameter(1)\n \
             ROOT g = f32[4,2] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
             start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
            "result",
        ),
        (
            "x = f32[5,3] parameter(0)\n i = s32[4] parameter(1)\n \
             ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, \
             start_index_map={0}, index_vector_dim=3, slice_sizes={1,3}",
            "index_vector_dim",
        ),
    ] {
        let text = format!("{MIN}ENTRY e {{\n{body}\n}}");
        let error = text.parse::<HloModule>().expect_err(body).to_string();
        assert!(error.contains(message), "{body}: {error}");
    }
}

#[test]
fn dynamic_slice_folds_constant_offsets_inside_the_clamp() {
    let m = module(
        "a = f32[6,5] parameter(0)\n i = s32[] constant(3)\n j = s32[] constant(9)\n \
         ROOT ds = f32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}",
    );
    check_all(&m);
    // 3 is inside [0, 4] and folds; 9 is outside [0, 3] and stays a symbol, as in XLA.
    assert_eq!(
        out_to_in(&m, m.entry().root, 0)[0],
        ["(d0, d1)[s0] -> (d0 + 3, d1 + s0), domain: d0 in [0, 1], d1 in [0, 1], s0 in [0, 3]"]
    );
}
