//! Peel a matmul's first reduction chunk: `Matmul [b, m, k, n]` becomes a block of
//! `Matmul [b, m, p, n]` over the first `p` of `k` (it writes the output) then
//! `MatmulAccum [b, m, k - p, n]` over the rest (it adds to it).
//!
//! ```text
//! Matmul [b, m, k, n]  ->  Block: Matmul      [b, m, p,     n] at k = 0
//!                                 MatmulAccum [b, m, k - p, n] at k = p
//!                          p in 64, 128, 256; p <= k / 2, p dividing k - p
//! ```
//!
//! Zero-then-accumulate ([`super::to_accum`]) zeroes the whole output first and then reads it
//! back at every chunk of a split reduction. Peeling lets the first chunk's register blocks start
//! from zeroed registers instead, so an implementation that blocks `k` for a cache (a packed
//! panel of `rhs` reused by every row block, as BLIS does) neither makes a pass that zeroes the
//! output nor reloads it for its first chunk. Offered only where the output is not in
//! registers (there, zeroing is already free), where `rhs` can still move into a cache (a faster
//! one could hold its panels), and for chunks that tile the rest evenly. With the L1 panels it
//! serves, it about doubles the specs of a large power-of-two matmul (1024^3: 181,757 specs
//! against 79,633 without either, on AVX-512), and it is what makes such a panel pay at 256^3
//! (`docs/search.md`, "Actions").

use morello_core::spec::{CanonicalSpec, PrimitiveKind};
use morello_core::target::Target;

use super::{Action, Combine, Plan, PlanShape};

/// The chunks peeled: the depths of the `rhs` panels a cache holds (64 to 256 rows of a
/// register block's width).
const CHUNKS: [u32; 3] = [64, 128, 256];

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    if spec.kind != (PrimitiveKind::Matmul { accum: false })
        || target.level(spec.output().level).kind.counts_registers()
        || !target.moves_to_a_cache(spec.operands[1].level)
    {
        return;
    }
    let &[b, m, k, n] = spec.shape.dims() else { return };
    let Some(Ok(accum)) = spec.as_accum(target) else { return };
    for chunk in CHUNKS.into_iter().filter(|&c| c <= k / 2 && (k - c) % c == 0) {
        if let Some(plan) = plan(spec, &accum, [b, m, k, n], chunk, target) {
            out.push((Action::PeelReduction { size: chunk }, plan));
        }
    }
}

fn plan(
    spec: &CanonicalSpec,
    accum: &CanonicalSpec,
    [b, m, k, n]: [u32; 4],
    chunk: u32,
    target: &Target,
) -> Option<Plan> {
    let first_origin = [0, 0, 0, 0];
    let rest_origin = [0, 0, chunk, 0];
    let first = spec.tile_at(&[b, m, chunk, n], &first_origin, spec.serial_only, target).ok()?;
    let rest = accum.tile_at(&[b, m, k - chunk, n], &rest_origin, spec.serial_only, target).ok()?;
    let operands: Vec<usize> = (0..spec.operands.len()).collect();
    Some(Plan {
        children: vec![first, rest],
        combine: Combine::Block { stalls: 0 },
        shape: PlanShape::Block {
            stage_operands: vec![operands.clone(), operands],
            stage_origins: vec![
                Some(spec.kind.operand_origins(&first_origin)),
                Some(spec.kind.operand_origins(&rest_origin)),
            ],
            temporaries: Vec::new(),
        },
    })
}
