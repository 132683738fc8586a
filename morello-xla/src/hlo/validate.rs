//! The checks behind [`HloModule::new`](super::HloModule::new): the structure of every
//! computation (names, operand order, parameter numbers, shapes), then that calls do not recurse,
//! then every op's attributes against its operand and result shapes.
//!
//! Shapes are compared by dimensions only: layouts may differ between an op's operands and its
//! result (a transpose often changes only the layout).

use std::collections::HashSet;

use super::{
    ArrayShape, ComputationId, ConvolutionDimensions, DotDimensions, ElementwiseOp, GatherDimensions,
    HloComputation, HloError, HloErrorKind, HloInstruction, HloOp, HloShape, PadDim, SliceDim, WindowDim,
};

type Check = Result<(), HloErrorKind>;

pub(super) fn module(computations: &[HloComputation], entry: ComputationId) -> Result<(), HloError> {
    let mut names = HashSet::new();
    for computation in computations {
        if !names.insert(computation.name.as_str()) {
            return Err(structural(computation, HloErrorKind::DuplicateComputation));
        }
    }
    if entry.0 >= computations.len() {
        let name = computations.last().map(|c| c.name.clone()).unwrap_or_default();
        return Err(HloError {
            computation: name,
            instruction: None,
            kind: HloErrorKind::NoSuchEntry { index: entry.0 },
        });
    }
    for computation in computations {
        check_structure(computations.len(), computation)?;
    }
    check_calls_do_not_recurse(computations)?;
    for computation in computations {
        check_ops(computations, computation)?;
    }
    Ok(())
}

fn structural(computation: &HloComputation, kind: HloErrorKind) -> HloError {
    HloError { computation: computation.name.clone(), instruction: None, kind }
}

fn at(computation: &HloComputation, instr: &HloInstruction, kind: HloErrorKind) -> HloError {
    HloError { computation: computation.name.clone(), instruction: Some(instr.name.clone()), kind }
}

/// Root, names, operand order, callee ids, parameter numbers and shapes of one computation.
fn check_structure(num_computations: usize, computation: &HloComputation) -> Result<(), HloError> {
    if computation.root.0 >= computation.instructions.len() {
        return Err(structural(computation, HloErrorKind::NoSuchRoot { index: computation.root.0 }));
    }
    let mut names = HashSet::new();
    let mut numbers = Vec::new();
    for (index, instr) in computation.instructions.iter().enumerate() {
        if !names.insert(instr.name.as_str()) {
            return Err(at(computation, instr, HloErrorKind::DuplicateInstruction));
        }
        for (position, operand) in instr.operands.iter().enumerate() {
            if operand.0 >= index {
                let kind = HloErrorKind::OperandNotDefinedBefore { position, index: operand.0 };
                return Err(at(computation, instr, kind));
            }
        }
        if let Some(callee) = instr.op.called_computation() {
            if callee.0 >= num_computations {
                return Err(at(computation, instr, HloErrorKind::NoSuchComputation { index: callee.0 }));
            }
        }
        if let HloOp::Parameter { number } = instr.op {
            numbers.push((number, instr));
        }
        check_shape("the result", &instr.shape).map_err(|kind| at(computation, instr, kind))?;
    }
    numbers.sort_by_key(|(number, _)| *number);
    for (expected, (number, instr)) in numbers.iter().enumerate() {
        if *number != expected {
            return Err(at(computation, instr, HloErrorKind::ParameterNumber { number: *number }));
        }
    }
    Ok(())
}

