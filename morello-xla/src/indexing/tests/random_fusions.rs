//! Random small single-op and two-op fusions, checked in both directions against the
//! brute-force reference.
//!
//! A fusion is generated from a random input shape and a list of random bytes: each op consumes
//! bytes to pick its kind and attributes, always valid for the shape it receives (so shrinking
//! the bytes shrinks the fusion).

use proptest::prelude::*;

use crate::hlo::{
    ArrayShape, ComparisonDirection, DotDimensions, ElementwiseOp, HloOp, HloShape, InstrId, PadDim,
    SliceDim, WindowDim,
};

use super::{Body, REDUCER, check_against_reference, fusion_module};

/// Random decisions read from bytes; past the end every choice is 0.
struct Choices {
    bytes: Vec<u8>,
    position: usize,
}

impl Choices {
    /// A number in `0..n` (0 if `n` is 0).
    fn pick(&mut self, n: usize) -> usize {
        let byte = self.bytes.get(self.position).copied().unwrap_or(0);
        self.position += 1;
        if n == 0 { 0 } else { usize::from(byte) % n }
    }

    /// A number in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.pick((hi - lo + 1) as usize) as i64
    }

    fn coin(&mut self) -> bool {
        self.pick(2) == 1
    }

    /// A random permutation of `0..n`.
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.pick(i + 1);
            p.swap(i, j);
        }
        p
    }

    /// A random factorisation of `volume` into at most `max_rank` dims.
    fn factorisation(&mut self, volume: i64, max_rank: usize) -> Vec<i64> {
        let mut dims = Vec::new();
        let mut rest = volume;
        while dims.len() + 1 < max_rank && rest > 1 && self.coin() {
            let divisors: Vec<i64> = (1..=rest).filter(|d| rest % d == 0).collect();
            let d = divisors[self.pick(divisors.len())];
            dims.push(d);
            rest /= d;
        }
        dims.push(rest);
        let order = self.permutation(dims.len());
        order.into_iter().map(|i| dims[i]).collect()
    }
}

