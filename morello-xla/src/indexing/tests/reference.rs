//! The oracle: which operand elements each output element reads, computed from each op's
//! semantics with plain loops over indices, never from indexing maps.
//!
//! Scalars that supply a value (inits of reduce and reduce-window, the padding value of a pad)
//! count as read by every output element, as the seed defines. A fusion follows reads through
//! its computation until it reaches parameters.

use std::collections::{BTreeMap, BTreeSet};

use crate::hlo::{ArrayShape, GatherDimensions, HloComputation, HloInstruction, HloModule, HloOp, InstrId};

/// One element read: operand position, array of the operand, index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    pub operand: usize,
    pub operand_output: usize,
    pub index: Vec<i64>,
}

/// Every index of a shape, row-major.
pub fn all_indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for &size in dims {
        out = out
            .into_iter()
            .flat_map(|prefix| (0..size).map(move |v| [prefix.clone(), vec![v]].concat()))
            .collect();
    }
    out
}

fn array(comp: &HloComputation, id: InstrId, output: usize) -> &ArrayShape {
    &comp.instructions[id.0].shape.arrays()[output]
}

/// Row-major position of `index` in `dims`.
fn row_major(index: &[i64], dims: &[i64]) -> i64 {
    index.iter().zip(dims).fold(0, |acc, (&i, &size)| acc * size + i)
}

/// The index at row-major position `linear` of `dims`.
fn unravel(mut linear: i64, dims: &[i64]) -> Vec<i64> {
    let mut out = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        out[k] = linear % dims[k];
        linear /= dims[k];
    }
    out
}

/// Buffer position of a logical index under a shape's layout.
fn physical_position(index: &[i64], shape: &ArrayShape) -> i64 {
    let minor_to_major: Vec<usize> =
        shape.minor_to_major.clone().unwrap_or_else(|| (0..shape.rank()).rev().collect());
    let mut stride = 1;
    let mut position = 0;
    for &dim in &minor_to_major {
        position += index[dim] * stride;
        stride *= shape.dims[dim];
    }
    position
}

/// The logical index at buffer position `position` under a shape's layout.
fn logical_index(mut position: i64, shape: &ArrayShape) -> Vec<i64> {
    let minor_to_major: Vec<usize> =
        shape.minor_to_major.clone().unwrap_or_else(|| (0..shape.rank()).rev().collect());
    let mut out = vec![0; shape.rank()];
    for &dim in &minor_to_major {
        out[dim] = position % shape.dims[dim];
        position /= shape.dims[dim];
    }
    out
}

