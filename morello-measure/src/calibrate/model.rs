//! The model side of calibration: which constants are fitted, and how many times the cost model
//! charges each of them for one measured invocation.
//!
//! The fitted constants ([`Parameter`]) are every kernel's `fixed` and `per_unit` cost and every
//! cache and memory level's `cost_per_line`. The cost of a kernel application, and of a line moved
//! through the levels, is linear in them. Rather than restating the formulas of `docs/cost-model.md`
//! here (and drifting from them), the coefficients are read off the model itself:
//!
//! ```text
//! a_j = cost(target with θ_j = 1 and every other constant 0)
//! check: cost(target with θ = (2, 3, 4, ...)) == Σ_j a_j θ_j     (and cost(θ = 0) == 0)
//! ```
//!
//! so a change to a kernel's formula changes the fit with it, and a change that makes a cost
//! non-linear in its constants is reported instead of fitted wrongly.

use morello_core::cost::{Cost, alloc_cost};
use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::target::{CostConstants, KernelCost, LevelId, LevelKind, Target, TargetDescription};

use super::CalibrationError;
use super::suite::Measures;

/// One fitted constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Parameter {
    /// A kernel's cost per application.
    Fixed(KernelKind),
    /// A kernel's cost per unit of work (vectors, loop steps).
    PerUnit(KernelKind),
    /// A kernel's cost per application on operands of one dtype (a per-dtype entry).
    DtypeFixed(KernelKind, Dtype),
    /// A kernel's cost per unit of work on operands of one dtype.
    DtypePerUnit(KernelKind, Dtype),
    /// A level's cost per cache line touched.
    Line(LevelId),
}

impl Parameter {
    /// A name for people: `BroadcastVecMultAdd.per_unit`, `L2.cost_per_line`.
    pub fn name(self, target: &Target) -> String {
        match self {
            Parameter::Fixed(k) => format!("{k}.fixed"),
            Parameter::PerUnit(k) => format!("{k}.per_unit"),
            Parameter::DtypeFixed(k, d) => format!("{k}.{d}.fixed"),
            Parameter::DtypePerUnit(k, d) => format!("{k}.{d}.per_unit"),
            Parameter::Line(level) => format!("{}.cost_per_line", target.level(level).name),
        }
    }

    /// The constant's value in `target`.
    pub fn value(self, target: &Target) -> u64 {
        match self {
            Parameter::Fixed(k) => target.costs().kernel(k).fixed,
            Parameter::PerUnit(k) => target.costs().kernel(k).per_unit,
            Parameter::DtypeFixed(k, d) => target.costs().kernel_for(k, d).fixed,
            Parameter::DtypePerUnit(k, d) => target.costs().kernel_for(k, d).per_unit,
            Parameter::Line(level) => target.level(level).cost_per_line,
        }
    }
}

/// The fitted constants of a target, in a fixed order: each kernel's `fixed` and `per_unit` (in
/// the target's kernel order), then those of its per-dtype entries (by dtype), then each cache and
/// memory level's `cost_per_line`.
pub fn parameters(target: &Target) -> Vec<Parameter> {
    let mut out = Vec::new();
    for &k in target.kernels() {
        out.push(Parameter::Fixed(k));
        out.push(Parameter::PerUnit(k));
    }
    for (&d, kernels) in &target.costs().dtype_kernels {
        for &k in kernels.keys().filter(|k| target.kernels().contains(k)) {
            out.push(Parameter::DtypeFixed(k, d));
            out.push(Parameter::DtypePerUnit(k, d));
        }
    }
    for id in target.level_ids() {
        if matches!(target.level(id).kind, LevelKind::Cache | LevelKind::Memory) {
            out.push(Parameter::Line(id));
        }
    }
    out
}

