//! Pareto sets on the grid of peak codes: exact frontiers of products and unions of frontiers in
//! time proportional to the grid, not to the pairs.
//!
//! The entries of some frontiers span a small lattice: per level, only a few distinct peak codes
//! occur (a dozen or so, for frontiers of a thousand entries). On that grid, the cheapest
//! combination of several children whose peaks fit inside a point `P` is separable, because
//! `max_i(p_i) <= P` holds exactly when every `p_i <= P`:
//!
//! ```text
//! best_i(P)   = min { (cost, depth) of an entry e of child i : e.peaks <= P }     (down-minimum)
//! R(P)        = (Σ_i w_i * best_i(P).cost,  max_i best_i(P).depth)
//! P is kept   <=> R(P) exists and, for every axis j with P_j above its lowest code,
//!                 R(P - e_j) does not exist or costs more than R(P)
//! ```
//!
//! `R` is monotone (a larger `P` admits more entries), so comparing with the neighbours below along
//! each axis is comparing with every point below. A kept point's cheapest combinations all have
//! peaks exactly `P` (one with smaller peaks would make a point below as cheap), so `R(P)` is the
//! frontier entry at `P`, with the smallest depth among those cheapest combinations: the same
//! entries as pairing every entry of every child and pruning (see `solve::combine_pairs`), in
//! `O(cells * (children + axes))` instead of the product of the frontiers' sizes.
//!
//! The union of several candidate lists (a spec's frontier from its actions' results) works the
//! same way with each cell's best-ranked candidate: it survives when every candidate strictly
//! below it costs more ([`union`]).

use crate::entry::Entry;
use crate::peaks::Peaks;

/// Levels in a [`Peaks`] (one byte each).
const LEVELS: usize = 8;

/// The lattice spanned by the peaks of some entries: per level, the distinct codes present.
#[derive(Debug)]
pub(crate) struct Grid {
    /// The levels with more than one code, slowest first.
    axes: Vec<Axis>,
    /// The code of every level with a single code (zero at the axes' levels).
    constant: u64,
    cells: usize,
}

/// One level of a [`Grid`] with several codes.
#[derive(Debug)]
struct Axis {
    /// The bit position of the level's byte in a [`Peaks`].
    shift: u32,
    /// The codes present, ascending.
    codes: Vec<u8>,
    /// The position of each code in `codes` (codes absent map to 0: never looked up).
    position: [u8; 256],
    /// Cells between neighbours along this axis.
    stride: usize,
}

impl Grid {
    /// The grid of `peaks`, or `None` if it would have more than `max_cells` cells.
    pub fn spanning(peaks: impl Iterator<Item = Peaks>, max_cells: usize) -> Option<Grid> {
        let mut present = [[0u64; 4]; LEVELS];
        for p in peaks {
            for (level, bits) in present.iter_mut().enumerate() {
                let code = byte(p.0, level);
                bits[usize::from(code >> 6)] |= 1 << (code & 63);
            }
        }
        let mut axes = Vec::new();
        let mut constant = 0u64;
        let mut cells = 1usize;
        for (level, bits) in present.iter().enumerate() {
            let codes: Vec<u8> =
                (0..=255u8).filter(|&c| bits[usize::from(c >> 6)] & (1 << (c & 63)) != 0).collect();
            let shift = shift(level);
            match codes.as_slice() {
                [] => {}
                [only] => constant |= u64::from(*only) << shift,
                _ => {
                    cells = cells.checked_mul(codes.len()).filter(|&c| c <= max_cells)?;
                    let mut position = [0u8; 256];
                    for (i, &c) in codes.iter().enumerate() {
                        position[usize::from(c)] = i as u8;
                    }
                    axes.push(Axis { shift, codes, position, stride: 0 });
                }
            }
        }
        // The last axis (fastest level) varies fastest.
        let mut stride = 1;
        for axis in axes.iter_mut().rev() {
            axis.stride = stride;
            stride *= axis.codes.len();
        }
        Some(Grid { axes, constant, cells })
    }

    /// The cell of `peaks`, whose codes must be among the grid's.
    fn cell(&self, peaks: Peaks) -> usize {
        self.axes
            .iter()
            .map(|a| usize::from(a.position[((peaks.0 >> a.shift) & 0xff) as usize]) * a.stride)
            .sum()
    }

    /// The peaks of a cell.
    fn peaks(&self, cell: usize) -> Peaks {
        let mut out = self.constant;
        for a in &self.axes {
            let i = (cell / a.stride) % a.codes.len();
            out |= u64::from(a.codes[i]) << a.shift;
        }
        Peaks(out)
    }

    /// Replaces every cell's value by the minimum over the cells at or below it.
    fn down_min<T: Copy + Ord>(&self, values: &mut [T]) {
        for a in &self.axes {
            let (stride, n) = (a.stride, a.codes.len());
            for block in (0..self.cells).step_by(stride * n) {
                for i in 1..n {
                    let row = block + i * stride;
                    for c in row..row + stride {
                        if values[c - stride] < values[c] {
                            values[c] = values[c - stride];
                        }
                    }
                }
            }
        }
    }

