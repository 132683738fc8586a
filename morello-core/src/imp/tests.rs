//! Hand-built implementation trees: executed by the interpreter against their spec, and their
//! costs and peaks checked against values computed by hand from `docs/cost-model.md`.

use super::*;
use crate::interp::{Buffer, InterpError, Interpreter, Value};
use crate::spec::{FillValue, LogicalSpec};
use crate::target::LevelId;

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

fn spec(text: &str, t: &Target) -> CanonicalSpec {
    LogicalSpec::parse(text, t).unwrap().canonicalize(t).unwrap()
}

fn level(t: &Target, name: &str) -> LevelId {
    t.level_id(name).unwrap()
}

/// Deterministic small-integer inputs (exact in f32), garbage in the output.
fn buffers(s: &CanonicalSpec) -> Vec<Buffer> {
    s.operands
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let n = o.shape.volume() as usize;
            let values: Vec<Value> = (0..n)
                .map(|j| {
                    let v = ((j * 7 + i * 3) % 9) as i64 - 4;
                    if o.dtype.is_float() {
                        Value::Float(v as f32)
                    } else {
                        Value::Int(crate::interp::wrap(v, o.dtype))
                    }
                })
                .collect();
            Buffer::from_logical(o, &values).unwrap()
        })
        .collect()
}

/// Runs `imp` and its spec on the same inputs and compares every operand afterwards.
fn check_against_spec(imp: &Impl, t: &Target) {
    let interp = Interpreter::new(t);
    let mut by_impl = buffers(&imp.spec);
    let mut by_spec = by_impl.clone();
    interp.execute_impl(imp, &mut by_impl).unwrap();
    interp.execute_spec(&imp.spec, &mut by_spec).unwrap();
    assert_eq!(by_impl, by_spec, "{}", imp.render(t));
}

#[test]
fn zero_then_accumulate_with_scalar_kernels() {
    let t = avx2();
    let s = spec("Matmul(1x2x2x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)", &t);
    let zero = CanonicalSpec::fill(FillValue::Zero, s.output(), s.serial_only, &t).unwrap();
    let accum = s.as_accum(&t).unwrap().unwrap();
    let unit = accum.tile(&[1, 1, 1, 1], false, &t).unwrap();
    let body = Impl::kernel(unit.clone(), KernelKind::MultAdd, &t);
    let looped = Impl::looped(accum, vec![1, 1, 1, 1], Parallelism::Serial, body, vec![], &t);
    let imp = Impl::block(
        s,
        vec![
            Stage { origins: None, operands: vec![2], body: Impl::kernel(zero, KernelKind::MemsetZero, &t) },
            Stage { origins: None, operands: vec![0, 1, 2], body: looped },
        ],
        &t,
    );
    assert!(KernelKind::MultAdd.applies(&unit, &t));
    // A one-line tensor in GL costs 20 * (1 line + 2 lines of run overhead) = 60.
    // MemsetZero: 1 + 60. MultAdd: 1 + 3 * 60. Loop: 8 iterations.
    assert_eq!(imp.cost, 61 + 8 * 181);
    assert_eq!(imp.peaks, MemVec::ZERO);
    assert_eq!(imp.depth(), 3);
    check_against_spec(&imp, &t);
}