/// The elements output `output` at `index` of instruction `id` reads directly.
pub fn reads(
    module: &HloModule,
    comp: &HloComputation,
    id: InstrId,
    output: usize,
    index: &[i64],
) -> Vec<Read> {
    let instr = &comp.instructions[id.0];
    let read = |operand: usize, index: Vec<i64>| Read { operand, operand_output: 0, index };
    let operand_dims = |i: usize| array(comp, instr.operands[i], 0).dims.clone();
    match &instr.op {
        HloOp::Parameter { .. } | HloOp::Constant { .. } | HloOp::Iota { .. } => vec![],
        HloOp::Elementwise(_) => (0..instr.operands.len())
            .map(|i| if operand_dims(i).is_empty() { read(i, vec![]) } else { read(i, index.to_vec()) })
            .collect(),
        HloOp::Map { .. } => (0..instr.operands.len()).map(|i| read(i, index.to_vec())).collect(),
        HloOp::DynamicSlice { sizes } => {
            // An offset is clamped to [0, n - w]; a constant inside that range is its value, any
            // other offset (a run-time value, or a constant the clamp moves) may be any of them.
            let input = operand_dims(0);
            let mut starts: Vec<Vec<i64>> = Vec::new();
            for (k, (&n, &w)) in input.iter().zip(sizes).enumerate() {
                let constant = match comp.instructions[instr.operands[k + 1].0].op {
                    HloOp::Constant { scalar: Some(v), .. } if (0..=n - w).contains(&v) => Some(v),
                    _ => None,
                };
                starts.push(constant.map_or_else(|| (0..=n - w).collect(), |v| vec![v]));
            }
            let combos = starts.iter().fold(vec![Vec::new()], |acc, values| {
                acc.into_iter()
                    .flat_map(|prefix| values.iter().map(move |&v| [prefix.clone(), vec![v]].concat()))
                    .collect::<Vec<_>>()
            });
            let mut out: Vec<Read> = combos
                .into_iter()
                .map(|rt| read(0, index.iter().zip(&rt).map(|(&i, &r)| i + r).collect()))
                .collect();
            out.extend((1..instr.operands.len()).map(|i| read(i, vec![])));
            out
        }
        HloOp::DynamicUpdateSlice => {
            let update = operand_dims(1);
            let dims = &instr.shape.arrays()[0].dims;
            let offsets: Vec<i64> = dims.iter().zip(&update).map(|(&n, &u)| n - u + 1).collect();
            let mut out = vec![read(0, index.to_vec())];
            for rt in all_indices(&offsets) {
                let j: Vec<i64> = index.iter().zip(&rt).map(|(&i, &r)| i - r).collect();
                if j.iter().zip(&update).all(|(&v, &u)| (0..u).contains(&v)) {
                    out.push(read(1, j));
                }
            }
            out.extend((2..instr.operands.len()).map(|i| read(i, vec![])));
            out
        }
        HloOp::Convolution { window, dims, feature_group_count, batch_group_count } => {
            let (lhs, rhs) = (operand_dims(0), operand_dims(1));
            let out = &instr.shape.arrays()[0].dims;
            let out_features = out[dims.output_feature];
            let group = index[dims.output_feature] / (out_features / feature_group_count);
            let group_features = lhs[dims.lhs_feature] / feature_group_count;
            let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
            let mut out_reads = Vec::new();
            // Which batch group an output feature reads is not settled (the StableHLO spec and
            // XLA's evaluator disagree when the output batch is above 1), so, as XLA's analysis,
            // every group counts as read.
            for (batch_group, offsets) in
                (0..*batch_group_count).flat_map(|g| all_indices(&sizes).into_iter().map(move |o| (g, o)))
            {
                for i in 0..group_features {
                    let mut r = vec![0; rhs.len()];
                    r[dims.rhs_output_feature] = index[dims.output_feature];
                    r[dims.rhs_input_feature] = i;
                    for (k, &o) in offsets.iter().enumerate() {
                        r[dims.rhs_spatial[k]] = o;
                    }
                    out_reads.push(read(1, r));
                    let mut l = vec![0; lhs.len()];
                    l[dims.lhs_batch] = batch_group * out[dims.output_batch] + index[dims.output_batch];
                    l[dims.lhs_feature] = group * group_features + i;
                    let mut inside = true;
                    for (k, w) in window.iter().enumerate() {
                        let t = index[dims.output_spatial[k]] * w.stride + offsets[k] * w.window_dilation
                            - w.pad_low;
                        let size = lhs[dims.lhs_spatial[k]];
                        inside &= t >= 0 && t % w.base_dilation == 0 && t / w.base_dilation < size;
                        l[dims.lhs_spatial[k]] = t.div_euclid(w.base_dilation);
                    }
                    if inside {
                        out_reads.push(read(0, l));
                    }
                }
            }
            out_reads
        }
        HloOp::Gather(dims) => gather_reads(comp, instr, dims, index),
        // No semantics to follow: the analysis answers "unknown", which tests check apart.
        HloOp::Unknown { .. } | HloOp::Call { .. } => vec![],
        HloOp::Broadcast { dimensions } => vec![read(0, dimensions.iter().map(|&b| index[b]).collect())],
        HloOp::Transpose { dimensions } => {
            let mut j = vec![0; index.len()];
            for (i, &p) in dimensions.iter().enumerate() {
                j[p] = index[i];
            }
            vec![read(0, j)]
        }
        HloOp::Reverse { dimensions } => {
            let dims = operand_dims(0);
            let j = (0..index.len())
                .map(|k| if dimensions.contains(&k) { dims[k] - 1 - index[k] } else { index[k] });
            vec![read(0, j.collect())]
        }
        HloOp::Reduce { dimensions, .. } => {
            let n = instr.operands.len() / 2;
            let input = operand_dims(0);
            let reduced: Vec<i64> = dimensions.iter().map(|&k| input[k]).collect();
            let mut out = Vec::new();
            for combo in all_indices(&reduced) {
                let mut kept = index.iter();
                let j: Vec<i64> = (0..input.len())
                    .map(|k| match dimensions.iter().position(|&r| r == k) {
                        Some(p) => combo[p],
                        None => *kept.next().unwrap(),
                    })
                    .collect();
                out.extend((0..n).map(|i| read(i, j.clone())));
            }
            out.extend((n..2 * n).map(|i| read(i, vec![])));
            out
        }
        HloOp::Slice { dims } => {
            vec![read(0, dims.iter().zip(index).map(|(s, &i)| s.start + s.stride * i).collect())]
        }
        HloOp::Reshape => {
            let out_dims = &instr.shape.arrays()[0].dims;
            vec![read(0, unravel(row_major(index, out_dims), &operand_dims(0)))]
        }
        HloOp::Bitcast => {
            let position = physical_position(index, &instr.shape.arrays()[0]);
            vec![read(0, logical_index(position, array(comp, instr.operands[0], 0)))]
        }
        HloOp::Concatenate { dimension } => {
            let mut start = 0;
            for i in 0..instr.operands.len() {
                let size = operand_dims(i)[*dimension];
                if index[*dimension] < start + size {
                    let mut j = index.to_vec();
                    j[*dimension] -= start;
                    return vec![read(i, j)];
                }
                start += size;
            }
            vec![]
        }
        HloOp::Dot(dims) => {
            let (lhs, rhs) = (operand_dims(0), operand_dims(1));
            let contracting: Vec<i64> = dims.lhs_contracting.iter().map(|&k| lhs[k]).collect();
            let nb = dims.lhs_batch.len();
            let lhs_free: Vec<usize> = (0..lhs.len())
                .filter(|k| !dims.lhs_batch.contains(k) && !dims.lhs_contracting.contains(k))
                .collect();
            let rhs_free: Vec<usize> = (0..rhs.len())
                .filter(|k| !dims.rhs_batch.contains(k) && !dims.rhs_contracting.contains(k))
                .collect();
            let mut out = Vec::new();
            for c in all_indices(&contracting) {
                let mut l = vec![0; lhs.len()];
                let mut r = vec![0; rhs.len()];
                for b in 0..nb {
                    l[dims.lhs_batch[b]] = index[b];
                    r[dims.rhs_batch[b]] = index[b];
                }
                for (p, &k) in lhs_free.iter().enumerate() {
                    l[k] = index[nb + p];
                }
                for (p, &k) in rhs_free.iter().enumerate() {
                    r[k] = index[nb + lhs_free.len() + p];
                }
                for (p, (&lk, &rk)) in dims.lhs_contracting.iter().zip(&dims.rhs_contracting).enumerate() {
                    l[lk] = c[p];
                    r[rk] = c[p];
                }
                out.push(read(0, l));
                out.push(read(1, r));
            }
            out
        }
        HloOp::Pad { dims } => {
            let input = operand_dims(0);
            let mut j = Vec::new();
            for (k, p) in dims.iter().enumerate() {
                let t = index[k] - p.low;
                let q = p.interior + 1;
                if t >= 0 && t % q == 0 && t / q < input[k] {
                    j.push(t / q);
                }
            }
            let mut out = vec![read(1, vec![])];
            if j.len() == input.len() {
                out.push(read(0, j));
            }
            out
        }
        HloOp::ReduceWindow { window, .. } => {
            let n = instr.operands.len() / 2;
            let input = operand_dims(0);
            let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
            let mut out = Vec::new();
            for offsets in all_indices(&sizes) {
                let mut j = Vec::new();
                for (k, w) in window.iter().enumerate() {
                    let t = index[k] * w.stride + offsets[k] * w.window_dilation - w.pad_low;
                    if t >= 0 && t % w.base_dilation == 0 && t / w.base_dilation < input[k] {
                        j.push(t / w.base_dilation);
                    }
                }
                if j.len() == input.len() {
                    out.extend((0..n).map(|i| read(i, j.clone())));
                }
            }
            out.extend((n..2 * n).map(|i| read(i, vec![])));
            out
        }
        HloOp::Fusion { calls } => {
            let callee = &module.computations()[calls.0];
            parameter_reads(module, callee, output, index).into_iter().collect()
        }
        HloOp::Tuple => vec![read(output, index.to_vec())],
        HloOp::GetTupleElement { index: element } => {
            vec![Read { operand: 0, operand_output: *element, index: index.to_vec() }]
        }
    }
}

