//! The payload: every solved spec and its frontier, each piece of information stored once.
//!
//! What can differ between specs without changing what is stored is factored out:
//!
//! ```text
//! family     kind, serial_only, and per operand dtype, level, layout, contiguity, vector size:
//!            everything but the iteration shape, stored once for all specs that share it
//! shape      per spec, its iteration shape only: operand shapes follow from it and the kind
//! frontier   each distinct frontier once (frontiers do not depend on memory limits, and many
//!            specs share one, for example every spec nothing can implement); a spec refers to
//!            it as "the next new frontier" (0) or by how far back it was first stored
//! ```
//!
//! Columns are stored one after another (all family sizes, then all dims, then all frontier
//! references, then each entry field), so that zstd sees runs of similar small integers. Costs
//! are the first cost of a frontier then increases (frontiers are sorted by cost); peaks are one
//! byte per level, level by level. The target's description (as in a target file) comes first, so
//! a table can be inspected, verified and merged without naming its target.

use std::collections::HashMap;
use std::sync::Arc;

use bincode::Options;
use morello_core::dtype::Dtype;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, LogicalSpec, PrimitiveKind, TensorSpec};
use morello_core::target::LevelId;
use serde::{Deserialize, Serialize};

use crate::db::format::bincode_options;
use crate::frontier::{Entry, Frontier};
use crate::peaks::Peaks;

/// Everything about a spec except its iteration shape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct Family {
    /// The computation.
    pub kind: PrimitiveKind,
    /// The rank of the iteration shape.
    pub rank: u8,
    /// Whether the spec must run on one thread.
    pub serial_only: bool,
    /// The operands without their shapes.
    pub operands: Vec<OperandFamily>,
}

/// An operand without its shape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct OperandFamily {
    /// The element type.
    pub dtype: Dtype,
    /// The memory level.
    pub level: LevelId,
    /// The layout.
    pub layout: Layout,
    /// Innermost contiguous physical dims.
    pub contiguous_dims: u8,
    /// Elements per vector register.
    pub vector_size: Option<u32>,
}

impl Family {
    fn of(spec: &LogicalSpec) -> Family {
        Family {
            kind: spec.kind,
            rank: spec.shape.rank() as u8,
            serial_only: spec.serial_only,
            operands: spec
                .operands
                .iter()
                .map(|o| OperandFamily {
                    dtype: o.dtype,
                    level: o.level,
                    layout: o.layout.clone(),
                    contiguous_dims: o.contiguous_dims,
                    vector_size: o.vector_size,
                })
                .collect(),
        }
    }

    /// The spec of this family with iteration shape `dims`.
    ///
    /// # Errors
    /// A message if the dims do not make a valid shape for the kind (a damaged payload).
    pub fn spec(&self, dims: &[u32]) -> Result<LogicalSpec, String> {
        let shape = Shape::from_slice(dims).map_err(|e| format!("shape {dims:?}: {e}"))?;
        let shapes =
            self.kind.operand_shapes(&shape).map_err(|e| format!("{} {shape}: {e}", self.kind.name()))?;
        if shapes.len() != self.operands.len() {
            return Err(format!(
                "{} takes {} operands, the family has {}",
                self.kind.name(),
                shapes.len(),
                self.operands.len()
            ));
        }
        let operands = self
            .operands
            .iter()
            .zip(shapes)
            .map(|(o, shape)| TensorSpec {
                shape,
                dtype: o.dtype,
                level: o.level,
                layout: o.layout.clone(),
                contiguous_dims: o.contiguous_dims,
                vector_size: o.vector_size,
            })
            .collect();
        Ok(LogicalSpec { kind: self.kind, shape, operands, serial_only: self.serial_only })
    }
}

/// The stored columns (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Payload {
    /// The target's description as JSON (a target file), so that a table describes itself.
    pub target: String,
    /// Bytes of peaks per entry (the target's level count).
    pub levels: u8,
    /// Spec families, sorted.
    pub families: Vec<Family>,
    /// Specs per family, in family order; specs are grouped by family and sorted by shape.
    pub family_sizes: Vec<u32>,
    /// Iteration shapes, concatenated (a family's specs all have its rank).
    pub dims: Vec<u32>,
    /// Per spec: 0 for the next new frontier, else how many frontiers back its frontier is.
    pub frontier_refs: Vec<u32>,
    /// Entries per distinct frontier.
    pub frontier_sizes: Vec<u32>,
    /// Per entry: the cost, or for all but a frontier's first entry the increase over the previous.
    pub costs: Vec<u64>,
    /// Per level, per entry: the peak code (`levels` columns of one byte per entry).
    pub peaks: Vec<u8>,
    /// Per entry: the depth.
    pub depths: Vec<u32>,
    /// Per entry: the action index.
    pub actions: Vec<u16>,
}

/// One stored spec: its family, iteration dims and frontier, as indices into the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoredSpec<'a> {
    /// Index into the families.
    pub family: usize,
    /// The iteration shape.
    pub dims: &'a [u32],
    /// Index into the distinct frontiers.
    pub frontier: usize,
}

/// Counts of a payload, for the metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub specs: u64,
    pub frontiers: u64,
    pub families: u64,
}

