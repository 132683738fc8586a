//! Validation and canonical form of specs.
//!
//! ```text
//! valid:      iteration rank fits the kind; one operand per kind slot, each of the derived shape;
//!             dtypes fit the operator's rule (`PrimitiveKind::check_dtypes`), and an integer
//!             sum of products cannot wrap (`exact_reduction_limit`); levels exist; a vector size exactly on vector-register levels, whose
//!             bytes are a vector width of the level and which divides the volume; layouts valid.
//! canonical:  every layout canonical for its shape with its contiguity (LayoutView::from_parts);
//!             scalar-register operands row-major and fully contiguous (registers have no layout);
//!             serial_only = true when some operand lives at a level from which no level that
//!             parallel loops may split is reachable (a parallel loop needs all operands there).
//! ```

use super::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use crate::dtype::Dtype;
use crate::layout::{Layout, LayoutError, LayoutView};
use crate::shape::ShapeError;
use crate::target::{LevelKind, Target};

/// Why a spec is invalid (the user's spec, or a bug in a rewrite that built it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The iteration shape has the wrong rank for the kind.
    #[error("{kind} needs an iteration shape of rank {expected}, found rank {found}")]
    WrongRank {
        /// The kind's name.
        kind: &'static str,
        /// The rank it needs.
        expected: usize,
        /// The rank given.
        found: usize,
    },
    /// The wrong number of operands.
    #[error("{kind} takes {expected} operands, found {found}")]
    OperandCount {
        /// The kind's name.
        kind: &'static str,
        /// The count it needs.
        expected: usize,
        /// The count given.
        found: usize,
    },
    /// An operand's shape is not the one the iteration shape implies.
    #[error("operand {operand} must have shape {expected}, found {found}")]
    ShapeMismatch {
        /// Which operand.
        operand: usize,
        /// The derived shape.
        expected: String,
        /// The shape given.
        found: String,
    },
    /// A derived operand shape is invalid (too large).
    #[error("operand {operand}: {source}")]
    OperandShape {
        /// Which operand.
        operand: usize,
        /// Why.
        source: ShapeError,
    },
    /// Operand dtypes do not fit together.
    #[error("{0}")]
    Dtypes(String),
    /// A level id that the target does not have.
    #[error("operand {operand} names level #{level}, which the target does not have")]
    UnknownLevel {
        /// Which operand.
        operand: usize,
        /// The level id.
        level: u8,
    },
    /// A vector-size rule is broken.
    #[error("operand {operand}: {message}")]
    VectorSize {
        /// Which operand.
        operand: usize,
        /// Which rule and why.
        message: String,
    },
    /// A sliding-window operand dim (a convolution's image rows) is tiled but packed.
    #[error("operand {operand}: a sliding window can only be tiled along a dim with one plain physical dim")]
    SlidingTile {
        /// Which operand.
        operand: usize,
    },
    /// A padded convolution tiled along a spatial dim (split it into regions first).
    #[error("a padded convolution is tiled only along b, f and c (split it into unpadded regions first)")]
    PaddedTile,
    /// A convolution cannot be read as the matmul it is (see `CanonicalSpec::as_matmul`).
    #[error("a convolution cannot be computed as a matmul here: {0}")]
    Lowering(&'static str),
    /// A layout does not fit its operand.
    #[error("operand {operand}: {source}")]
    Layout {
        /// Which operand.
        operand: usize,
        /// Why.
        source: LayoutError,
    },
}

impl LogicalSpec {
    /// Validates the spec for `target` and puts it in canonical form.
    ///
    /// # Errors
    /// [`SpecError`] naming the first broken rule.
    pub fn canonicalize(&self, target: &Target) -> Result<CanonicalSpec, SpecError> {
        let kind = self.kind;
        if self.operands.len() != kind.operand_count() {
            return Err(SpecError::OperandCount {
                kind: kind.name(),
                expected: kind.operand_count(),
                found: self.operands.len(),
            });
        }
        let shapes = kind.operand_shapes(&self.shape)?;
        check_dtypes(kind, &self.operands)?;
        let dtypes: Vec<Dtype> = self.operands.iter().map(|o| o.dtype).collect();
        crate::operators::check_exact_reduction(kind, &self.shape, &dtypes).map_err(SpecError::Dtypes)?;
        let mut operands = Vec::with_capacity(self.operands.len());
        for (i, (operand, shape)) in self.operands.iter().zip(&shapes).enumerate() {
            if operand.shape != *shape {
                return Err(SpecError::ShapeMismatch {
                    operand: i,
                    expected: shape.to_string(),
                    found: operand.shape.to_string(),
                });
            }
            operands.push(canonical_operand(i, operand, target)?);
        }
        // A parallel loop needs every operand at a level it may split; operands never move to
        // slower levels, so once one operand cannot reach such a level no parallel loop can appear.
        Ok(assemble(kind, self.shape.clone(), operands, self.serial_only, target))
    }
}

