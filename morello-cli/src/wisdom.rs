//! `--plan estimate|measure`: whether a search answers with the model's best (estimate) or with
//! the fastest of the model's near-best candidates as timed on this host (measure), kept in the
//! table as wisdom so that the next search with the same table answers without timing.
//!
//! ```text
//! measure  search the spec's best and variants (the table fills and saves as usual)
//!          -> the table's wisdom for (spec, limits, this host): rebuilt from its decisions and
//!             checked against its stored cost; if it holds, that is the answer, nothing timed
//!          -> otherwise (none, or one that no longer rebuilds: a warning) time the candidates
//!             (morello_measure::measure_plan: verified first), keep the fastest, record it
//! ```
//!
//! The search and the measuring never meet below this crate: morello-search stores and rebuilds
//! decisions, morello-measure times trees.

use anyhow::Result;
use morello_core::imp::Impl;
use morello_core::target::MemVec;
use morello_measure::{
    BenchConfig, BenchTimer, HostFingerprint, PeakProbe, PlanMeasurement, host_fingerprint,
};
use morello_search::db::{WisdomEntry, WisdomHost, spec_key, wisdom_limits};
use morello_search::{ActionConfig, Solution, decisions_of, rebuild_decisions};

use crate::database::{DbArgs, SearchTable, eprint_line};
use crate::failure::bad_input;
use crate::sampling::SamplingArgs;
use crate::spec_args::Resolved;

/// How many of the model's cheapest implementations a measured plan considers (cheapest first,
/// ties kept: `VariantCosts::All`); the candidates timed are the first distinct ones among them.
pub const CANDIDATE_POOL: usize = 48;

/// How a search picks its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Plan {
    /// The model's best; measured winners in the table are ignored.
    #[default]
    Estimate,
    /// The fastest of the model's near-best candidates on this host, timed once and kept in the
    /// table (later searches with the same table use it without timing).
    Measure,
}

/// `--plan` and how a measured plan times.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct PlanArgs {
    /// `estimate`: the model's best. `measure`: verify and time the model's near-best candidates on
    /// this host, answer with the fastest and keep it in the table for this host (a later search
    /// with the same table and --plan measure uses it without timing). It times --top-k K
    /// candidates, by default those predicted within 2% of the best's cost, at least 2 and at
    /// most 8 (candidates that emit the same C count once).
    #[arg(long, value_enum, default_value = "estimate")]
    pub plan: Plan,
    /// With --plan measure: how each candidate is sampled.
    #[command(flatten)]
    pub sampling: SamplingArgs,
}

impl PlanArgs {
    /// Checks the measuring options (with `top_k`, the candidates to time) before anything runs.
    ///
    /// # Errors
    /// Bad input: zero candidates or samples, or a sample time outside (0, 3600] seconds.
    pub fn check(&self, top_k: Option<usize>) -> Result<()> {
        if top_k == Some(0) {
            return Err(bad_input("--top-k must be at least 1"));
        }
        self.sampling.check()
    }
}

/// What a measured plan starts from: the search's candidates and how it ran.
#[derive(Debug)]
pub struct Searched {
    /// The model's best and its variants, cheapest first (`VariantCosts::All`, up to
    /// [`CANDIDATE_POOL`]).
    pub solutions: Vec<Solution>,
    /// The memory limits the search ran under.
    pub limits: MemVec,
    /// Its action configuration (what stored decisions index).
    pub actions: ActionConfig,
}