/// `base` with the given constants, every other fitted constant 0, a non-contiguity penalty of 1,
/// no run overheads and free parallel loops (what coefficient extraction evaluates the model on).
///
/// The microbenchmarks stream one line per invocation, which the model would charge a whole run
/// for, while the measured loops stream long runs; so lines are fitted without run overheads, and
/// the fitted target keeps `base`'s overheads, which are in lines and so scale with the fitted
/// line costs.
fn isolated(base: &Target, params: &[Parameter], values: &[u64]) -> Result<Target, CalibrationError> {
    let zero_costs = CostConstants {
        noncontiguous_penalty: 1,
        parallel_setup: 0,
        parallel_per_iteration: 0,
        load_issue: 0,
        fma_chains: 0,
        fma_window: 0,
        page_bytes: base.costs().page_bytes,
        kernels: KernelKind::ALL.iter().map(|&k| (k, KernelCost { fixed: 0, per_unit: 0 })).collect(),
        dtype_kernels: base
            .costs()
            .dtype_kernels
            .iter()
            .map(|(&d, m)| (d, m.keys().map(|&k| (k, KernelCost { fixed: 0, per_unit: 0 })).collect()))
            .collect(),
    };
    let mut desc = base.description_value();
    desc.costs = zero_costs;
    for level in &mut desc.levels {
        level.cost_per_line = 0;
        level.run_overhead_lines = 0;
        // Vector loads are measured from the nearest cache only, where the two costs are one.
        level.load_cost_per_line = None;
        level.fill_cost_per_line = 0;
        level.strided_fill_cost_per_line = None;
    }
    set(&mut desc, base, params, values);
    Target::new(desc).map_err(|e| CalibrationError::Model(e.to_string()))
}

/// Writes `values` of `params` into a description of `base`.
fn set(desc: &mut TargetDescription, base: &Target, params: &[Parameter], values: &[u64]) {
    for (&p, &v) in params.iter().zip(values) {
        match p {
            Parameter::Fixed(k) => {
                desc.costs.kernels.entry(k).or_insert_with(|| base.costs().kernel(k)).fixed = v
            }
            Parameter::PerUnit(k) => {
                desc.costs.kernels.entry(k).or_insert_with(|| base.costs().kernel(k)).per_unit = v;
            }
            Parameter::DtypeFixed(k, d) => {
                dtype_entry(desc, base, k, d).fixed = v;
            }
            Parameter::DtypePerUnit(k, d) => {
                dtype_entry(desc, base, k, d).per_unit = v;
            }
            Parameter::Line(level) => desc.levels[level.index()].cost_per_line = v,
        }
    }
}

fn dtype_entry<'a>(
    desc: &'a mut TargetDescription,
    base: &Target,
    k: KernelKind,
    d: Dtype,
) -> &'a mut KernelCost {
    desc.costs.dtype_kernels.entry(d).or_default().entry(k).or_insert_with(|| base.costs().kernel_for(k, d))
}

/// `base` with the fitted `values` of `params` and the other constants given.
///
/// # Errors
/// [`CalibrationError::Model`] if the result is not a valid target (it always is for values of
/// the same target).
pub fn with_constants(
    base: &Target,
    params: &[Parameter],
    values: &[u64],
    noncontiguous_penalty: u64,
    parallel: (u64, u64),
) -> Result<Target, CalibrationError> {
    let mut desc = base.description_value();
    desc.costs.noncontiguous_penalty = noncontiguous_penalty;
    desc.costs.parallel_setup = parallel.0;
    desc.costs.parallel_per_iteration = parallel.1;
    set(&mut desc, base, params, values);
    // Vector-load line costs are not measured; they keep their ratio to their level's line cost.
    for (level, old) in desc.levels.iter_mut().zip(base.levels()) {
        if let (Some(load), true) = (old.load_cost_per_line, old.cost_per_line > 0) {
            let scaled =
                (u128::from(load) * u128::from(level.cost_per_line)).div_ceil(u128::from(old.cost_per_line));
            level.load_cost_per_line = Some(u64::try_from(scaled).unwrap_or(u64::MAX));
        }
    }
    // The register-block load side is not measured either: it keeps its ratio to the FMA's cost
    // per vector, which the step bound compares it with.
    let fma = |costs: &CostConstants| costs.kernel(KernelKind::BroadcastVecMultAdd).per_unit;
    let (old_fma, new_fma) = (fma(base.costs()), fma(&desc.costs));
    if old_fma > 0 {
        let scale = |v: u64| {
            u64::try_from((u128::from(v) * u128::from(new_fma)).div_ceil(u128::from(old_fma)))
                .unwrap_or(u64::MAX)
        };
        desc.costs.load_issue = scale(base.costs().load_issue);
        for (level, old) in desc.levels.iter_mut().zip(base.levels()) {
            level.fill_cost_per_line = scale(old.fill_cost_per_line);
            level.strided_fill_cost_per_line = old.strided_fill_cost_per_line.map(scale);
        }
    }
    Target::new(desc).map_err(|e| CalibrationError::Model(e.to_string()))
}