/// A canonical spec from operands that are already valid and canonical: only `serial_only` is
/// normalised. The fast path of rewrites that change one operand or take tiles of canonical ones.
pub(super) fn assemble(
    kind: PrimitiveKind,
    shape: crate::shape::Shape,
    operands: Vec<TensorSpec>,
    serial_only: bool,
    target: &Target,
) -> CanonicalSpec {
    let parallelisable = operands.iter().all(|o| target.can_reach_parallel(o.level));
    CanonicalSpec(LogicalSpec { kind, shape, operands, serial_only: serial_only || !parallelisable })
}

fn check_dtypes(kind: PrimitiveKind, operands: &[TensorSpec]) -> Result<(), SpecError> {
    let dtypes: Vec<Dtype> = operands.iter().map(|o| o.dtype).collect();
    kind.check_dtypes(&dtypes).map_err(SpecError::Dtypes)
}

pub(super) fn canonical_operand(
    i: usize,
    operand: &TensorSpec,
    target: &Target,
) -> Result<TensorSpec, SpecError> {
    let Some(level) = target.levels().get(operand.level.index()) else {
        return Err(SpecError::UnknownLevel { operand: i, level: operand.level.0 });
    };
    let vector_error = |message: String| SpecError::VectorSize { operand: i, message };
    match (level.kind, operand.vector_size) {
        (LevelKind::VectorRegisters, None) => {
            return Err(vector_error(format!(
                "a tensor in {} needs a vector size (such as v{})",
                level.name,
                level.vector_bytes.last().copied().unwrap_or(32) / operand.dtype.size_bytes()
            )));
        }
        (LevelKind::VectorRegisters, Some(v)) => {
            let bytes = u64::from(v) * u64::from(operand.dtype.size_bytes());
            if !level.vector_bytes.iter().any(|&w| u64::from(w) == bytes) {
                let widths: Vec<String> = level
                    .vector_bytes
                    .iter()
                    .filter(|&&w| w % operand.dtype.size_bytes() == 0)
                    .map(|&w| format!("v{}", w / operand.dtype.size_bytes()))
                    .collect();
                return Err(vector_error(format!(
                    "v{v} of {} is {bytes} bytes, not a vector width of {} (use {})",
                    operand.dtype,
                    level.name,
                    widths.join(", ")
                )));
            }
            if operand.shape.volume() % u64::from(v) != 0 {
                return Err(vector_error(format!(
                    "shape {} ({} elements) is not a whole number of v{v} vectors",
                    operand.shape,
                    operand.shape.volume()
                )));
            }
        }
        (_, Some(v)) => {
            return Err(vector_error(format!(
                "v{v} is a vector size, but {} does not hold vector registers",
                level.name
            )));
        }
        (_, None) => {}
    }
    let view = if level.kind == LevelKind::ScalarRegisters {
        // Registers hold scalars one by one: the layout carries no information.
        LayoutView::dense(&Layout::row_major(operand.shape.rank() as u8), &operand.shape)
    } else {
        LayoutView::from_parts(&operand.layout, operand.contiguous_dims, &operand.shape)
    }
    .map_err(|source| SpecError::Layout { operand: i, source })?;
    let mut out = TensorSpec {
        shape: operand.shape.clone(),
        dtype: operand.dtype,
        level: operand.level,
        layout: view.layout,
        contiguous_dims: view.contiguous_dims,
        vector_size: operand.vector_size,
        pitch: None,
    };
    out.pitch = canonical_pitch(&out, operand.pitch.map(u64::from), target);
    Ok(out)
}

/// The canonical class of a tensor's pitch (`pitch` in elements, as the layout walk found it):
/// `None` where it cannot change a cost (see [`TensorSpec::pitch`]), else the pitch modulo the
/// target's set period in elements. A tensor with no more lines than the fewest ways of any cache
/// fits every cache wherever its lines fall, and so does every tile of it.
pub(crate) fn canonical_pitch(t: &TensorSpec, pitch: Option<u64>, target: &Target) -> Option<u32> {
    let pitch = pitch?;
    let period = target.set_period_bytes()? / u64::from(t.dtype.size_bytes());
    let kind = target.level(t.level).kind;
    if t.is_fully_contiguous() || kind.counts_registers() || period == 0 {
        return None;
    }
    if t.cache_lines(target.cache_line_bytes()) <= u64::from(target.min_ways()?) {
        return None;
    }
    let class = u32::try_from(pitch % period).ok()?;
    (!crate::cost::pitch_cannot_matter(t, class, target)).then_some(class)
}