/// Appends one random op reading `x` (of shape `dims`) and returns it with its result dims.
fn random_op(b: &mut Body, c: &mut Choices, x: InstrId, dims: &[i64], tag: &str) -> (InstrId, Vec<i64>) {
    let rank = dims.len();
    let name = |what: &str| format!("{what}{tag}");
    match c.pick(16) {
        0 => {
            let op = [ElementwiseOp::Exponential, ElementwiseOp::Negate, ElementwiseOp::Convert][c.pick(3)];
            (b.op(&name("unary"), dims, HloOp::Elementwise(op), &[x]), dims.to_vec())
        }
        1 => {
            let other = if c.coin() { b.param(&name("q"), dims) } else { x };
            (b.op(&name("add"), dims, HloOp::Elementwise(ElementwiseOp::Add), &[x, other]), dims.to_vec())
        }
        2 => {
            let extra = 1 + c.pick(2);
            let mut out: Vec<i64> = dims.to_vec();
            let mut positions: Vec<usize> = (0..rank).collect();
            for _ in 0..extra.min(4usize.saturating_sub(rank)) {
                let at = c.pick(out.len() + 1);
                out.insert(at, c.between(1, 3));
                for p in positions.iter_mut() {
                    if *p >= at {
                        *p += 1;
                    }
                }
            }
            (b.op(&name("broadcast"), &out, HloOp::Broadcast { dimensions: positions }, &[x]), out)
        }
        3 => {
            let p = c.permutation(rank);
            let out: Vec<i64> = p.iter().map(|&k| dims[k]).collect();
            (b.op(&name("transpose"), &out, HloOp::Transpose { dimensions: p }, &[x]), out)
        }
        4 => {
            let reversed: Vec<usize> = (0..rank).filter(|_| c.coin()).collect();
            (b.op(&name("reverse"), dims, HloOp::Reverse { dimensions: reversed }, &[x]), dims.to_vec())
        }
        5 => {
            let reduced: Vec<usize> = (0..rank).filter(|_| c.coin()).collect();
            let out: Vec<i64> = (0..rank).filter(|k| !reduced.contains(k)).map(|k| dims[k]).collect();
            let init = b.op(&name("init"), &[], HloOp::Constant { scalar: None, literal: None }, &[]);
            let op = HloOp::Reduce { dimensions: reduced, to_apply: REDUCER };
            if c.coin() {
                // Variadic: a second input and a tuple result, then one element of it.
                let y = b.param(&name("y"), dims);
                let init2 = b.param(&name("init_y"), &[]);
                let shape = HloShape::Tuple(vec![ArrayShape::new(&out), ArrayShape::new(&out)]);
                let t = b.shaped(&name("reduce"), shape, op, &[x, y, init, init2]);
                let index = c.pick(2);
                (b.op(&name("gte"), &out, HloOp::GetTupleElement { index }, &[t]), out)
            } else {
                (b.op(&name("reduce"), &out, op, &[x, init]), out)
            }
        }
        6 => {
            let mut slice = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let start = c.between(0, size);
                let limit = c.between(start, size);
                let stride = c.between(1, 3);
                slice.push(SliceDim { start, limit, stride });
                out.push((limit - start + stride - 1) / stride);
            }
            (b.op(&name("slice"), &out, HloOp::Slice { dims: slice }, &[x]), out)
        }
        7 => {
            let volume: i64 = dims.iter().product();
            let out = if volume == 0 { vec![0, 2] } else { c.factorisation(volume, 4) };
            (b.op(&name("reshape"), &out, HloOp::Reshape, &[x]), out)
        }
        8 => {
            let volume: i64 = dims.iter().product();
            let out = if volume == 0 { vec![2, 0] } else { c.factorisation(volume, 4) };
            let layout: Vec<usize> = c.permutation(out.len());
            let shape = HloShape::Array(ArrayShape::with_layout(&out, &layout));
            (b.shaped(&name("bitcast"), shape, HloOp::Bitcast, &[x]), out)
        }
        9 if rank > 0 => {
            let k = c.pick(rank);
            let mut other = dims.to_vec();
            other[k] = c.between(0, 3);
            let y = b.param(&name("y"), &other);
            let mut out = dims.to_vec();
            out[k] += other[k];
            let (first, second) = if c.coin() { (x, y) } else { (y, x) };
            (b.op(&name("concat"), &out, HloOp::Concatenate { dimension: k }, &[first, second]), out)
        }
        10 if rank > 0 => {
            // Each lhs dim is contracted, batch or free (at least one contracted); the rhs lists
            // the paired dims and 0 to 2 free dims of its own, in a random order.
            let roles: Vec<usize> = (0..rank).map(|_| c.pick(3)).collect();
            let mut lhs_contracting: Vec<usize> = (0..rank).filter(|&k| roles[k] == 0).collect();
            if lhs_contracting.is_empty() {
                lhs_contracting.push(c.pick(rank));
            }
            let lhs_batch: Vec<usize> =
                (0..rank).filter(|&k| roles[k] == 1 && !lhs_contracting.contains(&k)).collect();
            let rhs_free: Vec<i64> = (0..c.pick(3)).map(|_| c.between(1, 3)).collect();
            let mut rhs_sizes: Vec<i64> =
                lhs_batch.iter().chain(&lhs_contracting).map(|&k| dims[k]).collect();
            rhs_sizes.extend(&rhs_free);
            // rhs dim order[i] holds entry i of [batch..., contracting..., free...].
            let order = c.permutation(rhs_sizes.len());
            let mut rhs = vec![0; rhs_sizes.len()];
            for (i, &position) in order.iter().enumerate() {
                rhs[position] = rhs_sizes[i];
            }
            let nb = lhs_batch.len();
            let dot = DotDimensions {
                lhs_batch: lhs_batch.clone(),
                rhs_batch: order[..nb].to_vec(),
                lhs_contracting: lhs_contracting.clone(),
                rhs_contracting: order[nb..nb + lhs_contracting.len()].to_vec(),
            };
            let y = b.param(&name("rhs"), &rhs);
            let mut out: Vec<i64> = lhs_batch.iter().map(|&k| dims[k]).collect();
            out.extend(
                (0..rank).filter(|k| !lhs_contracting.contains(k) && !lhs_batch.contains(k)).map(|k| dims[k]),
            );
            let mut free_positions: Vec<usize> = order[nb + lhs_contracting.len()..].to_vec();
            free_positions.sort();
            out.extend(free_positions.iter().map(|&p| rhs[p]));
            (b.op(&name("dot"), &out, HloOp::Dot(dot), &[x, y]), out)
        }
        11 => {
            let mut pads = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let mut p =
                    PadDim { low: c.between(-1, 2), high: c.between(-1, 2), interior: c.between(0, 2) };
                let body = if size == 0 { 0 } else { size + (size - 1) * p.interior };
                if body + p.low + p.high < 0 {
                    p.low = 0;
                    p.high = 0;
                }
                out.push(body + p.low + p.high);
                pads.push(p);
            }
            let value = b.param(&name("value"), &[]);
            (b.op(&name("pad"), &out, HloOp::Pad { dims: pads }, &[x, value]), out)
        }
        12 => {
            let mut window = Vec::new();
            let mut out = Vec::new();
            for &size in dims {
                let w = WindowDim {
                    size: c.between(1, 3),
                    stride: c.between(1, 2),
                    pad_low: c.between(-1, 1),
                    pad_high: c.between(-1, 1),
                    window_dilation: c.between(1, 2),
                    base_dilation: c.between(1, 2),
                    reversal: false,
                };
                let base = if size == 0 { 0 } else { (size - 1) * w.base_dilation + 1 };
                let padded = base + w.pad_low + w.pad_high;
                let span = (w.size - 1) * w.window_dilation + 1;
                out.push(if padded < span { 0 } else { (padded - span) / w.stride + 1 });
                window.push(w);
            }
            let init = b.op(&name("init"), &[], HloOp::Constant { scalar: None, literal: None }, &[]);
            let op = HloOp::ReduceWindow { window, to_apply: REDUCER };
            (b.op(&name("reduce_window"), &out, op, &[x, init]), out)
        }
        13 => {
            let y = b.param(&name("y"), dims);
            let shape = HloShape::Tuple(vec![ArrayShape::new(dims), ArrayShape::new(dims)]);
            let t = b.shaped(&name("tuple"), shape, HloOp::Tuple, &[x, y]);
            let index = c.pick(2);
            (b.op(&name("gte"), dims, HloOp::GetTupleElement { index }, &[t]), dims.to_vec())
        }
        14 => {
            let pred = b.param(&name("pred"), dims);
            let cmp = b.op(
                &name("cmp"),
                dims,
                HloOp::Elementwise(ElementwiseOp::Compare(ComparisonDirection::Gt)),
                &[x, pred],
            );
            (
                b.op(&name("select"), dims, HloOp::Elementwise(ElementwiseOp::Select), &[cmp, x, pred]),
                dims.to_vec(),
            )
        }
        _ => {
            let op = if rank > 0 {
                HloOp::Iota { dimension: c.pick(rank) }
            } else {
                HloOp::Constant { scalar: None, literal: None }
            };
            let iota = b.op(&name("iota"), dims, op, &[]);
            (b.op(&name("mul"), dims, HloOp::Elementwise(ElementwiseOp::Multiply), &[iota, x]), dims.to_vec())
        }
    }
}

fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    proptest::collection::vec(prop_oneof![8 => 1i64..4, 1 => Just(0i64)], 0..4)
}

fn check_fusion(dims: &[i64], bytes: Vec<u8>, ops: usize) {
    let mut c = Choices { bytes, position: 0 };
    let mut b = Body::new("fused");
    let mut x = b.param("p0", dims);
    let mut shape = dims.to_vec();
    for i in 0..ops {
        (x, shape) = random_op(&mut b, &mut c, x, &shape, &format!("_{i}"));
    }
    let (module, fusion) = fusion_module(b, x);
    check_against_reference(&module, fusion);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn single_op_fusions_match_the_reference(dims in shape_strategy(), bytes in proptest::collection::vec(any::<u8>(), 24)) {
        check_fusion(&dims, bytes, 1);
    }

    #[test]
    fn two_op_fusions_match_the_reference(dims in shape_strategy(), bytes in proptest::collection::vec(any::<u8>(), 48)) {
        check_fusion(&dims, bytes, 2);
    }
}