/// `Matmul(1x1x2x8)` in f32: the output row in one AVX2 register, zeroed, then for each k a
/// broadcast of `lhs[k]` times the row `rhs[k, :]` loaded into a register.
fn register_tiled(t: &Target) -> Impl {
    let (l1, vrf) = (level(t, "L1"), level(t, "VRF"));
    let s = spec("Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)", t);
    let cache = |o: &TensorSpec| TensorSpec { level: l1, ..o.clone() };
    let register = |o: &TensorSpec| TensorSpec {
        level: vrf,
        layout: o.layout.clone(),
        contiguous_dims: o.layout.len() as u8,
        vector_size: Some(8),
        ..o.clone()
    };
    // Output: GL -> L1 (cache view) -> VRF (buffer, stored back).
    let s_l1 = s.with_operand(2, cache(s.output()), t).unwrap();
    let out_vrf = register(&s_l1.operands[2]);
    let s_vrf = s_l1.with_operand(2, out_vrf.clone(), t).unwrap();
    let store = CanonicalSpec::move_between(&s_vrf.operands[2], &s_l1.operands[2], false, t).unwrap();
    // Zero then accumulate, k split by 1.
    let zero = CanonicalSpec::fill(FillValue::Zero, &s_vrf.operands[2], true, t).unwrap();
    let accum = s_vrf.as_accum(t).unwrap().unwrap();
    let step = accum.tile(&[1, 1, 1, 8], false, t).unwrap();
    let step_lhs = step.with_operand(0, cache(&step.operands[0]), t).unwrap();
    let step_rhs = step_lhs.with_operand(1, cache(&step_lhs.operands[1]), t).unwrap();
    let rhs_vrf = register(&step_rhs.operands[1]);
    let load = CanonicalSpec::move_between(&step_rhs.operands[1], &rhs_vrf, true, t).unwrap();
    let fma = step_rhs.with_operand(1, rhs_vrf.clone(), t).unwrap();
    assert!(KernelKind::BroadcastVecMultAdd.applies(&fma, t), "{}", fma.display(t));

    let fma_impl = Impl::kernel(fma, KernelKind::BroadcastVecMultAdd, t);
    let load_rhs = Impl::alloc(
        step_rhs.clone(),
        AllocParts {
            operand: 1,
            kind: AllocKind::Buffer,
            destination: rhs_vrf,
            prologue: Some(Impl::kernel(load, KernelKind::VectorAssign, t)),
            body: fma_impl,
            epilogue: None,
        },
        t,
    );
    let cache_rhs = cache_view(&step_lhs, 1, &step_rhs, load_rhs, t);
    let cache_lhs = cache_view(&step, 0, &step_lhs, cache_rhs, t);
    let k_loop = Impl::looped(accum, vec![1, 1, 1, 8], Parallelism::Serial, cache_lhs, vec![], t);
    let block = Impl::block(
        s_vrf.clone(),
        vec![
            Stage { origins: None, operands: vec![2], body: Impl::kernel(zero, KernelKind::VectorFill, t) },
            Stage { origins: None, operands: vec![0, 1, 2], body: k_loop },
        ],
        t,
    );
    let in_registers = Impl::alloc(
        s_l1.clone(),
        AllocParts {
            operand: 2,
            kind: AllocKind::Buffer,
            destination: out_vrf,
            prologue: None,
            body: block,
            epilogue: Some(Impl::kernel(store, KernelKind::VectorAssign, t)),
        },
        t,
    );
    cache_view(&s, 2, &s_l1, in_registers, t)
}

/// Operand `operand` of `outer` seen in a cache level without a copy, as `inner` (its body's
/// spec, which differs from `outer` only there) sees it: a cache view around `body`.
fn cache_view(outer: &CanonicalSpec, operand: usize, inner: &CanonicalSpec, body: Impl, t: &Target) -> Impl {
    let destination = inner.operands[operand].clone();
    let parts =
        AllocParts { operand, kind: AllocKind::CacheView, destination, prologue: None, body, epilogue: None };
    Impl::alloc(outer.clone(), parts, t)
}

#[test]
fn register_tiled_broadcast_fma() {
    let t = avx2();
    let imp = register_tiled(&t);
    // By hand (GL 20 and L1 2 per line, GL 2 lines of overhead per run; every tensor here is one
    // line, so one run, and costs 20 * (1 + 2) = 60 in GL):
    //   BroadcastVecMultAdd 0 + 2*1 vector + lhs in L1 (2)                 =   4
    //   rhs -> VRF: 2 (L1) + 0 (VRF) + load (1 vector + 2) + body 4        =   9
    //   rhs -> L1 cache: 60 + 2 + 9 = 71;  lhs -> L1 cache: 60 + 2 + 71    = 133
    //   k loop: 2 * 133 = 266
    //   block: zero (1) + 266 + the register block's stall (docs/cost-model.md, "Register
    //   blocks": 2 steps of 4 loads at 2 against 2 multiply-adds at 2, 8 - 4)  = 271
    //   out -> VRF: 2 + 0 + 271 + store (1 + 2)                            = 276
    //   out -> L1 cache: 60 + 2 + 276                                      = 338
    assert_eq!(imp.cost, 338, "{}", imp.render(&t));
    // VRF: out 1 + rhs 1 + the broadcast register 1; L1: three one-line views, 192 bytes
    // (three quarters of 256, so counted as it is).
    assert_eq!(imp.peaks.get(level(&t, "VRF")), 3);
    assert_eq!(imp.peaks.get(level(&t, "L1")), 192);
    assert_eq!(
        imp.kernels(),
        [KernelKind::VectorFill, KernelKind::VectorAssign, KernelKind::BroadcastVecMultAdd]
    );
    check_against_spec(&imp, &t);
    let rendered = imp.render(&t);
    assert!(rendered.starts_with("cost  GL  L2   L1  VRF  RF  implementation\n"), "{rendered}");
    assert!(rendered.contains("kernel BroadcastVecMultAdd  MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8, serial)"), "{rendered}");
}

#[test]
fn impl_trees_serialise_with_their_specs_costs_and_kernels() {
    let t = avx2();
    let imp = register_tiled(&t);
    let json: serde_json::Value = serde_json::to_value(&imp).unwrap();
    assert_eq!(json["cost"], imp.cost);
    // The spec serialises as its logical spec; reading that back goes through canonicalisation.
    let logical: LogicalSpec = serde_json::from_value(json["spec"].clone()).unwrap();
    assert_eq!(logical.canonicalize(&t).unwrap(), imp.spec);
    let text = json.to_string();
    for kernel in imp.kernels() {
        assert!(text.contains(&format!("\"{kernel}\"")), "{kernel} in {text}");
    }
}