/// `target` without run overheads (what the fit models streams with: see [`isolated`]).
fn without_run_overheads(target: &Target) -> Option<Target> {
    let mut desc = target.description_value();
    for level in &mut desc.levels {
        level.run_overhead_lines = 0;
    }
    Target::new(desc).ok()
}

/// The model's cost of one invocation of what `measures` measures, on `target`, as the fit models
/// it (a stream without run overheads: it measures long runs one line at a time); `None` for
/// measurements the linear fit does not use (parallel loops).
pub(crate) fn invocation_cost(measures: &Measures, target: &Target) -> Option<Cost> {
    match measures {
        Measures::Kernel { kind, spec } => Some(kind.cost(spec, target)),
        Measures::Stream { path, load, .. } => {
            let target = &without_run_overheads(target)?;
            Some(
                path.iter()
                    .map(|(source, destination)| alloc_cost(source, destination, false, target))
                    .fold(KernelKind::VectorAssign.cost(load, target), Cost::saturating_add),
            )
        }
        Measures::Loop { .. } => None,
    }
}

/// How often the model charges each of `params` for one invocation of `measures` (the row of the
/// fit), checked to be linear.
///
/// # Errors
/// [`CalibrationError::Model`] if the cost is not linear in the constants.
pub(crate) fn coefficients(
    measures: &Measures,
    base: &Target,
    params: &[Parameter],
) -> Result<Option<Vec<f64>>, CalibrationError> {
    let cost = |values: &[u64]| -> Result<Option<Cost>, CalibrationError> {
        Ok(invocation_cost(measures, &isolated(base, params, values)?))
    };
    let zeros = vec![0; params.len()];
    let Some(at_zero) = cost(&zeros)? else { return Ok(None) };
    let not_linear = |why: String| {
        CalibrationError::Model(format!("the cost model is not linear in its constants: {why}"))
    };
    if at_zero != 0 {
        return Err(not_linear(format!("{measures:?} costs {at_zero} with every constant 0")));
    }
    let mut row = Vec::with_capacity(params.len());
    for j in 0..params.len() {
        let mut unit = zeros.clone();
        unit[j] = 1;
        row.push(cost(&unit)?.unwrap_or(0));
    }
    let probe: Vec<u64> = (0..params.len() as u64).map(|j| j + 2).collect();
    let expected: u64 = row.iter().zip(&probe).map(|(a, v)| a * v).sum();
    let got = cost(&probe)?.unwrap_or(0);
    if got != expected {
        return Err(not_linear(format!("{measures:?} costs {got}, not {expected}")));
    }
    Ok(Some(row.into_iter().map(|a| a as f64).collect()))
}

