//! `morello bench-suite --regret`: for each shape of a suite, the model's K best candidates (as
//! `morello bench --top-k K`) verified and timed side by side, and the **regret** of the model's
//! pick: its median time over the fastest candidate's, with the bootstrap interval over the run's
//! rounds (`morello_measure::ranking::Regret`). The table goes between its own markers in
//! `docs/PERFORMANCE.md` ([`REGRET_MARKERS`]); no plot.
//!
//! The regret is what planning from the model (`search --plan estimate`) loses against timing its
//! candidates (`--plan measure`) on this machine; a shape whose interval starts at 0% has not shown
//! a loss.

use std::fmt::Write as _;

use anyhow::{Result, anyhow};
use morello_codegen::Compiler;
use morello_measure::ranking::{Ranked, Ranking, Regret, choose};
use morello_measure::{BenchConfig, CandidateResult, KernelCandidate};
use morello_search::VariantCosts;
use serde_json::{Value, json};

use super::busy::{CpuTimes, busy_since};
use super::kernel::solve_top_k;
use super::markdown::{Machine, REGRET_MARKERS};
use super::measure::measure_error;
use super::suite::{Args, Entry, check_outputs, entries, machine, write_outputs};
use crate::commands::search::{SearchOptions, Session};
use crate::failure::bad_input;
use crate::spec_args::{SpecArgs, load_target, resolve};
use crate::{output, progress};

/// The regret suite: cubes, odd shapes, and layers of BERT-base and ResNet-50 (20 shapes).
pub const SUITE: [&str; 20] = [
    "64",
    "128",
    "256",
    "512",
    "1024",
    "17x31x63",
    "100x300x77",
    "250x333x777",
    "1000x1000x1000",
    "3000x50x3000",
    "128x768x768",
    "128x768x3072",
    "128x3072x768",
    "matmul 128x768x3072 --epilogue bias,gelu",
    "softmax 1536x128",
    "conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same",
    "conv 1x14x14x256 3x3x256x256 --layout nhwc --pad same",
    "conv 1x28x28x512 1x1x512x128 --layout nhwc",
    "conv 1x56x56x64 1x1x64x256 --layout nhwc",
    "conv 1x7x7x512 3x3x512x512 --layout nhwc --pad same",
];

/// One shape's figures.
struct Figures {
    /// The spec as searched.
    spec: String,
    /// Candidates timed (the pick first).
    candidates: usize,
    /// The costliest timed candidate's predicted cost over the pick's.
    cost_spread: f64,
    regret: Regret,
    /// The fastest candidate's label (`morello-3`).
    fastest: String,
    /// Spearman's rho of predicted cost and median time.
    spearman: Option<f64>,
    /// The pick's median seconds per call.
    pick_seconds: f64,
    /// Variants left out as predicted within `--min-gap` of the candidate before them.
    within_gap: usize,
}

impl Figures {
    /// Whether anything was compared: with the pick alone the regret is 0% by definition.
    fn compared(&self) -> bool {
        self.candidates > 1
    }
}

