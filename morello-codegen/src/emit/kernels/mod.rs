//! Kernel emitters: one file per kernel of the catalogue, each writing the C statements that
//! compute exactly the kernel's spec on its operand views.
//!
//! Every emitter checks the facts its C relies on rather than trusting them: that the lanes of
//! a vector are consecutive in memory, that a register tile is made of whole registers, that a
//! dot product's operands are contiguous runs in `k` order. A fact that does not hold is an
//! [`CodegenError::Unsupported`] error, never wrong code.

use std::collections::BTreeMap;

use morello_core::dtype::Dtype;
use morello_core::expr::{IndexExpr, Interval, Var};
use morello_core::interp::{Value, round_bf16};
use morello_core::kernels::KernelKind;
use morello_core::shape::Shape;
use morello_core::spec::LogicalSpec;

use super::Emitter;
use super::buffers::View;
use crate::error::CodegenError;

/// Declares the emitters from the catalogue's list ([`morello_core::kernel_catalogue!`]): for each
/// `Kernel = ordinal => module { facts }`, the module (`kernels/<module>.rs`, with `emit(e, spec, views)`) and its arm
/// of [`emit`]. A kernel of the catalogue without its emitter file does not compile.
macro_rules! emitters {
    ($($kind:ident = $ordinal:literal => $module:ident { $($facts:tt)* },)+) => {
        $(mod $module;)+

        /// Emits one kernel.
        pub(super) fn emit(
            e: &mut Emitter<'_>,
            kernel: KernelKind,
            spec: &LogicalSpec,
            views: &[View],
        ) -> Result<(), CodegenError> {
            match kernel {
                $(KernelKind::$kind => $module::emit(e, spec, views),)+
            }
        }
    };
}

morello_core::kernel_catalogue!(emitters);

fn unsupported(kernel: KernelKind, spec: &LogicalSpec, e: &Emitter<'_>, why: &str) -> CodegenError {
    CodegenError::Unsupported { reason: format!("{kernel} on {}: {why}", spec.display(e.target)) }
}

/// The point of operand `operand` for an iteration point of the spec.
fn project(spec: &LogicalSpec, operand: usize, point: &[u32]) -> Vec<u32> {
    spec.kind.operand_dims(point.len())[operand].iter().map(|d| d.origin(point)).collect()
}

/// The origin point (all zeros) of an operand.
fn zeros(spec: &LogicalSpec, operand: usize) -> Vec<u32> {
    vec![0; spec.operands[operand].shape.rank()]
}

/// A vector register a tile covers, with the tile's point at each of its lanes.
#[derive(Debug, Clone)]
struct Register {
    /// The register's number in its buffer.
    index: u64,
    /// The point at lane `j`, for every lane.
    points: Vec<Vec<u32>>,
}

/// The vector registers a register view's points `shape` cover, in order of first appearance,
/// each with the point at every lane.
///
/// # Errors
/// [`CodegenError::Unsupported`] if some register is only partly covered.
fn whole_registers(e: &Emitter<'_>, view: &View, shape: &Shape) -> Result<Vec<Register>, CodegenError> {
    let lanes = u64::from(e.vector_type(view)?.lanes);
    let mut order = Vec::new();
    let mut seen: BTreeMap<u64, Vec<Option<Vec<u32>>>> = BTreeMap::new();
    for point in shape.points() {
        let lane = e.lane(view, &point)?;
        let slots = seen.entry(lane.register).or_insert_with(|| {
            order.push(lane.register);
            vec![None; lanes as usize]
        });
        slots[lane.lane as usize] = Some(point);
    }
    order
        .into_iter()
        .map(|register| {
            let slots = seen.remove(&register).unwrap_or_default();
            let points: Option<Vec<Vec<u32>>> = slots.into_iter().collect();
            points.map(|points| Register { index: register, points }).ok_or_else(|| {
                CodegenError::Unsupported {
                    reason: format!("a tile covers only part of vector register {register}"),
                }
            })
        })
        .collect()
}

/// The offset of the first of `points` in a memory view, after checking that point `j` is at
/// that offset plus `j` (the points are one contiguous run, in order).
fn consecutive(e: &Emitter<'_>, view: &View, points: &[Vec<u32>]) -> Result<IndexExpr, CodegenError> {
    let first = e.offset_at(view, &points[0])?;
    for (j, point) in points.iter().enumerate().skip(1) {
        let offset = e.offset_at(view, point)?;
        let gap = offset.sub(&first).and_then(|d| d.simplify(&e.env)).map_err(arithmetic)?;
        if gap.as_constant() != Some(j as i64) {
            return Err(CodegenError::Unsupported {
                reason: format!("elements expected consecutive are at offsets {first} and {offset}"),
            });
        }
    }
    Ok(first)
}

/// The offset where a run of `len` elements along operand dim `dim` starts, after checking that
/// element `k` of the run is at that offset plus `k`.
fn run_start(
    e: &Emitter<'_>,
    view: &View,
    rank: usize,
    dim: usize,
    len: u32,
) -> Result<IndexExpr, CodegenError> {
    let mut point = vec![IndexExpr::constant(0); rank];
    let start = e.offset(view, &point)?;
    // Symbolically: offset(k) - offset(0) == k for k in [0, len - 1].
    let mut env = e.env.clone();
    env.set(Var::Dim(0), Interval::new(0, i64::from(len) - 1));
    point[dim] = IndexExpr::dim(0);
    let symbolic = e
        .offset_in(view, &point, &env)
        .and_then(|o| o.sub(&start).and_then(|d| d.simplify(&env)).map_err(arithmetic));
    if symbolic.is_ok_and(|gap| gap == IndexExpr::dim(0)) {
        return Ok(start);
    }
    // Otherwise element by element.
    let mut points: Vec<Vec<u32>> = Vec::with_capacity(len as usize);
    for k in 0..len {
        let mut p = vec![0; rank];
        p[dim] = k;
        points.push(p);
    }
    consecutive(e, view, &points)
}

fn arithmetic(e: morello_core::expr::ExprError) -> CodegenError {
    CodegenError::Internal { reason: format!("index arithmetic: {e}") }
}

/// A C literal of a dtype for an interpreter value (fill values).
fn literal(e: &mut Emitter<'_>, value: Value, dtype: Dtype) -> String {
    match (value, dtype) {
        (Value::Float(x), Dtype::Bf16) => {
            let bits = round_bf16(x).to_bits() >> 16;
            format!("(uint16_t)0x{bits:04x}")
        }
        (Value::Float(x), _) if x.is_infinite() => {
            e.needs_math = true;
            if x < 0.0 { "-INFINITY".into() } else { "INFINITY".into() }
        }
        (Value::Float(x), _) => format!("{x:?}f"),
        (Value::Int(i), Dtype::I32) if i == i64::from(i32::MIN) => "INT32_MIN".into(),
        (Value::Int(i), Dtype::I16) if i == i64::from(i16::MIN) => "INT16_MIN".into(),
        (Value::Int(i), Dtype::I8) if i == i64::from(i8::MIN) => "INT8_MIN".into(),
        (Value::Int(i), d) if d.is_signed_int() => i.to_string(),
        (Value::Int(i), _) => format!("{i}u"),
    }
}