/// The part of a stream's cost that the non-contiguity penalty multiplies (its moves, and the
/// load's line cost) and the part it does not (the load's own constants), in seconds under the
/// fitted `seconds` of `params`.
pub(crate) fn stream_parts(row: &[f64], params: &[Parameter], seconds: &[f64]) -> (f64, f64) {
    let mut moves = 0.0;
    let mut kernel = 0.0;
    for ((a, p), s) in row.iter().zip(params).zip(seconds) {
        match p {
            Parameter::Line(_) => moves += a * s,
            Parameter::Fixed(_)
            | Parameter::PerUnit(_)
            | Parameter::DtypeFixed(..)
            | Parameter::DtypePerUnit(..) => kernel += a * s,
        }
    }
    (moves, kernel)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::calibrate::suite::{SuiteSize, kernel_suite};

    #[test]
    fn coefficients_match_the_documented_formulas() {
        let target = Target::builtin("x86-avx512", 2).unwrap();
        let params = parameters(&target);
        let suite =
            kernel_suite(&target, SuiteSize { memory_bytes: 1 << 20, host_lacks: Vec::new() }).unwrap();
        let index = |p: Parameter| params.iter().position(|q| *q == p).unwrap();
        let (gl, l2, l1) = (LevelId(0), LevelId(1), LevelId(2));
        let row = |label: &str| {
            let bench = suite.benches.iter().find(|b| b.label == label).unwrap();
            coefficients(&bench.measures, &target, &params).unwrap().unwrap()
        };
        // fixed + per_unit * 4 vectors + one L1 line for the scalar.
        let bvma = row("BroadcastVecMultAdd.v4");
        assert_eq!(bvma[index(Parameter::Fixed(KernelKind::BroadcastVecMultAdd))], 1.0);
        assert_eq!(bvma[index(Parameter::PerUnit(KernelKind::BroadcastVecMultAdd))], 4.0);
        assert_eq!(bvma[index(Parameter::Line(l1))], 1.0);
        assert_eq!(bvma.iter().sum::<f64>(), 6.0);
        // Two 32-byte vectors are one line.
        let load = row("VectorAssign.load.w32.v2");
        assert_eq!(load[index(Parameter::PerUnit(KernelKind::VectorAssign))], 2.0);
        assert_eq!(load[index(Parameter::Line(l1))], 1.0);
        // A line from main memory: GL -> L2 (c_GL + c_L2), L2 -> L1 (c_L2 + c_L1), the load (c_L1).
        let stream = row("stream.GL");
        assert_eq!(
            [
                stream[index(Parameter::Line(gl))],
                stream[index(Parameter::Line(l2))],
                stream[index(Parameter::Line(l1))]
            ],
            [1.0, 2.0, 2.0]
        );
        assert_eq!(row("stream.L1")[index(Parameter::Line(l1))], 1.0);
        // The built-in constants give the built-in costs back.
        let values: Vec<f64> = params.iter().map(|p| p.value(&target) as f64).collect();
        for bench in &suite.benches {
            if let Some(row) = coefficients(&bench.measures, &target, &params).unwrap() {
                let linear: f64 = row.iter().zip(&values).map(|(a, v)| a * v).sum();
                assert_eq!(
                    linear as u64,
                    invocation_cost(&bench.measures, &target).unwrap(),
                    "{}",
                    bench.label
                );
            }
        }
    }

    #[test]
    fn fitted_constants_make_a_valid_target_with_a_new_fingerprint() {
        let target = Target::builtin("x86-avx2", 2).unwrap();
        let params = parameters(&target);
        let values: Vec<u64> = (0..params.len() as u64).map(|j| 3 * j + 1).collect();
        let fitted = with_constants(&target, &params, &values, 3, (1000, 7)).unwrap();
        for (p, v) in params.iter().zip(&values) {
            assert_eq!(p.value(&fitted), *v, "{}", p.name(&target));
        }
        assert_eq!(fitted.costs().noncontiguous_penalty, 3);
        // Run overheads are in lines, kept as the base target has them.
        assert_eq!(fitted.level(LevelId(0)).run_overhead_lines, 2);
        // L2's vector-load cost keeps its ratio (2 of 6) to L2's fitted line cost.
        let l2 = target.level_id("L2").unwrap();
        let fitted_l2 = fitted.level(l2);
        assert_eq!(fitted_l2.load_cost_per_line, Some((2 * fitted_l2.cost_per_line).div_ceil(6)));
        assert_eq!((fitted.costs().parallel_setup, fitted.costs().parallel_per_iteration), (1000, 7));
        assert_ne!(fitted.fingerprint(), target.fingerprint());
        assert_eq!(
            with_constants(&target, &params, &[], 1, (20_000, 60)).unwrap().fingerprint(),
            target.fingerprint()
        );
    }
}
