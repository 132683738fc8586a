//! `--samples` and `--min-sample-seconds`: how each timed candidate is sampled, as `bench`,
//! `bench-suite` and `search --plan measure` take them (`compile --bench` and `calibrate` have
//! defaults of their own).

use anyhow::Result;
use morello_measure::bench::{DEFAULT_MIN_SAMPLE_SECONDS, DEFAULT_SAMPLES};

use crate::failure::bad_input;

/// How each candidate is sampled.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SamplingArgs {
    /// Samples per timed candidate; figures worth reporting need at least the default (fewer is
    /// for quick checks and tests, and bench flags its figures as noisy).
    #[arg(long, default_value_t = DEFAULT_SAMPLES, value_name = "N", value_parser = crate::numbers::parse_count)]
    pub samples: usize,
    /// Minimum seconds per sample (repetitions are calibrated to reach it); as with --samples,
    /// less than the default is for quick checks and tests only.
    #[arg(
        long,
        default_value_t = DEFAULT_MIN_SAMPLE_SECONDS,
        value_name = "SECONDS",
        value_parser = crate::numbers::parse_seconds_f64
    )]
    pub min_sample_seconds: f64,
}

impl SamplingArgs {
    /// Checks the sampling before anything runs.
    ///
    /// # Errors
    /// Bad input for zero samples or a sample time outside (0, 3600] seconds.
    pub fn check(&self) -> Result<()> {
        if self.samples == 0 {
            return Err(bad_input("--samples must be at least 1"));
        }
        let seconds = self.min_sample_seconds;
        if !(seconds > 0.0 && seconds <= 3600.0) {
            return Err(bad_input(format!("--min-sample-seconds must be in (0, 3600], got {seconds}")));
        }
        Ok(())
    }

    /// Whether fewer or shorter samples than the defaults that reported figures use were asked for.
    pub fn below_defaults(&self) -> bool {
        self.samples < DEFAULT_SAMPLES || self.min_sample_seconds < DEFAULT_MIN_SAMPLE_SECONDS
    }
}