/// The call graph (`to_apply`, `calls`) must be acyclic; found by an iterative depth-first
/// search (no recursion, so a deep call chain cannot overflow the stack).
fn check_calls_do_not_recurse(computations: &[HloComputation]) -> Result<(), HloError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; computations.len()];
    for start in 0..computations.len() {
        if marks[start] != Mark::New {
            continue;
        }
        marks[start] = Mark::OnPath;
        // (computation, index of the next instruction to look at)
        let mut path = vec![(start, 0usize)];
        while let Some((current, next)) = path.last_mut() {
            let computation = &computations[*current];
            let call = computation.instructions[*next..].iter().enumerate().find_map(|(offset, instr)| {
                instr.op.called_computation().map(|callee| (*next + offset, callee))
            });
            let Some((position, callee)) = call else {
                marks[*current] = Mark::Done;
                path.pop();
                continue;
            };
            *next = position + 1;
            match marks[callee.0] {
                Mark::OnPath => {
                    let kind = HloErrorKind::RecursiveCall { callee: computations[callee.0].name.clone() };
                    return Err(at(computation, &computation.instructions[position], kind));
                }
                Mark::New => {
                    marks[callee.0] = Mark::OnPath;
                    path.push((callee.0, 0));
                }
                Mark::Done => {}
            }
        }
    }
    Ok(())
}

/// Every op's attributes against its shapes, once the whole module's structure is known good.
fn check_ops(computations: &[HloComputation], computation: &HloComputation) -> Result<(), HloError> {
    for instr in &computation.instructions {
        let operands: Vec<&HloInstruction> =
            instr.operands.iter().map(|id| &computation.instructions[id.0]).collect();
        let op = OpCheck { instr, operands, computations };
        op.check().map_err(|kind| at(computation, instr, kind))?;
    }
    Ok(())
}

fn check_shape(what: &str, shape: &HloShape) -> Check {
    for array in shape.arrays() {
        check_array(what, array)?;
    }
    Ok(())
}

fn check_array(what: &str, array: &ArrayShape) -> Check {
    let mut volume: i64 = 1;
    for &size in &array.dims {
        if size < 0 {
            return Err(HloErrorKind::NegativeDimension { what: what.to_string(), size });
        }
        volume = volume.checked_mul(size).ok_or(HloErrorKind::VolumeOverflow { what: what.to_string() })?;
    }
    if let Some(order) = &array.minor_to_major {
        if !is_permutation(order, array.rank()) {
            return Err(HloErrorKind::BadLayout {
                what: what.to_string(),
                minor_to_major: order.clone(),
                rank: array.rank(),
            });
        }
    }
    Ok(())
}

fn is_permutation(values: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    values.len() == rank && values.iter().all(|&v| v < rank && !std::mem::replace(&mut seen[v], true))
}

/// The number of elements of a validated array (fits in `i64`).
pub(crate) fn volume(array: &ArrayShape) -> i64 {
    array.dims.iter().product()
}

/// Checks one instruction's op against its operands and result.
struct OpCheck<'a> {
    instr: &'a HloInstruction,
    operands: Vec<&'a HloInstruction>,
    computations: &'a [HloComputation],
}

impl<'a> OpCheck<'a> {
    fn check(&self) -> Check {
        match &self.instr.op {
            HloOp::Parameter { .. } => self.count(0),
            HloOp::Constant { literal, .. } => self.constant(literal.as_deref()),
            HloOp::Iota { dimension } => self.iota(*dimension),
            HloOp::Elementwise(op) => self.elementwise(*op),
            HloOp::Broadcast { dimensions } => self.broadcast(dimensions),
            HloOp::Transpose { dimensions } => self.transpose(dimensions),
            HloOp::Reverse { dimensions } => self.reverse(dimensions),
            HloOp::Reduce { dimensions, .. } => self.reduce(dimensions),
            HloOp::Slice { dims } => self.slice(dims),
            HloOp::Reshape | HloOp::Bitcast => self.reshape(),
            HloOp::Concatenate { dimension } => self.concatenate(*dimension),
            HloOp::Dot(dims) => self.dot(dims),
            HloOp::Pad { dims } => self.pad(dims),
            HloOp::ReduceWindow { window, .. } => self.reduce_window(window),
            HloOp::Fusion { calls } => self.fusion(*calls),
            HloOp::Call { to_apply } => self.fusion(*to_apply),
            HloOp::Tuple => self.tuple(),
            HloOp::GetTupleElement { index } => self.get_tuple_element(*index),
            HloOp::Map { .. } => self.map(),
            HloOp::DynamicSlice { sizes } => self.dynamic_slice(sizes),
            HloOp::DynamicUpdateSlice => self.dynamic_update_slice(),
            HloOp::Convolution { window, dims, feature_group_count, batch_group_count } => {
                self.convolution(window, dims, *feature_group_count, *batch_group_count)
            }
            HloOp::Gather(dims) => self.gather(dims),
            // Nothing is known of an op without a map but its operands' and result's shapes,
            // which were checked on their own.
            HloOp::Unknown { .. } => Ok(()),
        }
    }