/// The answer of `search --plan measure` from the search's candidates (see the module docs); what
/// it did goes to standard error unless `quiet`.
///
/// # Errors
/// A candidate that fails verification (nothing is kept); no C compiler; a bad table.
pub fn choose_measured(
    resolved: &Resolved,
    db: &DbArgs,
    searched: Searched,
    top_k: Option<usize>,
    plan: &PlanArgs,
    quiet: bool,
) -> Result<Solution> {
    let Searched { solutions, limits, actions } = searched;
    let target = &resolved.target;
    let host = host_fingerprint(target);
    let mut table = SearchTable::open(db, target, actions, true)?;
    if let Some(entry) = table.table().wisdom_for(&resolved.spec, &limits, host.fingerprint) {
        match stored_winner(entry, resolved, &limits, &actions) {
            Ok(imp) => {
                if !quiet {
                    eprint_line(&format!(
                        "plan: the measured winner this table holds for this host ({}, {} than the model's best \
                         among {} candidates timed); nothing was timed",
                        seconds(entry.seconds),
                        gain_text(entry.model_seconds, entry.seconds),
                        entry.candidates
                    ));
                }
                let report = solutions[0].report.clone();
                return Ok(Solution { cost: imp.cost, imp, report });
            }
            Err(reason) => eprint_line(&format!(
                "warning: the measured winner this table holds for this spec on this host is ignored: {reason}; \
                 timing the candidates again"
            )),
        }
    }
    crate::memory::check_runnable(resolved, "search --plan measure")?;
    let compiler = crate::spec_args::timing_compiler(target, "search --plan measure")?;
    let config = BenchConfig {
        samples: plan.sampling.samples,
        min_sample_seconds: plan.sampling.min_sample_seconds,
        seed: 1,
        threads: target.processors().max(1) as usize,
        peak: PeakProbe::Skip,
        ..BenchConfig::default()
    };
    let candidates: Vec<(&Impl, u64)> = solutions.iter().map(|s| (&s.imp, s.cost)).collect();
    let mut timer = BenchTimer { compiler: &compiler, target, spec: &resolved.spec, config };
    let measured = morello_measure::measure_plan(&candidates, target, top_k, &mut timer)?;
    let winner = &solutions[measured.winner().index];
    if !quiet {
        for line in report_lines(&measured, &host) {
            eprint_line(&line);
        }
    }
    let Some(decisions) = decisions_of(&winner.imp, target, &actions) else {
        eprint_line("warning: the winner is not a tree of this search's actions, so it is not kept");
        return Ok(winner.clone());
    };
    let timed = &measured.timed;
    table.table_mut().record_wisdom(WisdomEntry {
        spec: spec_key(&resolved.spec),
        limits: wisdom_limits(&limits, target),
        host: WisdomHost { fingerprint: host.fingerprint, description: host.description.clone() },
        decisions,
        cost: winner.cost,
        seconds: measured.winner().seconds,
        model_seconds: timed[0].seconds,
        candidates: u32::try_from(timed.len()).unwrap_or(u32::MAX),
    });
    let saved = table.save();
    if !quiet {
        match (saved, table.saved_in()) {
            (Some(_), Some(path)) => eprint_line(&format!(
                "plan: the winner is kept in the table {} for this host; the next search with --plan measure uses it",
                path.display()
            )),
            _ => eprint_line("plan: no writable table, so the winner is not kept"),
        }
    }
    Ok(winner.clone())
}

/// The tree a stored winner's decisions build, if it is still what was stored: it rebuilds, costs
/// what it cost and fits the search's limits. Otherwise why not.
fn stored_winner(
    entry: &WisdomEntry,
    resolved: &Resolved,
    limits: &MemVec,
    actions: &ActionConfig,
) -> std::result::Result<Impl, String> {
    let target = &resolved.target;
    let imp = rebuild_decisions(&resolved.spec, &entry.decisions, target, actions)
        .map_err(|e| format!("its decisions do not rebuild ({e})"))?;
    if imp.cost != entry.cost {
        return Err(format!("it rebuilds to cost {}, not the stored {}", imp.cost, entry.cost));
    }
    if !imp.peaks.fits(limits) {
        return Err("it does not fit the memory limits".to_string());
    }
    Ok(imp)
}

/// What a measured plan timed, one line per candidate, for standard error.
fn report_lines(measured: &PlanMeasurement, host: &HostFingerprint) -> Vec<String> {
    let mut left_out = Vec::new();
    if measured.duplicates > 0 {
        left_out.push(format!("{} emit the same C as a cheaper one", measured.duplicates));
    }
    if measured.unemittable > 0 {
        left_out.push(format!("{} cannot be emitted", measured.unemittable));
    }
    let left_out = if left_out.is_empty() { String::new() } else { format!(" ({})", left_out.join(", ")) };
    let mut lines = vec![format!(
        "plan: timed {} of the model's candidates{left_out} on {}:",
        measured.timed.len(),
        host.description
    )];
    let model = measured.timed[0].seconds;
    for (i, t) in measured.timed.iter().enumerate() {
        let what = match (i == 0, i == measured.winner) {
            (true, true) => "the model's best, fastest".to_string(),
            (true, false) => "the model's best".to_string(),
            (false, true) => format!("fastest, {} than the model's best", gain_text(model, t.seconds)),
            (false, false) => String::new(),
        };
        lines.push(format!("  #{:<2} cost {:<12} {:>12}  {what}", t.index + 1, t.cost, seconds(t.seconds)));
    }
    lines
}

/// "12.3% faster" (or slower) of `winner` against `model`.
fn gain_text(model: f64, winner: f64) -> String {
    if model <= 0.0 || winner == model {
        return "no faster".to_string();
    }
    let gain = (model - winner) / model * 100.0;
    if gain >= 0.0 { format!("{gain:.1}% faster") } else { format!("{:.1}% slower", -gain) }
}

/// Seconds per call, in the unit that reads best.
fn seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.3} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_gains_read_as_people_write_them() {
        assert_eq!(seconds(1.5e-6), "1.500 µs");
        assert_eq!(seconds(2.5e-3), "2.500 ms");
        assert_eq!(gain_text(2.0, 1.5), "25.0% faster");
        assert_eq!(gain_text(2.0, 2.0), "no faster");
    }
}