/// What output `index` of a gather reads: every component of its start index vector, and the
/// operand at every start the clamped run-time values allow (an iota's values are known, as is
/// an integer scalar constant inside the clamp's range) plus the offset within the slice.
fn gather_reads(
    comp: &HloComputation,
    instr: &HloInstruction,
    dims: &GatherDimensions,
    index: &[i64],
) -> Vec<Read> {
    let operand = &array(comp, instr.operands[0], 0).dims;
    let indices = &array(comp, instr.operands[1], 0).dims;
    let indices_op = &comp.instructions[instr.operands[1].0].op;
    let batch: Vec<i64> =
        (0..index.len()).filter(|k| !dims.offset_dims.contains(k)).map(|k| index[k]).collect();
    // The start_indices index of component `k` of the index vector.
    let vector_index = |k: i64| -> Vec<i64> {
        let mut batch = batch.iter();
        (0..indices.len())
            .map(|j| if j == dims.index_vector_dim { k } else { *batch.next().expect("validated ranks") })
            .collect()
    };
    let components = indices.get(dims.index_vector_dim).copied().unwrap_or(1);
    let mut out: Vec<Read> = if dims.index_vector_dim < indices.len() {
        (0..components).map(|k| Read { operand: 1, operand_output: 0, index: vector_index(k) }).collect()
    } else {
        vec![Read { operand: 1, operand_output: 0, index: vector_index(0) }]
    };
    // The values each operand dim's start may take.
    let mut starts: Vec<Vec<i64>> = vec![vec![0]; operand.len()];
    for (k, &i) in dims.start_index_map.iter().enumerate() {
        let last = operand[i] - dims.slice_sizes[i];
        let at = vector_index(i64::try_from(k).expect("a small vector"));
        starts[i] = match *indices_op {
            HloOp::Iota { dimension } => vec![at[dimension].clamp(0, last)],
            HloOp::Constant { scalar: Some(v), .. } if (0..=last).contains(&v) => vec![v],
            _ => (0..=last).collect(),
        };
    }
    let index_batch: Vec<usize> = (0..indices.len()).filter(|&k| k != dims.index_vector_dim).collect();
    for (&o, &j) in dims.operand_batching_dims.iter().zip(&dims.start_indices_batching_dims) {
        let p = index_batch.iter().position(|&k| k == j).expect("a batch dimension");
        starts[o] = vec![batch[p]];
    }
    let window: Vec<usize> = (0..operand.len())
        .filter(|k| !dims.collapsed_slice_dims.contains(k) && !dims.operand_batching_dims.contains(k))
        .collect();
    let offset: Vec<i64> = (0..operand.len())
        .map(|i| window.iter().position(|&w| w == i).map_or(0, |w| index[dims.offset_dims[w]]))
        .collect();
    let combos = starts.iter().fold(vec![Vec::new()], |acc, values| {
        acc.into_iter()
            .flat_map(|prefix: Vec<i64>| values.iter().map(move |&v| [prefix.clone(), vec![v]].concat()))
            .collect::<Vec<_>>()
    });
    for start in combos {
        out.push(Read {
            operand: 0,
            operand_output: 0,
            index: start.iter().zip(&offset).map(|(a, b)| a + b).collect(),
        });
    }
    out
}