    fn opcode(&self) -> &'static str {
        self.instr.op.opcode()
    }

    fn count(&self, expected: usize) -> Check {
        if self.operands.len() == expected { Ok(()) } else { Err(self.count_error(expected.to_string())) }
    }

    fn count_error(&self, expected: String) -> HloErrorKind {
        HloErrorKind::OperandCount { opcode: self.opcode(), expected, found: self.operands.len() }
    }

    /// `n` and the first input for a variadic op (reduce, reduce-window) with `n` inputs of one
    /// shape followed by `n` scalar inits; checks those.
    fn variadic_inputs(&self) -> Result<(usize, &'a ArrayShape), HloErrorKind> {
        let found = self.operands.len();
        if found == 0 || found % 2 != 0 {
            return Err(self.count_error("an even, non-zero number of".into()));
        }
        let n = found / 2;
        let input = self.operand(0)?;
        for position in 1..n {
            same_dims(&self.operand_what(position), &input.dims, &self.operand(position)?.dims)?;
        }
        for position in n..2 * n {
            self.scalar(position)?;
        }
        Ok((n, input))
    }

    fn operand_what(&self, position: usize) -> String {
        match self.operands.get(position) {
            Some(o) => format!("operand {position} (`{}`)", o.name),
            None => format!("operand {position}"),
        }
    }

    fn operand(&self, position: usize) -> Result<&'a ArrayShape, HloErrorKind> {
        let what = self.operand_what(position);
        match self.operands.get(position) {
            Some(o) => o.shape.as_array().ok_or(HloErrorKind::ExpectedArray { what }),
            None => Err(self.count_error(format!("at least {}", position + 1))),
        }
    }

    fn result(&self) -> Result<&'a ArrayShape, HloErrorKind> {
        self.instr.shape.as_array().ok_or(HloErrorKind::ExpectedArray { what: "the result".into() })
    }

    fn scalar(&self, position: usize) -> Check {
        same_dims(&self.operand_what(position), &[], &self.operand(position)?.dims)
    }

    /// Checks that the result has `n` arrays (a tuple when `n > 1`), each with `dims`.
    fn results_all(&self, n: usize, dims: &[i64]) -> Check {
        if n > 1 && self.instr.shape.as_array().is_some() {
            return Err(HloErrorKind::ExpectedTuple { what: "the result".into() });
        }
        let arrays = self.instr.shape.arrays();
        if arrays.len() != n {
            return Err(HloErrorKind::AttributeLength {
                attribute: "result tuple",
                expected: n,
                found: arrays.len(),
            });
        }
        for (i, array) in arrays.iter().enumerate() {
            let what = if n == 1 { "the result".to_string() } else { format!("result element {i}") };
            same_dims(&what, dims, &array.dims)?;
        }
        Ok(())
    }

    fn iota(&self, dimension: usize) -> Check {
        self.count(0)?;
        dims_in_range("iota_dimension", &[dimension], self.result()?.rank())
    }

    fn elementwise(&self, op: ElementwiseOp) -> Check {
        self.count(op.arity())?;
        let result = self.result()?;
        for position in 0..op.arity() {
            let dims = &self.operand(position)?.dims;
            if dims.is_empty() && op.allows_scalar_operand(position) {
                continue;
            }
            same_dims(&self.operand_what(position), &result.dims, dims)?;
        }
        Ok(())
    }

    fn map(&self) -> Check {
        if self.operands.is_empty() {
            return Err(self.count_error("at least 1".into()));
        }
        let result = self.result()?;
        for position in 0..self.operands.len() {
            same_dims(&self.operand_what(position), &result.dims, &self.operand(position)?.dims)?;
        }
        Ok(())
    }

    /// The run-time offsets after the first `first` operands: one scalar per dimension.
    fn offsets(&self, first: usize, rank: usize) -> Check {
        self.count(first + rank)?;
        (first..first + rank).try_for_each(|position| self.scalar(position))
    }

    fn dynamic_slice(&self, sizes: &[i64]) -> Check {
        let (operand, result) = (self.operand(0)?, self.result()?);
        self.offsets(1, operand.rank())?;
        length("dynamic_slice_sizes", operand.rank(), sizes.len())?;
        for (dimension, (&size, &bound)) in sizes.iter().zip(&operand.dims).enumerate() {
            if size < 0 || size > bound {
                return Err(HloErrorKind::SliceOutOfBounds { dimension, start: 0, limit: size, size: bound });
            }
        }
        same_dims("the result", sizes, &result.dims)
    }

    fn convolution(
        &self,
        window: &[WindowDim],
        dims: &ConvolutionDimensions,
        groups: i64,
        batch_groups: i64,
    ) -> Check {
        self.count(2)?;
        let (lhs, rhs, result) = (self.operand(0)?, self.operand(1)?, self.result()?);
        let n = dims.lhs_spatial.len();
        length("dim_labels of the lhs", lhs.rank(), n + 2)?;
        length("dim_labels of the rhs", rhs.rank(), n + 2)?;
        length("dim_labels of the result", result.rank(), n + 2)?;
        length("window", n, window.len())?;
        let (batch, features) = (lhs.dims[dims.lhs_batch], lhs.dims[dims.lhs_feature]);
        let out_features = rhs.dims[dims.rhs_output_feature];
        let divides = |what: &'static str, count: i64, value: i64| {
            if value % count == 0 {
                Ok(())
            } else {
                Err(HloErrorKind::ShapeMismatch {
                    what: format!("{what} (a multiple of the group count {count})"),
                    expected: vec![count * (value / count + 1)],
                    found: vec![value],
                })
            }
        };
        divides("the lhs features", groups, features)?;
        divides("the lhs batch", batch_groups, batch)?;
        divides("the rhs output features", groups, out_features)?;
        divides("the rhs output features", batch_groups, out_features)?;
        let mut rhs_expected = rhs.dims.clone();
        rhs_expected[dims.rhs_input_feature] = features / groups;
        let mut expected = vec![0; n + 2];
        expected[dims.output_batch] = batch / batch_groups;
        expected[dims.output_feature] = out_features;
        for (k, w) in window.iter().enumerate() {
            positive_window(k, w)?;
            rhs_expected[dims.rhs_spatial[k]] = w.size;
            expected[dims.output_spatial[k]] =
                window_output_size(lhs.dims[dims.lhs_spatial[k]], w).ok_or(HloErrorKind::Overflow)?;
        }
        same_dims(&self.operand_what(1), &rhs_expected, &rhs.dims)?;
        same_dims("the result", &expected, &result.dims)
    }

    /// XLA's shape rules for a gather: the attributes name distinct dimensions in range, the
    /// index vectors have one component per `start_index_map` entry, every slice fits and is
    /// 1 wide where collapsed or batching, and the result is the batch dimensions with the
    /// window dimensions at `offset_dims`.
    fn gather(&self, dims: &GatherDimensions) -> Check {
        self.count(2)?;
        let (operand, indices, result) = (self.operand(0)?, self.operand(1)?, self.result()?);
        if dims.index_vector_dim > indices.rank() {
            return Err(HloErrorKind::DimensionOutOfRange {
                attribute: "index_vector_dim",
                dimension: dims.index_vector_dim,
                rank: indices.rank() + 1,
            });
        }
        let vector = indices.dims.get(dims.index_vector_dim).copied().unwrap_or(1);
        length(
            "start_index_map (one per index vector component)",
            to_usize(vector),
            dims.start_index_map.len(),
        )?;
        dims_in_range("start_index_map", &dims.start_index_map, operand.rank())?;
        length("slice_sizes", operand.rank(), dims.slice_sizes.len())?;
        let mut one_wide = dims.collapsed_slice_dims.clone();
        one_wide.extend(&dims.operand_batching_dims);
        dims_in_range("collapsed_slice_dims and operand_batching_dims", &one_wide, operand.rank())?;
        length(
            "start_indices_batching_dims",
            dims.operand_batching_dims.len(),
            dims.start_indices_batching_dims.len(),
        )?;
        let mut index_dims = dims.start_indices_batching_dims.clone();
        index_dims.push(dims.index_vector_dim);
        dims_in_range("start_indices_batching_dims and index_vector_dim", &index_dims, indices.rank() + 1)?;
        for (&o, &i) in dims.operand_batching_dims.iter().zip(&dims.start_indices_batching_dims) {
            let index_size = indices.dims.get(i..=i).unwrap_or_default();
            same_dims("an operand batching dimension", index_size, &operand.dims[o..=o])?;
        }
        for (dimension, (&size, &bound)) in dims.slice_sizes.iter().zip(&operand.dims).enumerate() {
            let limit = if one_wide.contains(&dimension) { bound.min(1) } else { bound };
            if size < 0 || size > limit {
                return Err(HloErrorKind::SliceOutOfBounds { dimension, start: 0, limit: size, size: limit });
            }
        }
        let batch: Vec<i64> =
            (0..indices.rank()).filter(|&k| k != dims.index_vector_dim).map(|k| indices.dims[k]).collect();
        let window: Vec<i64> =
            (0..operand.rank()).filter(|k| !one_wide.contains(k)).map(|k| dims.slice_sizes[k]).collect();
        length("offset_dims (one per window dimension)", window.len(), dims.offset_dims.len())?;
        let rank = batch.len() + window.len();
        dims_in_range("offset_dims", &dims.offset_dims, rank)?;
        if dims.offset_dims.windows(2).any(|w| w[0] > w[1]) {
            return Err(HloErrorKind::ShapeMismatch {
                what: "offset_dims (in ascending order)".into(),
                expected: dims.offset_dims.iter().map(|&d| to_i64(d)).collect(),
                found: dims.offset_dims.iter().map(|&d| to_i64(d)).collect(),
            });
        }
        let (mut batch_sizes, mut window_sizes) = (batch.iter(), window.iter());
        let expected: Vec<i64> = (0..rank)
            .map(|k| {
                let sizes = if dims.offset_dims.contains(&k) { &mut window_sizes } else { &mut batch_sizes };
                sizes.next().copied().unwrap_or(0)
            })
            .collect();
        same_dims("the result", &expected, &result.dims)
    }

    fn dynamic_update_slice(&self) -> Check {
        let (operand, result) = (self.operand(0)?, self.result()?);
        let update = self.operand(1)?;
        self.offsets(2, operand.rank())?;
        length("the update's dimensions", operand.rank(), update.rank())?;
        for (dimension, (&size, &bound)) in update.dims.iter().zip(&operand.dims).enumerate() {
            if size > bound {
                return Err(HloErrorKind::SliceOutOfBounds { dimension, start: 0, limit: size, size: bound });
            }
        }
        same_dims("the result", &operand.dims, &result.dims)
    }

    fn broadcast(&self, dimensions: &[usize]) -> Check {
        self.count(1)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        length("dimensions", operand.rank(), dimensions.len())?;
        dims_in_range("dimensions", dimensions, result.rank())?;
        let expected: Vec<i64> = dimensions.iter().map(|&d| result.dims[d]).collect();
        same_dims(&self.operand_what(0), &expected, &operand.dims)
    }

    fn transpose(&self, dimensions: &[usize]) -> Check {
        self.count(1)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        if !is_permutation(dimensions, operand.rank()) {
            return Err(HloErrorKind::NotAPermutation {
                dimensions: dimensions.to_vec(),
                rank: operand.rank(),
            });
        }
        let expected: Vec<i64> = dimensions.iter().map(|&d| operand.dims[d]).collect();
        same_dims("the result", &expected, &result.dims)
    }

    fn reverse(&self, dimensions: &[usize]) -> Check {
        self.count(1)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        dims_in_range("dimensions", dimensions, operand.rank())?;
        same_dims("the result", &operand.dims, &result.dims)
    }

    fn reduce(&self, dimensions: &[usize]) -> Check {
        let (n, input) = self.variadic_inputs()?;
        dims_in_range("dimensions", dimensions, input.rank())?;
        let kept: Vec<i64> =
            (0..input.rank()).filter(|d| !dimensions.contains(d)).map(|d| input.dims[d]).collect();
        self.results_all(n, &kept)
    }

    fn slice(&self, dims: &[SliceDim]) -> Check {
        self.count(1)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        length("slice", operand.rank(), dims.len())?;
        let mut expected = Vec::with_capacity(dims.len());
        for (dimension, (s, &size)) in dims.iter().zip(&operand.dims).enumerate() {
            if s.stride < 1 {
                return Err(HloErrorKind::NotPositive { attribute: "stride", dimension, value: s.stride });
            }
            if s.start < 0 || s.start > s.limit || s.limit > size {
                return Err(HloErrorKind::SliceOutOfBounds {
                    dimension,
                    start: s.start,
                    limit: s.limit,
                    size,
                });
            }
            // ceil((limit - start) / stride) without overflow: both are non-negative here.
            let span = s.limit - s.start;
            expected.push(span / s.stride + i64::from(span % s.stride != 0));
        }
        same_dims("the result", &expected, &result.dims)
    }

    fn reshape(&self) -> Check {
        self.count(1)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        let (a, b) = (volume(operand), volume(result));
        if a != b {
            return Err(HloErrorKind::ElementCountMismatch { operand: a, result: b });
        }
        Ok(())
    }

    fn concatenate(&self, dimension: usize) -> Check {
        if self.operands.is_empty() {
            return Err(self.count_error("at least 1".into()));
        }
        let first = self.operand(0)?;
        dims_in_range("dimensions", &[dimension], first.rank())?;
        let mut expected = first.dims.clone();
        for position in 1..self.operands.len() {
            let operand = self.operand(position)?;
            let mut same = first.dims.clone();
            if let Some(size) = operand.dims.get(dimension) {
                same[dimension] = *size;
            }
            same_dims(&self.operand_what(position), &same, &operand.dims)?;
            expected[dimension] =
                expected[dimension].checked_add(operand.dims[dimension]).ok_or(HloErrorKind::Overflow)?;
        }
        same_dims("the result", &expected, &self.result()?.dims)
    }

    fn dot(&self, dims: &DotDimensions) -> Check {
        self.count(2)?;
        let (lhs, rhs, result) = (self.operand(0)?, self.operand(1)?, self.result()?);
        length("rhs_batch_dims", dims.lhs_batch.len(), dims.rhs_batch.len())?;
        length("rhs_contracting_dims", dims.lhs_contracting.len(), dims.rhs_contracting.len())?;
        let lhs_used: Vec<usize> = dims.lhs_batch.iter().chain(&dims.lhs_contracting).copied().collect();
        let rhs_used: Vec<usize> = dims.rhs_batch.iter().chain(&dims.rhs_contracting).copied().collect();
        dims_in_range("lhs_batch_dims and lhs_contracting_dims", &lhs_used, lhs.rank())?;
        dims_in_range("rhs_batch_dims and rhs_contracting_dims", &rhs_used, rhs.rank())?;
        let pairs = [
            ("batch", &dims.lhs_batch, &dims.rhs_batch),
            ("contracting", &dims.lhs_contracting, &dims.rhs_contracting),
        ];
        for (kind, lhs_dims, rhs_dims) in pairs {
            for (&l, &r) in lhs_dims.iter().zip(rhs_dims) {
                if lhs.dims[l] != rhs.dims[r] {
                    return Err(HloErrorKind::DotSizeMismatch {
                        kind,
                        lhs_dim: l,
                        rhs_dim: r,
                        lhs_size: lhs.dims[l],
                        rhs_size: rhs.dims[r],
                    });
                }
            }
        }
        let mut expected: Vec<i64> = dims.lhs_batch.iter().map(|&d| lhs.dims[d]).collect();
        expected.extend((0..lhs.rank()).filter(|d| !lhs_used.contains(d)).map(|d| lhs.dims[d]));
        expected.extend((0..rhs.rank()).filter(|d| !rhs_used.contains(d)).map(|d| rhs.dims[d]));
        same_dims("the result", &expected, &result.dims)
    }

    fn pad(&self, dims: &[PadDim]) -> Check {
        self.count(2)?;
        let (operand, result) = (self.operand(0)?, self.result()?);
        self.scalar(1)?;
        length("padding", operand.rank(), dims.len())?;
        let mut expected = Vec::with_capacity(dims.len());
        for (dimension, (p, &size)) in dims.iter().zip(&operand.dims).enumerate() {
            if p.interior < 0 {
                return Err(HloErrorKind::NegativeInterior { dimension, interior: p.interior });
            }
            expected.push(padded_size(size, p.low, p.high, p.interior).ok_or(HloErrorKind::Overflow)?);
        }
        same_dims("the result", &expected, &result.dims)
    }

    fn reduce_window(&self, window: &[WindowDim]) -> Check {
        let (n, input) = self.variadic_inputs()?;
        length("window", input.rank(), window.len())?;
        let mut expected = Vec::with_capacity(window.len());
        for (dimension, (w, &size)) in window.iter().zip(&input.dims).enumerate() {
            positive_window(dimension, w)?;
            expected.push(window_output_size(size, w).ok_or(HloErrorKind::Overflow)?);
        }
        self.results_all(n, &expected)
    }

    fn fusion(&self, calls: ComputationId) -> Check {
        let callee = &self.computations[calls.0];
        let parameters = callee.parameters();
        if parameters.len() != self.operands.len() {
            return Err(HloErrorKind::FusionParameterCount {
                operands: self.operands.len(),
                parameters: parameters.len(),
            });
        }
        for (position, (param, operand)) in parameters.iter().zip(&self.operands).enumerate() {
            let param_shape = &callee.instructions[param.0].shape;
            same_shape(&self.operand_what(position), param_shape, &operand.shape)?;
        }
        let root = &callee.instructions[callee.root.0].shape;
        same_shape("the result", root, &self.instr.shape)
    }

    /// A constant's literal, when it has one, has the result's dims and element type.
    fn constant(&self, literal: Option<&super::Literal>) -> Check {
        self.count(0)?;
        let Some(literal) = literal else { return Ok(()) };
        let result = self.result()?;
        same_dims("the literal", &result.dims, literal.dims())?;
        if literal.element_type() != result.element_type {
            return Err(HloErrorKind::ElementType {
                what: "the literal".into(),
                expected: format!("element type {}", result.element_type),
                found: literal.element_type(),
            });
        }
        Ok(())
    }

    fn tuple(&self) -> Check {
        let HloShape::Tuple(elements) = &self.instr.shape else {
            return Err(HloErrorKind::ExpectedTuple { what: "the result".into() });
        };
        self.count(elements.len())?;
        for (position, element) in elements.iter().enumerate() {
            same_dims(&format!("result element {position}"), &self.operand(position)?.dims, &element.dims)?;
        }
        Ok(())
    }

    fn get_tuple_element(&self, index: usize) -> Check {
        self.count(1)?;
        let HloShape::Tuple(elements) = &self.operands[0].shape else {
            return Err(HloErrorKind::ExpectedTuple { what: self.operand_what(0) });
        };
        let element =
            elements.get(index).ok_or(HloErrorKind::TupleIndexOutOfRange { index, size: elements.len() })?;
        same_dims("the result", &element.dims, &self.result()?.dims)
    }
}