impl Payload {
    /// Encodes `entries` (any order; each spec once) for a target (its description as JSON) with
    /// `levels` levels.
    pub fn build(entries: &[(CanonicalSpec, Arc<Frontier>)], target: String, levels: usize) -> Payload {
        let mut grouped: Vec<(Family, &[u32], &Frontier)> =
            entries.iter().map(|(s, f)| (Family::of(s), s.shape.dims(), f.as_ref())).collect();
        grouped.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut p = Payload { target, levels: levels as u8, ..Payload::default() };
        let mut entry_peaks: Vec<Peaks> = Vec::new();
        let mut seen: HashMap<&[Entry], u32> = HashMap::new();
        for (family, dims, frontier) in &grouped {
            if p.families.last() != Some(family) {
                p.families.push(family.clone());
                p.family_sizes.push(0);
            }
            *p.family_sizes.last_mut().expect("a family was pushed") += 1;
            p.dims.extend_from_slice(dims);
            let next = seen.len() as u32;
            match seen.get(frontier.entries()) {
                Some(&id) => p.frontier_refs.push(next - id),
                None => {
                    seen.insert(frontier.entries(), next);
                    p.frontier_refs.push(0);
                    p.frontier_sizes.push(frontier.entries().len() as u32);
                    let mut previous = 0;
                    for (i, e) in frontier.entries().iter().enumerate() {
                        p.costs.push(if i == 0 { e.cost } else { e.cost.wrapping_sub(previous) });
                        previous = e.cost;
                        entry_peaks.push(e.peaks);
                        p.depths.push(e.depth);
                        p.actions.push(e.action);
                    }
                }
            }
        }
        p.peaks = (0..levels)
            .flat_map(|level| entry_peaks.iter().map(move |peaks| (peaks.0 >> (56 - 8 * level)) as u8))
            .collect();
        p
    }

    /// The counts for the metadata.
    pub fn counts(&self) -> Counts {
        Counts {
            specs: self.frontier_refs.len() as u64,
            frontiers: self.frontier_sizes.len() as u64,
            families: self.families.len() as u64,
        }
    }

    /// The payload's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        bincode_options(u64::MAX).serialize(self).expect("the payload serialises")
    }

    /// Decodes a payload (no validation beyond the encoding itself).
    ///
    /// # Errors
    /// bincode's message if the bytes are not a payload.
    pub fn from_bytes(bytes: &[u8]) -> Result<Payload, String> {
        bincode_options(bytes.len() as u64).deserialize(bytes).map_err(|e| e.to_string())
    }

    /// The distinct frontiers, in stored order.
    ///
    /// # Errors
    /// A message if the columns do not fit together.
    pub fn frontiers(&self) -> Result<Vec<Vec<Entry>>, String> {
        let n = self.costs.len();
        if self.depths.len() != n || self.actions.len() != n {
            return Err(format!(
                "entry columns differ in length ({} costs, {} depths, {} actions)",
                n,
                self.depths.len(),
                self.actions.len()
            ));
        }
        let levels = usize::from(self.levels);
        if levels > 8 || self.peaks.len() != n * levels {
            return Err(format!("{} peak bytes for {n} entries of {levels} levels", self.peaks.len()));
        }
        let total: u64 = self.frontier_sizes.iter().map(|&s| u64::from(s)).sum();
        if total != n as u64 {
            return Err(format!("frontier sizes add up to {total}, and there are {n} entries"));
        }
        let mut out = Vec::with_capacity(self.frontier_sizes.len());
        let mut at = 0usize;
        for &size in &self.frontier_sizes {
            let mut entries = Vec::with_capacity(size as usize);
            let mut cost = 0u64;
            for i in at..at + size as usize {
                cost = if i == at { self.costs[i] } else { cost.wrapping_add(self.costs[i]) };
                let peaks = (0..levels)
                    .fold(0u64, |acc, level| acc | u64::from(self.peaks[level * n + i]) << (56 - 8 * level));
                entries.push(Entry {
                    cost,
                    peaks: Peaks(peaks),
                    depth: self.depths[i],
                    action: self.actions[i],
                });
            }
            at += size as usize;
            out.push(entries);
        }
        Ok(out)
    }

    /// Every stored spec as its family, iteration dims and frontier index, in stored order.
    ///
    /// # Errors
    /// A message if the columns do not fit together.
    pub fn specs(&self) -> Result<Vec<StoredSpec<'_>>, String> {
        if self.family_sizes.len() != self.families.len() {
            return Err(format!(
                "{} family sizes for {} families",
                self.family_sizes.len(),
                self.families.len()
            ));
        }
        let specs: u64 = self.family_sizes.iter().map(|&s| u64::from(s)).sum();
        if specs != self.frontier_refs.len() as u64 {
            return Err(format!(
                "{specs} specs in families, {} frontier references",
                self.frontier_refs.len()
            ));
        }
        let mut out = Vec::with_capacity(self.frontier_refs.len());
        let mut dims_at = 0usize;
        let mut next_new = 0usize;
        let mut spec = 0usize;
        for (family_id, (family, &size)) in self.families.iter().zip(&self.family_sizes).enumerate() {
            let rank = usize::from(family.rank);
            for _ in 0..size {
                let Some(dims) = self.dims.get(dims_at..dims_at + rank) else {
                    return Err("fewer dims than the families need".into());
                };
                dims_at += rank;
                let back = self.frontier_refs[spec] as usize;
                let frontier = if back == 0 {
                    next_new += 1;
                    next_new - 1
                } else {
                    next_new.checked_sub(back).ok_or("a frontier reference points before the first")?
                };
                if frontier >= self.frontier_sizes.len() {
                    return Err("a frontier reference points past the last frontier".into());
                }
                out.push(StoredSpec { family: family_id, dims, frontier });
                spec += 1;
            }
        }
        if dims_at != self.dims.len() {
            return Err(format!("{} dims left over", self.dims.len() - dims_at));
        }
        if next_new != self.frontier_sizes.len() {
            return Err(format!("{} frontiers stored, {next_new} referenced", self.frontier_sizes.len()));
        }
        Ok(out)
    }
}