    /// Calls `f(cell, neighbours)` for every cell, where `neighbours` lists the cells one step
    /// below it along each axis (fewer on the grid's lower faces).
    fn for_each_cell(&self, mut f: impl FnMut(usize, &[usize])) {
        let mut position = vec![0usize; self.axes.len()];
        let mut below = Vec::with_capacity(self.axes.len());
        for cell in 0..self.cells {
            below.clear();
            below.extend(
                self.axes.iter().zip(&position).filter(|(_, p)| **p > 0).map(|(a, _)| cell - a.stride),
            );
            f(cell, &below);
            // Advance the odometer, fastest axis last.
            for (a, p) in self.axes.iter().zip(position.iter_mut()).rev() {
                *p += 1;
                if *p < a.codes.len() {
                    break;
                }
                *p = 0;
            }
        }
    }
}

/// The byte of `level` (level 0 is the most significant) in a packed peak vector.
fn byte(peaks: u64, level: usize) -> u8 {
    ((peaks >> shift(level)) & 0xff) as u8
}

fn shift(level: usize) -> u32 {
    8 * (LEVELS - 1 - level) as u32
}

/// A cheapest combination: its cost and the smallest depth among the cheapest. `NONE` marks cells
/// no combination fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Best {
    cost: u64,
    depth: u32,
}

const NONE: Best = Best { cost: u64::MAX, depth: u32::MAX };

/// A combination of one entry of each of some children: the summed weighted cost, the peaks and
/// the depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Partial {
    /// `Σ w_i * cost_i`.
    pub cost: u64,
    /// The peaks, the maximum of the combined entries'.
    pub peaks: Peaks,
    /// The largest depth of the combined entries (the smallest such among the cheapest).
    pub depth: u32,
}

/// The frontier of the weighted product of `children` (each a frontier and its weight): every
/// combination of one entry per child, cost `Σ w_i * cost_i`, peaks `max_i peaks_i`, depth
/// `max_i depth_i`, keeping per peak vector the cheapest (then shallowest) and none that another
/// beats on cost with peaks at most its own. In no particular order.
///
/// # Panics
/// If an entry's peaks are not on the grid (the grid must span every child's entries), or if an
/// entry costs `u64::MAX` (callers fall back to pairing for saturated costs).
pub(crate) fn product(grid: &Grid, children: &[(&[Entry], u64)]) -> Vec<Partial> {
    let mut total = vec![Best { cost: 0, depth: 0 }; grid.cells];
    let mut best = vec![NONE; grid.cells];
    for &(entries, weight) in children {
        best.fill(NONE);
        for e in entries {
            assert!(e.cost < u64::MAX, "saturated costs are combined by pairs");
            let cell = grid.cell(e.peaks);
            best[cell] = best[cell].min(Best { cost: e.cost, depth: e.depth });
        }
        grid.down_min(&mut best);
        for (t, b) in total.iter_mut().zip(&best) {
            *t = if *t == NONE || *b == NONE {
                NONE
            } else {
                Best {
                    cost: t.cost.saturating_add(weight.saturating_mul(b.cost)),
                    depth: t.depth.max(b.depth),
                }
            };
        }
    }
    let mut out = Vec::new();
    grid.for_each_cell(|cell, below| {
        let here = total[cell];
        if here != NONE && below.iter().all(|&b| total[b] == NONE || total[b].cost > here.cost) {
            out.push(Partial { cost: here.cost, peaks: grid.peaks(cell), depth: here.depth });
        }
    });
    out
}

/// The frontier of `candidates` ([`Entry::rank`] order, none dominated): each cell's best-ranked
/// candidate, kept when every candidate strictly below it costs more, exactly as the pairwise
/// filter of [`crate::Frontier::from_candidates`] keeps.
///
/// # Panics
/// If a candidate's peaks are not on the grid, or one costs `u64::MAX`.
pub(crate) fn union(grid: &Grid, candidates: &[Entry], relevant: Peaks) -> Vec<Entry> {
    const EMPTY: u32 = u32::MAX;
    let mut own = vec![EMPTY; grid.cells];
    for (i, c) in candidates.iter().enumerate() {
        assert!(c.cost < u64::MAX, "saturated costs are filtered by pairs");
        let cell = grid.cell(c.peaks.on(relevant));
        if own[cell] == EMPTY || c.rank_on(relevant) < candidates[own[cell] as usize].rank_on(relevant) {
            own[cell] = i as u32;
        }
    }
    let mut cheapest: Vec<u64> =
        own.iter().map(|&i| if i == EMPTY { u64::MAX } else { candidates[i as usize].cost }).collect();
    grid.down_min(&mut cheapest);
    let mut out = Vec::new();
    grid.for_each_cell(|cell, below| {
        if own[cell] != EMPTY {
            let c = candidates[own[cell] as usize];
            if below.iter().all(|&b| cheapest[b] > c.cost) {
                out.push(c);
            }
        }
    });
    out.sort_unstable_by_key(Entry::rank);
    out
}