/// The parameter elements output `output` at `index` of a computation's root reads, following
/// reads through every instruction (`operand` is the parameter number).
pub fn parameter_reads(
    module: &HloModule,
    comp: &HloComputation,
    output: usize,
    index: &[i64],
) -> BTreeSet<Read> {
    let mut found = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut work = vec![(comp.root, output, index.to_vec())];
    while let Some((id, out, idx)) = work.pop() {
        if !seen.insert((id, out, idx.clone())) {
            continue;
        }
        let instr = &comp.instructions[id.0];
        if let HloOp::Parameter { number } = instr.op {
            found.insert(Read { operand: number, operand_output: out, index: idx });
            continue;
        }
        for r in reads(module, comp, id, out, &idx) {
            work.push((instr.operands[r.operand], r.operand_output, r.index));
        }
    }
    found
}

/// A relation between indices: (source index, target index) pairs.
pub type Relation = BTreeSet<(Vec<i64>, Vec<i64>)>;

/// For output `output` of an instruction, the relation (output index, operand index) per
/// (operand, operand output).
pub fn output_to_input_relations(
    module: &HloModule,
    comp: &HloComputation,
    id: InstrId,
    output: usize,
) -> BTreeMap<(usize, usize), Relation> {
    let mut relations: BTreeMap<(usize, usize), Relation> = BTreeMap::new();
    let dims = array(comp, id, output).dims.clone();
    for index in all_indices(&dims) {
        for r in reads(module, comp, id, output, &index) {
            relations.entry((r.operand, r.operand_output)).or_default().insert((index.clone(), r.index));
        }
    }
    relations
}
