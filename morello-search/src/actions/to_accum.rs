//! Zero-then-accumulate: `Matmul` becomes `FillZero(out)` then `MatmulAccum` (likewise `Conv` and
//! `SoftmaxExp`; `Max` fills with negative infinity).

use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;

use super::{Action, Combine, Plan, PlanShape};

pub(super) fn enumerate(spec: &CanonicalSpec, target: &Target, out: &mut Vec<(Action, Plan)>) {
    let Some(Ok(accum)) = spec.as_accum(target) else { return };
    let Ok(zero) = CanonicalSpec::fill(spec.kind.accum_init(), spec.output(), spec.serial_only, target)
    else {
        return;
    };
    let output = spec.output_index();
    let plan = Plan {
        children: vec![zero, accum],
        combine: Combine::Block { stalls: 0 },
        shape: PlanShape::Block {
            stage_operands: vec![vec![output], (0..spec.operands.len()).collect()],
            stage_origins: vec![None, None],
            temporaries: Vec::new(),
        },
    };
    out.push((Action::ToAccum, plan));
}