#[test]
fn interpreter_catches_a_false_contiguity_claim() {
    let t = avx2();
    let s = spec("FillZero(8x8, f32 GL row-major)", &t);
    // A tile of 8x2 is not one contiguous run, but this body claims it is.
    let lie = spec("FillZero(8x2, f32 GL row-major)", &t);
    let truth = s.tile(&[8, 2], false, &t).unwrap();
    assert_eq!(truth.display(&t).to_string(), "FillZero(8x2, f32 GL row-major c1)");
    let imp = Impl::looped(
        s,
        vec![8, 2],
        Parallelism::Serial,
        Impl::kernel(lie, KernelKind::MemsetZero, &t),
        vec![],
        &t,
    );
    let mut operands = buffers(&imp.spec);
    let err = Interpreter::new(&t).execute_impl(&imp, &mut operands).unwrap_err();
    assert!(matches!(err, InterpError::LayoutMismatch { .. }), "{err}");
    assert!(
        err.to_string().contains("claims operand 0 is `f32 GL row-major`, but the data is `[0, 1] c1`"),
        "{err}"
    );
}

#[test]
fn boundary_regions_cover_the_remainder() {
    let t = avx2();
    // 5 = 4 + 1: one full tile of 4 and a boundary region of 1 at origin 4.
    let s = spec("Move(5x3, u32 GL row-major, u32 GL col-major)", &t);
    let full = s.tile(&[4, 3], false, &t).unwrap();
    let rest = s.tile_at(&[1, 3], &[4, 0], false, &t).unwrap();
    let scalar = |x: &CanonicalSpec| {
        let unit = x.tile(&[1, 1], false, &t).unwrap();
        let shape = x.shape.dims().to_vec();
        Impl::looped(
            x.clone(),
            vec![1, 1],
            Parallelism::Serial,
            Impl::kernel(unit, KernelKind::ValueAssign, &t),
            vec![],
            &t,
        )
        .with_check(&shape)
    };
    let imp = Impl::looped(
        s,
        vec![4, 3],
        Parallelism::Serial,
        scalar(&full),
        vec![Boundary { origin: vec![4, 0], body: scalar(&rest) }],
        &t,
    );
    check_against_spec(&imp, &t);
}

impl Impl {
    /// Test helper: asserts the node's spec has the given iteration shape and returns it.
    fn with_check(self, shape: &[u32]) -> Impl {
        assert_eq!(self.spec.shape.dims(), shape);
        self
    }
}

#[test]
fn boundary_regions_are_every_mix_of_span_and_remainder() {
    assert_eq!(Boundary::regions(&[8, 4], &[4, 4]), vec![]);
    assert_eq!(Boundary::regions(&[5, 3], &[4, 3]), vec![(vec![1, 3], vec![4, 0])]);
    assert_eq!(
        Boundary::regions(&[5, 7], &[4, 2]),
        vec![(vec![1, 6], vec![4, 0]), (vec![4, 1], vec![0, 6]), (vec![1, 1], vec![4, 6])]
    );
}

#[test]
fn vector_loads_from_l2_cost_an_l1_line_but_views_there_do_not() {
    let t = avx2();
    let row = |level: &str| spec(&format!("Move(1x64, f32 {level} row-major, f32 VRF row-major v8)"), &t);
    // A 64-float row is 4 lines; L1 and L2 vector loads cost 2 per line, a line of L2 viewed in L1 6 + 2.
    let (from_l2, from_l1) = (row("L2"), row("L1"));
    let load = |s: &CanonicalSpec| KernelKind::VectorAssign.cost(s, &t);
    assert_eq!(load(&from_l2), load(&from_l1));
    assert_eq!(load(&from_l1), 8 + 4 * 2);
    let l2_row = &from_l2.operands[0];
    let in_l1 = TensorSpec { level: level(&t, "L1"), ..l2_row.clone() };
    assert_eq!(alloc_cost(l2_row, &from_l2.operands[1], false, &t), 4 * 2);
    assert_eq!(alloc_cost(l2_row, &in_l1, false, &t), 4 * 6 + 4 * 2);
    // An accumulator read and written back waits for its lines from L2, 7 each (L2's fill), into
    // registers or into an L1 view; from L1 (no fill) it does not.
    assert_eq!(alloc_cost(l2_row, &from_l2.operands[1], true, &t), 4 * 2 + 4 * 7);
    assert_eq!(alloc_cost(l2_row, &in_l1, true, &t), 4 * 6 + 4 * 7 + 4 * 2);
    assert_eq!(alloc_cost(&in_l1, &from_l1.operands[1], true, &t), 4 * 2);
}