/// Runs `morello bench-suite --regret`.
pub fn run(args: &Args) -> Result<()> {
    let entries = entries(args, &SUITE)?;
    let config = args.measure.config()?;
    if !args.measure.baselines(&[])?.is_empty() {
        return Err(bad_input(
            "--regret times morello's candidates against each other: drop --baseline (or use bench-suite \
             without --regret)",
        ));
    }
    if !args.no_write {
        check_outputs(&args.markdown, REGRET_MARKERS, None)?;
    }
    let (target, target_note) = load_target(&args.target)?;
    let compiler = crate::spec_args::timing_compiler(&target, "bench-suite --regret")?;
    let gap = args.min_gap / 100.0;
    let bar = progress::bar(
        progress::shown(args.options.progress, args.options.quiet),
        Some(entries.len() as u64),
        "{spinner} [{pos}/{len}] {msg} ({elapsed})",
    );
    let before = CpuTimes::now();
    let mut rows = Vec::new();
    for entry in &entries {
        bar.set_message(format!("{}: searching, verifying, timing {} candidates", entry.label(), args.top_k));
        let words = match &entry.words {
            Some(words) => words.clone(),
            None => format!("matmul {}x{}x{}", entry.m, entry.k, entry.n),
        };
        let mut spec_args = SpecArgs::from_words(&words, &args.target, &entry.dtypes.name())
            .map_err(|e| bad_input(format!("size `{words}`: {e}")))?;
        spec_args.processors = u32::try_from(config.threads).ok();
        let result = measure_entry(args, &spec_args, &compiler, &config, gap);
        crate::signals::check()?;
        if let Err(e) = &result {
            bar.suspend(|| report_failure(entry, e));
        }
        rows.push((entry.label(), result.map_err(|e| format!("{e:#}"))));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let busy = busy_since(before);

    let mut warnings: Vec<String> = args.measure.noise_note().into_iter().chain(busy).collect();
    warnings.iter_mut().for_each(|w| *w = format!("Warning: {w}."));
    let peak = "not measured (the regret compares morello's candidates with each other)".to_string();
    let machine = machine(&compiler, &config, peak, target_note.unwrap_or_else(|| target.name().to_string()));
    let body = section(&rows, &machine, &warnings, args.top_k, args.min_gap);
    if !args.no_write {
        write_outputs(&args.markdown, REGRET_MARKERS, &body, None)?;
    }
    if args.json {
        output::print_json(&suite_json(&rows, &machine, &warnings))?;
    } else {
        let mut text = table(&rows) + &summary(&rows) + "\n";
        for warning in &warnings {
            text += &format!("- {warning}\n");
        }
        if !args.no_write {
            text += &format!("\nwrote {}\n", args.markdown.display());
        }
        output::print(&text)?;
    }
    let failed = rows.iter().filter(|(_, r)| r.is_err()).count();
    if failed > 0 {
        return Err(anyhow!("{failed} of {} sizes failed (see the table)", rows.len()));
    }
    Ok(())
}

/// Searches one shape's candidates, verifies and times them side by side, and takes the regret.
fn measure_entry(
    args: &Args,
    spec_args: &SpecArgs,
    compiler: &Compiler,
    config: &BenchConfig,
    gap: f64,
) -> Result<Figures> {
    let resolved = resolve(spec_args)?;
    crate::memory::check_runnable(&resolved, "bench-suite")?;
    let options = SearchOptions { progress: false, quiet: true, ..args.options };
    let session = Session::start(&resolved, &options, false)?;
    let solutions = solve_top_k(session, &resolved, &args.db, args.top_k, VariantCosts::Distinct, gap)?;
    let target = &resolved.target;
    let ranked: Vec<Ranked<'_>> = solutions.iter().map(|s| Ranked { imp: &s.imp, cost: s.cost }).collect();
    let picked = choose(&ranked, target, Some(args.top_k), gap)?;
    let kernels: Vec<KernelCandidate<'_>> = picked
        .indices
        .iter()
        .enumerate()
        .map(|(rank, &i)| KernelCandidate { label: format!("morello-{}", rank + 1), imp: &solutions[i].imp })
        .collect();
    let measured = morello_measure::measure(compiler, target, &resolved.spec, &kernels, &[], config)
        .map_err(measure_error(target))?;
    let timed: Vec<(&str, u64, &CandidateResult)> = picked
        .indices
        .iter()
        .zip(&kernels)
        .filter_map(|(&i, k)| Some((k.label.as_str(), solutions[i].cost, measured.report.result(&k.label)?)))
        .collect();
    let pick = timed
        .first()
        .filter(|(label, ..)| *label == "morello-1")
        .ok_or_else(|| anyhow!("the model's pick was not timed (see `morello bench --top-k` for why)"))?;
    let costs: Vec<(u64, &CandidateResult)> = timed.iter().map(|&(_, cost, r)| (cost, r)).collect();
    let ranking = Ranking::of(&costs, config.seed);
    let regret = ranking.regret.ok_or_else(|| anyhow!("no regret: a median time was not positive"))?;
    let last_cost = timed.last().map_or(pick.1, |t| t.1);
    Ok(Figures {
        spec: resolved.spec.display(target).to_string(),
        candidates: timed.len(),
        cost_spread: last_cost as f64 / pick.1.max(1) as f64,
        regret,
        fastest: timed[regret.fastest].0.to_string(),
        spearman: ranking.spearman,
        pick_seconds: pick.2.stats.median,
        within_gap: picked.within_gap,
    })
}

#[allow(clippy::print_stderr)]
fn report_failure(entry: &Entry, error: &anyhow::Error) {
    eprintln!("error: {}: {error:#}", entry.label());
}

/// `1.8%`: a ratio over 1 as a percentage.
fn percent(ratio: f64) -> String {
    format!("{:.1}%", (ratio - 1.0) * 100.0)
}

/// The Markdown table, one row per shape.
fn table(rows: &[(String, Result<Figures, String>)]) -> String {
    let mut out =
        "| shape | candidates | cost spread | pick's median | regret | 90% interval | fastest | rho |\n\
                   | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n"
            .to_string();
    for (label, result) in rows {
        let _ = match result {
            Ok(f) if !f.compared() => writeln!(
                out,
                "| {label} | 1 | | {} | n/a: its {} variants are predicted within the gap | | | |",
                super::text::duration(f.pick_seconds),
                f.within_gap,
            ),
            Ok(f) => writeln!(
                out,
                "| {label} | {} | {} | {} | {} | {} | {} | {} |",
                f.candidates,
                percent(f.cost_spread),
                super::text::duration(f.pick_seconds),
                percent(f.regret.ratio),
                f.regret.interval.map_or("n/a".into(), |(low, high)| format!(
                    "{}-{}",
                    percent(low),
                    percent(high)
                )),
                f.fastest,
                f.spearman.map_or("n/a".into(), |rho| format!("{rho:.2}")),
            ),
            Err(e) => writeln!(
                out,
                "| {label} | failed: {} | | | | | | |",
                e.replace('|', "\\|").replace('\n', " ")
            ),
        };
    }
    out
}

/// The median and largest regret, and how many shapes' intervals exclude 0%.
fn summary(rows: &[(String, Result<Figures, String>)]) -> String {
    let compared = || rows.iter().filter_map(|(_, r)| r.as_ref().ok()).filter(|f| f.compared());
    let ratios: Vec<f64> = compared().map(|f| f.regret.ratio).collect();
    if ratios.is_empty() {
        return String::new();
    }
    let median = morello_measure::stats::SampleStats::of(&ratios).map_or(1.0, |s| s.median);
    let worst = rows
        .iter()
        .filter_map(|(label, r)| Some((label, r.as_ref().ok().filter(|f| f.compared())?)))
        .max_by(|a, b| a.1.regret.ratio.total_cmp(&b.1.regret.ratio));
    let shown = compared().filter(|f| f.regret.interval.is_some_and(|(low, _)| low > 1.0)).count();
    let picked_fastest = compared().filter(|f| f.regret.fastest == 0).count();
    let mut text = format!(
        "\nMedian regret {} over the {} shapes with more than one candidate; the pick ran fastest on {picked_fastest}; {shown} shape{} showed a \
         loss (an interval above 0%)",
        percent(median),
        ratios.len(),
        if shown == 1 { "" } else { "s" },
    );
    if let Some((label, f)) = worst {
        let _ =
            write!(text, "; the largest, {} on {label} ({} was fastest)", percent(f.regret.ratio), f.fastest);
    }
    text + ".\n"
}

/// The generated section: what was run where, how to read it, the table.
fn section(
    rows: &[(String, Result<Figures, String>)],
    machine: &Machine,
    warnings: &[String],
    top_k: usize,
    min_gap: f64,
) -> String {
    let mut out = format!(
        "Generated by `morello bench-suite --regret` on {}; run it again to refresh this section (the text \
         between the marker comments is replaced).\n\n",
        machine.date
    );
    out += &machine.markdown();
    let _ = writeln!(
        out,
        "\nFor each shape, the model's {top_k} best candidates (distinct C, each predicted at least {min_gap}% \
         costlier than the one before: `morello bench --top-k {top_k}`) are verified and timed side by side. \
         The regret is the model's pick's median time over the fastest candidate's: what planning from the \
         model loses against timing its candidates (`morello search --plan measure`). The interval is the \
         central 90% of the regret over bootstrap resamples of the run's rounds; one that starts at 0% has \
         not shown a loss. Cost spread: the last candidate's predicted cost over the pick's. rho: Spearman's \
         rank correlation of predicted cost and median time.\n"
    );
    out += &table(rows);
    out += &summary(rows);
    if !warnings.is_empty() {
        out += "\n";
        for warning in warnings {
            let _ = writeln!(out, "- {warning}");
        }
    }
    out
}

/// The whole run as one JSON object.
fn suite_json(rows: &[(String, Result<Figures, String>)], machine: &Machine, warnings: &[String]) -> Value {
    let shapes: Vec<Value> = rows
        .iter()
        .map(|(label, result)| match result {
            Ok(f) => json!({
                "name": label,
                "spec": f.spec,
                "candidates": f.candidates,
                "cost_spread": f.cost_spread,
                "pick_seconds_per_call": f.pick_seconds,
                "regret": {
                    "ratio": f.regret.ratio,
                    "low": f.regret.interval.map(|i| i.0),
                    "high": f.regret.interval.map(|i| i.1),
                    "fastest": f.fastest,
                },
                "spearman": f.spearman,
            }),
            Err(e) => json!({"name": label, "error": e}),
        })
        .collect();
    json!({
        "cpu": machine.cpu,
        "target": machine.target,
        "protocol": machine.protocol,
        "command": machine.command,
        "shapes": shapes,
        "warnings": warnings,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn figures(ratio: f64, interval: (f64, f64), fastest: usize) -> Figures {
        Figures {
            spec: "Matmul(...)".into(),
            candidates: 10,
            cost_spread: 1.25,
            regret: Regret { ratio, interval: Some(interval), fastest },
            fastest: format!("morello-{}", fastest + 1),
            spearman: Some(0.5),
            pick_seconds: 1e-3,
            within_gap: 0,
        }
    }

    #[test]
    fn every_suite_shape_parses() {
        for text in SUITE {
            Entry::parse(text).unwrap();
        }
    }

    #[test]
    fn the_table_and_summary_give_each_regret_and_the_worst() {
        let rows = vec![
            ("f32 64x64x64".to_string(), Ok(figures(1.0, (1.0, 1.01), 0))),
            ("f32 128x128x128".to_string(), Ok(figures(1.05, (1.02, 1.08), 3))),
            ("f32 256x256x256".to_string(), Ok(figures(1.01, (1.0, 1.03), 1))),
            ("softmax 7x33".to_string(), Err("no kernel | here".to_string())),
            (
                "f32 1000x1000x1000".to_string(),
                Ok(Figures { candidates: 1, within_gap: 599, ..figures(1.0, (1.0, 1.0), 0) }),
            ),
        ];
        let table = table(&rows);
        assert!(
            table
                .contains("| f32 128x128x128 | 10 | 25.0% | 1.00 ms | 5.0% | 2.0%-8.0% | morello-4 | 0.50 |"),
            "{table}"
        );
        assert!(table.contains("failed: no kernel \\| here"), "{table}");
        let alone =
            "| f32 1000x1000x1000 | 1 | | 1.00 ms | n/a: its 599 variants are predicted within the gap |";
        assert!(table.contains(alone), "{table}");
        let summary = summary(&rows);
        assert!(
            summary.contains(
                "Median regret 1.0% over the 3 shapes with more than one candidate; the pick ran fastest on 1; \
                 1 shape showed"
            ),
            "{summary}"
        );
        assert!(summary.contains("5.0% on f32 128x128x128 (morello-4 was fastest)"), "{summary}");
    }
}
