//! Every op family the loops emit, compiled and verified against the reference evaluator: each
//! module below exercises one or a few ops, in several element types and layouts.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use morello_codegen::{Warnings, test_support};
use morello_compile::{CompileOptions, VerifyModuleOptions, compile, verify_module};
use morello_core::target::Target;
use morello_search::Search;
use morello_xla::hlo::HloModule;

const REDUCERS: &str = "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n\
    addi { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b) }\n\
    max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b) }\n\
    mul { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] multiply(a, b) }\n\
    argmax {\n a = f32[] parameter(0)\n i = s32[] parameter(1)\n b = f32[] parameter(2)\n j = s32[] parameter(3)\n \
    gt = pred[] compare(a, b), direction=GT\n eq = pred[] compare(a, b), direction=EQ\n lt = pred[] compare(i, j), direction=LT\n \
    k = pred[] and(eq, lt)\n keep = pred[] or(gt, k)\n v = f32[] select(keep, a, b)\n w = s32[] select(keep, i, j)\n \
    ROOT t = (f32[], s32[]) tuple(v, w)\n}\n\
    sq { x = f32[] parameter(0)\n y = f32[] parameter(1)\n d = f32[] subtract(x, y)\n ROOT m = f32[] multiply(d, d) }\n";

fn check(name: &str, body: &str) {
    let Some(compiler) = test_support::compiler() else { return };
    let text = format!("{REDUCERS}{body}");
    let module: HloModule = text.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
    let target = Target::builtin("x86-avx2", 1).unwrap();
    let search = Search::new(&target);
    let compiled = compile(&module, &target, &search, &CompileOptions { name: "m".into() })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for seed in [1, 2] {
        let options =
            VerifyModuleOptions { seed, warnings: Warnings::Deny, ..VerifyModuleOptions::default() };
        let outcome = verify_module(&module, &compiled, &compiler, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", compiled.source));
        assert!(outcome.verified, "{name} (seed {seed}): {}\n{}", outcome.mismatch.unwrap(), compiled.source);
        assert_eq!(outcome.unbounded, 0, "{name}: every element is compared");
    }
}

fn host_runs_avx2() -> bool {
    if morello_codegen::host_features().contains(&morello_core::target::IsaFeature::Avx2) {
        return true;
    }
    println!("skipped: this host does not run AVX2");
    false
}

#[test]
fn elementwise_ops_in_every_type() {
    if !host_runs_avx2() {
        return;
    }
    check(
        "floats",
        "ENTRY e {\n a = f32[3,5] parameter(0)\n b = f32[3,5] parameter(1)\n \
         s = f32[3,5] add(a, b)\n d = f32[3,5] subtract(s, b)\n m = f32[3,5] multiply(d, a)\n q = f32[3,5] divide(m, b)\n \
         x = f32[3,5] maximum(q, a)\n n = f32[3,5] minimum(x, b)\n g = f32[3,5] negate(n)\n ab = f32[3,5] abs(g)\n \
         ex = f32[3,5] exponential(ab)\n l = f32[3,5] log(ex)\n t = f32[3,5] tanh(l)\n lg = f32[3,5] logistic(t)\n \
         sg = f32[3,5] sign(a)\n fl = f32[3,5] floor(q)\n ce = f32[3,5] ceil(q)\n rn = f32[3,5] round-nearest-even(q)\n \
         ra = f32[3,5] round-nearest-afz(q)\n er = f32[3,5] erf(a)\n sq = f32[3,5] sqrt(ab)\n e1 = f32[3,5] exponential-minus-one(a)\n \
         r1 = f32[3,5] add(lg, sg)\n r2 = f32[3,5] add(fl, ce)\n r3 = f32[3,5] add(rn, ra)\n r4 = f32[3,5] add(er, sq)\n \
         r5 = f32[3,5] add(r1, r2)\n r6 = f32[3,5] add(r3, r4)\n r7 = f32[3,5] add(r5, r6)\n \
         ROOT r = f32[3,5] add(r7, e1)\n}",
    );
    check(
        "integers",
        "ENTRY e {\n a = s32[4,3] parameter(0)\n b = s32[4,3] parameter(1)\n \
         s = s32[4,3] add(a, b)\n m = s32[4,3] multiply(s, a)\n q = s32[4,3] divide(m, b)\n r = s32[4,3] remainder(a, b)\n \
         x = s32[4,3] maximum(q, r)\n n = s32[4,3] negate(x)\n ab = s32[4,3] abs(n)\n an = s32[4,3] and(ab, b)\n \
         o = s32[4,3] or(an, a)\n xo = s32[4,3] xor(o, b)\n nt = s32[4,3] not(xo)\n k = s32[] constant(3)\n \
         kk = s32[4,3] broadcast(k), dimensions={}\n sl = s32[4,3] shift-left(nt, kk)\n sr = s32[4,3] shift-right-arithmetic(sl, kk)\n \
         su = s32[4,3] shift-right-logical(sr, b)\n pc = s32[4,3] popcnt(su)\n cz = s32[4,3] count-leading-zeros(su)\n \
         t = s32[4,3] add(pc, cz)\n ROOT u = s32[4,3] add(t, su)\n}",
    );
    check(
        "conversions and predicates",
        "ENTRY e {\n a = f32[6] parameter(0)\n i = s32[6] parameter(1)\n c = pred[6] compare(a, a), direction=GE\n \
         z = f32[] constant(0)\n zz = f32[6] broadcast(z), dimensions={}\n lt = pred[6] compare(a, zz), direction=LT\n \
         sel = f32[6] select(lt, zz, a)\n fi = s32[6] convert(a)\n if = f32[6] convert(i)\n b = bf16[6] convert(a)\n \
         bb = bf16[6] multiply(b, b)\n bf = f32[6] convert(bb)\n u = u8[6] convert(i)\n uu = u8[6] add(u, u)\n \
         uf = f32[6] convert(uu)\n p = pred[6] not(lt)\n pa = pred[6] and(p, c)\n pf = f32[6] convert(pa)\n \
         lo = f32[] constant(-1)\n hi = f32[] constant(1)\n cl = f32[6] clamp(lo, a, hi)\n \
         s1 = f32[6] add(sel, if)\n s2 = f32[6] add(bf, uf)\n s3 = f32[6] add(pf, cl)\n s4 = f32[6] add(s1, s2)\n \
         s5 = f32[6] add(s4, s3)\n ROOT t = (f32[6], s32[6], u8[6], pred[6], bf16[6]) tuple(s5, fi, uu, lt, bb)\n}",
    );
}

#[test]
fn data_movement() {
    if !host_runs_avx2() {
        return;
    }
    check(
        "transpose, broadcast, reshape, slice, reverse, concatenate, pad, iota",
        "ENTRY e {\n a = f32[4,6]{0,1} parameter(0)\n b = f32[6] parameter(1)\n \
         t = f32[6,4] transpose(a), dimensions={1,0}\n bb = f32[6,4] broadcast(b), dimensions={0}\n s = f32[6,4] add(t, bb)\n \
         r = f32[2,3,4] reshape(s)\n sl = f32[2,2,2] slice(r), slice={[0:2], [1:3], [0:4:2]}\n rv = f32[2,2,2] reverse(sl), dimensions={0,2}\n \
         c = f32[2,4,2] concatenate(rv, sl), dimensions={1}\n z = f32[] constant(-3)\n \
         p = f32[4,8,3] pad(c, z), padding=1_1x-1_2_1x0_1\n i = f32[4,8,3] iota(), iota_dimension=1\n \
         ROOT o = f32[4,8,3]{0,2,1} add(p, i)\n}",
    );
    check(
        "bitcast, copy, dynamic slices, gather",
        "ENTRY e {\n a = f32[4,6] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n ids = s32[5,1] parameter(3)\n \
         bc = f32[6,4]{0,1} bitcast(a)\n cp = f32[6,4] copy(bc)\n ds = f32[2,3] dynamic-slice(cp, i, j), dynamic_slice_sizes={2,3}\n \
         u = f32[2,3] negate(ds)\n dus = f32[6,4] dynamic-update-slice(cp, ds, j, i)\n \
         g = f32[5,4] gather(dus, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}\n \
         ROOT t = (f32[5,4], f32[2,3], f32[6,4]) tuple(g, u, dus)\n}",
    );
}

#[test]
fn reductions_dots_and_convolutions_as_loops() {
    if !host_runs_avx2() {
        return;
    }
    check(
        "reductions",
        "ENTRY e {\n a = f32[4,5,3] parameter(0)\n i = s32[4,5] parameter(1)\n z = f32[] constant(0)\n one = f32[] constant(1)\n \
         ninf = f32[] constant(-inf)\n zi = s32[] constant(0)\n \
         s = f32[5] reduce(a, z), dimensions={0,2}, to_apply=add\n m = f32[4,3] reduce(a, ninf), dimensions={1}, to_apply=max\n \
         p = f32[4] reduce(a, one), dimensions={1,2}, to_apply=mul\n si = s32[5] reduce(i, zi), dimensions={0}, to_apply=addi\n \
         io = s32[4,5,3] iota(), iota_dimension=1\n am = (f32[4,3], s32[4,3]) reduce(a, io, ninf, zi), dimensions={1}, to_apply=argmax\n \
         v = f32[4,3] get-tuple-element(am), index=0\n k = s32[4,3] get-tuple-element(am), index=1\n \
         w = f32[4,2,1] reduce-window(a, z), window={size=1x3x3 stride=1x2x2 pad=0_0x1_0x0_0}, to_apply=add\n \
         q = f32[4,3] reduce(a, z), dimensions={1}, to_apply=sq\n \
         ROOT t = (f32[5], f32[4,3], f32[4], s32[5], f32[4,3], s32[4,3], f32[4,2,1], f32[4,3]) tuple(s, m, p, si, v, k, w, q)\n}",
    );
    check(
        "integer dot, bf16 dot, grouped and dilated convolutions",
        "ENTRY e {\n a = s32[3,4] parameter(0)\n b = s32[4,2] parameter(1)\n x = bf16[2,3] parameter(2)\n y = bf16[3,2] parameter(3)\n \
         img = f32[1,5,5,4] parameter(4)\n ker = f32[3,3,2,4] parameter(5)\n \
         d = s32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n \
         e = bf16[2,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n \
         c = f32[1,4,1,4] convolution(img, ker), window={size=3x3 stride=1x2 pad=1_0x0_0 lhs_dilate=1x1 rhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, feature_group_count=2\n \
         ROOT t = (s32[3,2], bf16[2,2], f32[1,4,1,4]) tuple(d, e, c)\n}",
    );
    check(
        "a map and a reshaped result",
        "sum3 { a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] parameter(2)\n s = f32[] add(a, b)\n ROOT t = f32[] add(s, c) }\n\
         ENTRY e {\n a = f32[2,3] parameter(0)\n b = f32[2,3] parameter(1)\n m = f32[2,3] map(a, b, a), dimensions={0,1}, to_apply=sum3\n \
         ROOT r = f32[3,2] reshape(m)\n}",
    );
}

#[test]
fn results_that_are_parameters_constants_or_repeated() {
    if !host_runs_avx2() {
        return;
    }
    check(
        "copies",
        "ENTRY e {\n a = f32[2,3] parameter(0)\n c = f32[2] constant({1.5, -2})\n k = s32[] constant(7)\n n = f32[2,3] negate(a)\n \
         ROOT t = (f32[2,3], f32[2], s32[], f32[2,3], f32[2,3], f32[2,3]{0,1}) tuple(a, c, k, n, n, a)\n}",
    );
}
