//! Calibration on synthetic measurements (the fit recovers the constants that generated them)
//! and, where a compiler exists, one real run.

#![allow(clippy::unwrap_used)]

use super::suite::{Microbenchmark, SuiteSize, kernel_suite, parallel_suite};
use super::*;
use morello_codegen::host::host_supports;

/// Seconds per cost unit of the synthetic machine.
const UNIT: f64 = 0.1e-9;

/// Timings a machine that follows `truth`'s model exactly would produce, with a strided
/// stream `penalty` times as costly per line in its moves, and parallel loops with `setup` and
/// `per_iteration` units of overhead.
fn synthetic(truth: &Target, penalty: u64, setup: u64, per_iteration: u64) -> Vec<Timed> {
    let params = parameters(truth);
    let values: Vec<f64> = params.iter().map(|p| p.value(truth) as f64 * UNIT).collect();
    let suite = kernel_suite(truth, SuiteSize { memory_bytes: 1 << 20, host_lacks: Vec::new() }).unwrap();
    let mut timed: Vec<Timed> = suite
        .benches
        .into_iter()
        .map(|bench| {
            let row = model::coefficients(&bench.measures, truth, &params).unwrap().unwrap();
            let (moves, kernel) = model::stream_parts(&row, &params, &values);
            let seconds = match bench.measures {
                Measures::Stream { strided: true, .. } => penalty as f64 * moves + kernel,
                _ => moves + kernel,
            };
            timed(bench, seconds)
        })
        .collect();
    let p = u64::from(truth.processors());
    let body = 3.0 * UNIT;
    for bench in parallel_suite(truth).benches {
        let Measures::Loop { iterations, parallelism } = bench.measures else { unreachable!() };
        let seconds = if parallelism == Parallelism::Parallel {
            let share = iterations.div_ceil(p) as f64;
            body * share + (setup as f64 + per_iteration as f64 * share) * UNIT
        } else {
            body * iterations as f64
        };
        timed.push(timed_of(bench, seconds));
    }
    timed
}

fn timed(bench: Microbenchmark, seconds: f64) -> Timed {
    timed_of(bench, seconds)
}

fn timed_of(bench: Microbenchmark, seconds: f64) -> Timed {
    Timed { bench, median: seconds, range: (seconds, seconds) }
}

#[test]
fn measurements_of_the_model_give_its_constants_back_scaled() {
    for name in ["x86-avx2", "x86-avx512"] {
        let truth = Target::builtin(name, 2).unwrap();
        let timed = synthetic(&truth, 3, 20_000, 60);
        let calibration = fit_target(&truth, &timed, 8).unwrap();
        // BroadcastVecMultAdd.per_unit is 2 built in, so 8 units means every constant times 4.
        assert_eq!(calibration.reference, "BroadcastVecMultAdd.per_unit");
        assert!((calibration.units_per_second - 4.0 / UNIT).abs() < 1e-6 / UNIT);
        for constant in &calibration.constants {
            let want = match constant.name.as_str() {
                "noncontiguous_penalty" => 3,
                "parallel_setup" => 80_000,
                "parallel_per_iteration" => 240,
                _ => constant.before * 4,
            };
            assert_eq!(constant.units, want, "{name}: {}", constant.name);
        }
        // MultAdd's per_unit is charged nowhere, so it is scaled, not measured.
        let mult_add = calibration.constants.iter().find(|c| c.name == "MultAdd.per_unit").unwrap();
        assert_eq!(mult_add.source, ConstantSource::ScaledDefault);
        assert!(calibration.rms_relative_error < 1e-9, "{}", calibration.rms_relative_error);
        for m in &calibration.measurements {
            if let (Some(units), false) = (m.model_units, m.label.starts_with("strided")) {
                assert_eq!(units as f64, (m.seconds / UNIT * 4.0).round(), "{}", m.label);
            }
        }
        let costs = calibration.target.costs();
        assert_eq!(costs.noncontiguous_penalty, 3);
        assert_ne!(calibration.target.fingerprint(), truth.fingerprint());
    }
}

#[test]
fn a_faster_memory_changes_only_the_level_costs() {
    let truth = Target::builtin("x86-avx512", 2).unwrap();
    let mut desc = truth.description_value();
    desc.levels[0].cost_per_line = 10;
    let faster = Target::new(desc).unwrap();
    let calibration = fit_target(&truth, &synthetic(&faster, 2, 20_000, 60), 8).unwrap();
    assert_eq!(calibration.target.level(morello_core::target::LevelId(0)).cost_per_line, 40);
    assert_eq!(calibration.target.level(morello_core::target::LevelId(1)).cost_per_line, 24);
}

#[test]
fn without_parallel_measurements_the_parallel_constants_are_scaled() {
    let truth = Target::builtin("x86-avx2", 2).unwrap();
    let timed: Vec<Timed> = synthetic(&truth, 2, 1, 1)
        .into_iter()
        .filter(|t| !matches!(t.bench.measures, Measures::Loop { .. }))
        .collect();
    let calibration = fit_target(&truth, &timed, 16).unwrap();
    let setup = calibration.constants.iter().find(|c| c.name == "parallel_setup").unwrap();
    assert_eq!((setup.units, setup.source), (160_000, ConstantSource::ScaledDefault));
}

#[test]
fn bad_settings_are_refused_before_measuring() {
    let Some(compiler) = morello_codegen::test_support::compiler() else { return };
    let target = Target::builtin("x86-avx2", 1).unwrap();
    for config in [
        CalibrationConfig { samples: 0, ..CalibrationConfig::default() },
        CalibrationConfig { resolution: 0, ..CalibrationConfig::default() },
        CalibrationConfig { memory_bytes: 1000, ..CalibrationConfig::default() },
        CalibrationConfig { min_sample_seconds: f64::NAN, ..CalibrationConfig::default() },
    ] {
        let result = calibrate(&compiler, &target, &config, &mut |_| {});
        assert!(matches!(result, Err(CalibrationError::Invalid(_))), "{config:?}");
    }
}

#[test]
fn a_quick_real_calibration_produces_a_loadable_target() {
    let Some(compiler) = morello_codegen::test_support::compiler() else { return };
    let name = if host_supports(IsaFeature::Avx512f) && host_supports(IsaFeature::Avx512bw) {
        "x86-avx512"
    } else if host_supports(IsaFeature::Avx2) && host_supports(IsaFeature::Fma) {
        "x86-avx2"
    } else {
        println!("skipped: the host runs neither built-in target");
        return;
    };
    let target = Target::builtin(name, 2).unwrap();
    let config = CalibrationConfig {
        samples: 1,
        min_sample_seconds: 0.0,
        memory_bytes: 4 << 20,
        pinning: Pinning::Unpinned,
        ..CalibrationConfig::default()
    };
    let mut steps = Vec::new();
    let calibration = calibrate(&compiler, &target, &config, &mut |s| steps.push(s)).unwrap();
    assert_eq!(steps.last(), Some(&CalibrationStep::Fitting));
    assert!(calibration.measurements.iter().all(|m| m.seconds.is_finite() && m.seconds >= 0.0));
    let text = calibration.target.description_value().to_toml().unwrap();
    let back = Target::from_toml(&text).unwrap();
    assert_eq!(back, calibration.target);
}