/// The size of one padded dimension: `low + high + size + (size - 1) * interior` (`low + high`
/// for an empty dimension).
pub(crate) fn padded_size(size: i64, low: i64, high: i64, interior: i64) -> Option<i64> {
    let body = if size == 0 { 0 } else { size.checked_sub(1)?.checked_mul(interior)?.checked_add(size)? };
    body.checked_add(low)?.checked_add(high)
}

/// The number of windows along one dimension of a reduce-window's input of `size` elements.
pub(crate) fn window_output_size(size: i64, w: &WindowDim) -> Option<i64> {
    let padded = padded_size(size, w.pad_low, w.pad_high, w.base_dilation - 1)?;
    let span = (w.size - 1).checked_mul(w.window_dilation)?.checked_add(1)?;
    if padded < span { Some(0) } else { Some((padded - span) / w.stride + 1) }
}

fn to_usize(value: i64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

fn to_i64(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn length(attribute: &'static str, expected: usize, found: usize) -> Check {
    if expected == found { Ok(()) } else { Err(HloErrorKind::AttributeLength { attribute, expected, found }) }
}

/// Checks that window dimension `dimension` has a size, stride and dilations of at least 1.
fn positive_window(dimension: usize, w: &WindowDim) -> Check {
    for (attribute, value) in [
        ("window size", w.size),
        ("window stride", w.stride),
        ("window dilation", w.window_dilation),
        ("base dilation", w.base_dilation),
    ] {
        if value < 1 {
            return Err(HloErrorKind::NotPositive { attribute, dimension, value });
        }
    }
    Ok(())
}

fn dims_in_range(attribute: &'static str, dims: &[usize], rank: usize) -> Check {
    let mut seen = vec![false; rank];
    for &dimension in dims {
        if dimension >= rank {
            return Err(HloErrorKind::DimensionOutOfRange { attribute, dimension, rank });
        }
        if std::mem::replace(&mut seen[dimension], true) {
            return Err(HloErrorKind::RepeatedDimension { attribute, dimension });
        }
    }
    Ok(())
}

fn same_dims(what: &str, expected: &[i64], found: &[i64]) -> Check {
    if expected == found {
        Ok(())
    } else {
        Err(HloErrorKind::ShapeMismatch {
            what: what.to_string(),
            expected: expected.to_vec(),
            found: found.to_vec(),
        })
    }
}

fn same_shape(what: &str, expected: &HloShape, found: &HloShape) -> Check {
    match (expected, found) {
        (HloShape::Array(a), HloShape::Array(b)) => same_dims(what, &a.dims, &b.dims),
        (HloShape::Tuple(a), HloShape::Tuple(b)) => {
            length("tuple elements", a.len(), b.len())?;
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_dims(&format!("{what} element {i}"), &x.dims, &y.dims)?;
            }
            Ok(())
        }
        (HloShape::Array(_), HloShape::Tuple(_)) => {
            Err(HloErrorKind::ExpectedArray { what: what.to_string() })
        }
        (HloShape::Tuple(_), HloShape::Array(_)) => {
            Err(HloErrorKind::ExpectedTuple { what: what.to_string() })
        }
    }
}
