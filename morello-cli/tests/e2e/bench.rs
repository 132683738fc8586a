//! End-to-end tests of `morello bench` and `morello bench-suite`: the JSON and text reports, the
//! baselines that are skipped and why, top-k with its regret and Spearman correlation, the suite's Markdown
//! and SVG files, and bad input. Sampling is tiny (`--samples 2 --min-sample-seconds 0.01`), so
//! no test asserts anything about timings beyond their being positive numbers.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::common::{SCALAR_TARGET, executable_script, have_compiler, morello, morello_env};

/// Quick sampling: fine for checking structure, far too noisy for figures.
const QUICK: [&str; 4] = ["--samples", "2", "--min-sample-seconds", "0.01"];

/// Writes `text` (a target description) as `file` in `dir`; returns its path.
fn target_file(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn with_quick<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(QUICK);
    all
}

fn number(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn bench_json_has_named_results_with_gflops_and_seconds_per_call() {
    if !have_compiler() {
        return;
    }
    let args = with_quick(&["bench", "matmul", "8x8x8", "--baseline", "naive,gemm", "--json", "-q"]);
    let (code, stdout, stderr) = morello(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert!(v["peak_gflops"].is_number() || v["peak_gflops"].is_null(), "{v}");
    assert_eq!(v["spec"], "Matmul(1x8x8x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    assert_eq!(v["work"]["flops"], 1024.0);
    let results = v["results"].as_array().expect("results");
    let names: Vec<&str> = results.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello", "naive", "gemm"]);
    for r in results {
        assert!(number(&r["seconds_per_call"]) > 0.0, "{r}");
        assert!(number(&r["gflops"]) > 0.0, "{r}");
        assert_eq!(r["samples_seconds_per_call"].as_array().map(Vec::len), Some(2));
        let spread = &r["spread"];
        assert!(number(&spread["min"]) <= number(&spread["median"]));
        assert!(number(&spread["median"]) <= number(&spread["max"]));
    }
    assert!(results[0]["morello_speedup"].is_null());
    assert!(number(&results[1]["morello_speedup"]) > 0.0);
    assert_eq!(results[0]["max_abs_error"], 0.0);
    assert!(results[0]["predicted_cost"].is_u64());
    assert_eq!(v["caches"], "warm", "back-to-back calls unless asked");
}

#[test]
fn a_padded_strided_nhwc_conv_is_timed_beside_a_checked_baseline() {
    if !have_compiler() {
        return;
    }
    // NHWC input 5x5x2, HWIO 3x3 filters to 2 channels, stride 2, "same" (output 3x3): the spec
    // maps to the baselines' conv problem with its layouts, stride and padding, and `naive` (which
    // needs only a C compiler) is checked against the reference on the same inputs and timed.
    let args = with_quick(&[
        "bench",
        "conv",
        "1x5x5x2",
        "3x3x2x2",
        "--layout",
        "nhwc",
        "--pad",
        "same",
        "--stride",
        "2",
        "--baseline",
        "naive",
        "--json",
        "-q",
    ]);
    let (code, stdout, stderr) = morello(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    // 2 x N K OH OW C R S.
    assert_eq!(v["work"]["flops"], 2.0 * 2.0 * 9.0 * 2.0 * 9.0, "{v}");
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(0), "{v}");
    let names: Vec<&str> =
        v["results"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello", "naive"], "{v}");
    assert_eq!(v["results"][0]["max_abs_error"], 0.0, "{v}");
}

#[test]
fn a_missing_library_is_skipped_with_an_install_hint() {
    if !have_compiler() {
        return;
    }
    // A compiler that cannot find OpenBLAS (whatever is installed), otherwise `cc`.
    let dir = tempfile::tempdir().unwrap();
    let fake = executable_script(
        dir.path(),
        "cc-without-openblas",
        "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in -lopenblas)\n    \
         echo \"/usr/bin/ld: cannot find -lopenblas: No such file or directory\" >&2; exit 1;;\n  esac\n\
         done\nexec cc \"$@\"\n",
    );
    let args = with_quick(&["bench", "matmul", "4x4x4", "--baseline", "openblas,naive", "-q"]);
    let (code, stdout, stderr) = morello_env(&args, &[("CC", &fake)]);
    assert_eq!(code, 0, "{stderr}");
    let skipped: Vec<&str> = stdout.lines().filter(|l| l.starts_with("skipped:")).collect();
    assert_eq!(skipped.len(), 1, "{stdout}");
    // Where OpenBLAS is installed the fake linker refuses it; where it is not, its header is
    // already missing. Either way the reason is the compiler's own words.
    assert!(
        skipped[0].contains("openblas: not installed (")
            && (skipped[0].contains("cannot find -lopenblas") || skipped[0].contains("cblas.h")),
        "{stdout}"
    );
    assert!(skipped[0].ends_with("install it with `apt-get install libopenblas-dev`"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("naive ")), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("openblas ")), "{stdout}");
    assert!(stdout.contains("warning:    2 samples of >= 0.01 s is below the defaults"), "{stdout}");
}

#[test]
fn specs_the_baselines_do_not_compute_are_timed_alone_with_a_reason() {
    if !have_compiler() {
        return;
    }
    let (code, stdout, stderr) = morello(&with_quick(&["bench", "zero", "64x64", "-q"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "baselines:  none comparable: the spec is a fill; the baselines compute matmuls, convolutions \
             and softmax; the morello kernel is timed alone"
        ),
        "{stdout}"
    );
    let header = stdout.lines().find(|l| l.starts_with("name")).expect("a table");
    assert!(header.contains("GB/s") && !header.contains("% of peak"), "{header}");
    let (code, stdout, stderr) =
        morello(&with_quick(&["bench", "matmul", "4x4x4", "--dtype", "u32", "--json", "-q"]));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let names: Vec<&str> =
        v["results"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello", "naive"], "the libraries have no u32 matmul");
    let skipped: Vec<&str> =
        v["skipped"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(skipped, ["openblas", "blis", "libxsmm", "mkl", "onednn", "xnnpack", "gemm"]);
    assert!(v["results"][0]["percent_of_peak"].is_null(), "no f32 peak for u32");
}

#[test]
fn top_k_times_candidates_of_increasing_cost_and_reports_regret_and_spearman() {
    if !have_compiler() {
        return;
    }
    let (code, stdout, stderr) = morello(&with_quick(&[
        "bench", "--top-k", "3", "matmul", "8x8x8", "--caches", "cold", "--json", "-q",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello-1", "morello-2", "morello-3"], "no baseline unless asked");
    assert_eq!(v["caches"], "cold");
    let notes = v["notes"].as_array().unwrap();
    assert!(!notes.iter().any(|n| n.as_str().unwrap().contains(" fit in ")), "cold calls: {notes:?}");
    let costs: Vec<u64> = results.iter().map(|r| r["predicted_cost"].as_u64().unwrap()).collect();
    // By default each is at least 2% costlier than the one before (--min-gap).
    assert!(costs.windows(2).all(|w| w[1] * 100 >= w[0] * 102), "{costs:?}");
    assert!(v["within_gap_dropped"].is_u64(), "{v}");
    assert!(results[0]["differs"].is_null() && results[1]["differs"].is_string());
    // The model's pick over the fastest: at least 1, inside its interval (two rounds or more).
    let regret = &v["regret"];
    let [ratio, low, high] = ["ratio", "low", "high"].map(|key| number(&regret[key]));
    assert!(1.0 <= low && low <= ratio && ratio <= high, "{regret}");
    let fastest = regret["fastest"].as_str().unwrap_or_else(|| panic!("{regret}"));
    let median =
        |name: &str| number(&results.iter().find(|r| r["name"] == name).unwrap()["seconds_per_call"]);
    assert!((ratio - median("morello-1") / median(fastest)).abs() < 1e-9, "{regret}");
    assert!(names.iter().all(|&name| median(fastest) <= median(name)), "{regret}");
    let rho = &v["spearman"];
    assert!(rho.is_null() || (-1.0..=1.0).contains(&number(rho)), "{rho}");
    // The quick runs take two rounds or more, so the interval is defined wherever rho is.
    let interval = &v["spearman_interval"];
    if !rho.is_null() {
        let [low, high] = [&interval[0], &interval[1]].map(number);
        assert!(-1.0 <= low && low <= high && high <= 1.0, "{interval}");
    }
    let apart = &v["pairs_apart"];
    let count = |key: &str| apart[key].as_u64().unwrap_or_else(|| panic!("{apart}"));
    assert_eq!(count("pairs"), 3, "{apart}");
    assert!(count("ordered") <= count("apart") && count("apart") <= 3, "{apart}");
    let misordered = apart["misordered"].as_array().unwrap_or_else(|| panic!("{apart}"));
    assert_eq!(misordered.len() as u64, count("apart") - count("ordered"), "{apart}");
    for pair in misordered {
        let pair: Vec<&str> = pair.as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        assert!(pair.len() == 2 && pair.iter().all(|l| names.contains(l)), "{apart}");
    }

    let (code, stdout, stderr) = morello(&with_quick(&["bench", "--top-k", "2", "matmul", "8x8x8", "-q"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("candidates alternating; inputs from seed 1\n"), "warm by default: {stdout}");
    // Warm calls find the operands in L1, where the spec places them in main memory: a note says so.
    assert!(stdout.contains("note:       the operands (768 B in all) fit in L1 ("), "{stdout}");
    assert!(stdout.contains("--caches cold times calls that start from GL, as the model prices them\n"));
    let regret = stdout.lines().find(|l| l.starts_with("regret: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(regret.contains("% (interval "), "{regret}");
    assert!(
        regret.ends_with("%): the model's pick vs the fastest of 2 candidates, #1 (morello-1)")
            || regret.ends_with("%): the model's pick vs the fastest of 2 candidates, #2 (morello-2)"),
        "{regret}"
    );
    assert!(stdout.contains("Spearman rank correlation"), "{stdout}");
    assert!(stdout.contains("pairs the timer tells apart (no overlap of their min-max): "), "{stdout}");
    assert!(stdout.contains(" of 1; the model orders "), "{stdout}");
    assert!(stdout.contains("how each differs from morello-1:\n  morello-2: "), "{stdout}");
}

#[test]
fn bad_measurement_options_are_input_errors() {
    // A directory that surely does not exist (not a fixed path: tests running as root elsewhere
    // may create one).
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let markdown = missing.join("P.md").display().to_string();
    let missing_message = format!("{} does not exist", missing.display());
    for (args, message) in [
        (vec!["bench", "matmul", "4x4x4", "--samples", "0"], "invalid value '0' for '--samples <N>'"),
        (vec!["bench", "matmul", "4x4x4", "--baseline", "cublas"], "unknown baseline `cublas`"),
        (vec!["bench", "matmul", "4x4x4", "--top-k", "0"], "invalid value '0' for '--top-k <K>'"),
        (
            vec!["bench", "matmul", "4x4x4", "--top-k", "2", "--min-gap", "150"],
            "150 is not a percentage from 0 to 100",
        ),
        (
            vec!["bench", "matmul", "4x4x4", "--min-sample-seconds", "0"],
            "--min-sample-seconds must be in (0, 3600]",
        ),
        (vec!["bench", "matmul", "4x4x4", "--threads", "0"], "invalid value '0' for '--threads <N>'"),
        (vec!["bench", "matmul", "4x4x4", "--caches", "hot"], "invalid value 'hot' for '--caches <STATE>'"),
        (vec!["bench-suite", "--sizes", "8x8", "--no-write"], "size `8x8` must be N or MxKxN"),
        (vec!["bench-suite", "--markdown", markdown.as_str()], missing_message.as_str()),
    ] {
        let (code, _, stderr) = morello(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let (code, _, stderr) = morello(&["bench", "matmul", "4x4x4", "--candidates", "all-costs"]);
    assert_eq!(code, 2, "--candidates needs --top-k: {stderr}");
    let (code, _, stderr) = morello(&["bench", "matmul", "4x4x4", "--min-gap", "5"]);
    assert_eq!(code, 2, "--min-gap needs --top-k: {stderr}");
}

#[test]
fn help_shows_examples() {
    for command in ["bench", "bench-suite"] {
        let (code, stdout, _) = morello(&[command, "--help"]);
        assert_eq!(code, 0);
        assert!(stdout.contains("Examples:\n  morello "), "{command}: {stdout}");
    }
}

/// `--processors` says its default for each command: bench models the processors it runs on
/// (--threads), search this machine's cores.
#[test]
fn help_says_what_processors_defaults_to() {
    let (_, bench, _) = morello(&["bench", "--help"]);
    assert!(
        bench.contains("(default: --threads, so the kernel is modelled on as many processors"),
        "{bench}"
    );
    assert!(bench.contains("morello db stats --processors 1"), "{bench}");
    let (_, search, _) = morello(&["search", "--help"]);
    assert!(search.contains("for the built-in x86 targets, this machine's cores"), "{search}");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_suite_fills_its_section_between_the_markers_and_writes_the_plot() {
    if !have_compiler() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let markdown = dir.path().join("PERFORMANCE.md");
    let svg = dir.path().join("perf.svg");
    std::fs::write(
        &markdown,
        "# Performance\n\n## Kernel suite\n\n<!-- bench-suite:begin -->\nold figures\n<!-- bench-suite:end -->\n\n\
         ## Later\n\nkept\n",
    )
    .unwrap();
    let (md, plot) = (markdown.to_string_lossy().into_owned(), svg.to_string_lossy().into_owned());
    let args = with_quick(&[
        "bench-suite",
        "--sizes",
        "4,8,u32:4",
        "--baseline",
        "naive,gemm",
        "--markdown",
        &md,
        "--svg",
        &plot,
        "-q",
    ]);
    let (code, stdout, stderr) = morello(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("| kernel | morello | naive | gemm | morello / best library |"), "{stdout}");
    let text = read(&markdown);
    assert!(text.starts_with("# Performance\n\n## Kernel suite\n\n<!-- bench-suite:begin -->\nGenerated by"));
    assert!(text.ends_with("<!-- bench-suite:end -->\n\n## Later\n\nkept\n"), "{text}");
    assert!(!text.contains("old figures"));
    assert!(text.contains("| f32 4x4x4 | ") && text.contains("| f32 8x8x8 | "), "{text}");
    assert!(text.contains("| u32 4x4x4 | "), "{text}");
    assert!(text.contains("- u32 4x4x4: skipped gemm: no u32 matmul\n"), "{text}");
    assert!(text.contains("](perf.svg)"), "{text}");
    assert!(
        text.contains("| CPU | ") && text.contains("```sh\nmorello bench-suite --sizes 4,8,u32:4"),
        "{text}"
    );
    let plot_text = read(&svg);
    assert!(plot_text.starts_with("<svg") && plot_text.ends_with("</svg>\n"));
    assert_eq!(
        plot_text.matches("<polyline").count(),
        3,
        "morello, naive and gemm over 4 and 8: {plot_text}"
    );
}

#[test]
fn the_regret_suite_fills_its_own_section_and_leaves_the_kernel_suite_alone() {
    if !have_compiler() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let markdown = dir.path().join("PERFORMANCE.md");
    let kernel_suite =
        "## Kernel suite\n\n<!-- bench-suite:begin -->\nkernel figures\n<!-- bench-suite:end -->\n";
    std::fs::write(&markdown, format!("# Performance\n\n{kernel_suite}")).unwrap();
    let md = markdown.to_string_lossy().into_owned();
    let args = with_quick(&[
        "bench-suite",
        "--regret",
        "--sizes",
        "16,8x16x24",
        "--top-k",
        "3",
        "--markdown",
        &md,
        "-q",
    ]);
    let (code, stdout, stderr) = morello(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("| shape | candidates | cost spread |"), "{stdout}");
    let text = read(&markdown);
    assert!(text.starts_with(&format!("# Performance\n\n{kernel_suite}")), "{text}");
    assert!(
        text.contains("## Regret of the model's pick\n\n<!-- bench-suite-regret:begin -->\nGenerated by")
    );
    assert!(text.ends_with("<!-- bench-suite-regret:end -->\n"), "{text}");
    for shape in ["| f32 16x16x16 | ", "| f32 8x16x24 | "] {
        let row = text.lines().find(|l| l.starts_with(shape)).unwrap_or_else(|| panic!("{shape}: {text}"));
        assert!(row.contains("| morello-"), "the fastest candidate is named: {row}");
    }
    assert!(text.contains("Median regret "), "{text}");

    let (code, stdout, stderr) = morello(&with_quick(&[
        "bench-suite",
        "--regret",
        "--sizes",
        "8",
        "--top-k",
        "2",
        "--no-write",
        "--json",
        "-q",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let regret = &json["shapes"][0]["regret"];
    assert!(number(&regret["ratio"]) >= 1.0, "{json}");
    assert!(regret["fastest"].as_str().is_some_and(|f| f.starts_with("morello-")), "{json}");

    let (code, _, stderr) = morello(&["bench-suite", "--regret", "--baseline", "naive", "--no-write"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("drop --baseline"), "{stderr}");
}

#[test]
fn versus_target_times_the_kernel_another_target_picks_in_the_same_run() {
    if !have_compiler() {
        return;
    }
    // The scalar target, and a copy whose main memory costs twice as much per line: the same
    // levels, so its kernel is verified and timed beside the first on the same inputs.
    let dir = tempfile::tempdir().unwrap();
    let slower = SCALAR_TARGET.replace("cost_per_line = 40", "cost_per_line = 80");
    assert_ne!(slower, SCALAR_TARGET);
    let tiny = &target_file(dir.path(), "tiny.toml", SCALAR_TARGET);
    let slow = &target_file(dir.path(), "slow memory.toml", &slower);
    let bench = |extra: &[&str]| {
        let mut args =
            vec!["bench", "matmul", "2x2x2", "--target", tiny, "--versus-target", slow, "--no-db", "-q"];
        args.extend(extra);
        let (code, stdout, stderr) = morello(&with_quick(&args));
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    let v: serde_json::Value =
        serde_json::from_str(&bench(&["--baseline", "naive", "--json"])).expect("JSON");
    let results = v["results"].as_array().expect("results");
    let names: Vec<&str> = results.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello", "morello-vs-slow_memory", "naive"]);
    let cost = |i: usize| results[i]["predicted_cost"].as_u64().unwrap();
    assert!(cost(1) > cost(0), "the other target prices its memory higher: {v}");
    assert_eq!(results[1]["max_abs_error"], 0.0);
    assert!(results[0]["morello_speedup"].is_null());
    assert!(number(&results[1]["morello_speedup"]) > 0.0 && number(&results[2]["morello_speedup"]) > 0.0);
    // The text report names the other target and its cost.
    let stdout = bench(&["--baseline", "none"]);
    let versus = format!("\nversus:     slow_memory (cost {}), timed as morello-vs-slow_memory\n", cost(1));
    assert!(stdout.contains(&versus), "{stdout}");
    assert!(stdout.contains("how many times faster morello is than each other candidate"), "{stdout}");
}

#[test]
fn scaling_times_the_one_thread_kernel_beside_the_parallel_one() {
    if !have_compiler() {
        return;
    }
    // The scalar target with a main memory parallel loops may split.
    let dir = tempfile::tempdir().unwrap();
    let parallel = SCALAR_TARGET.replace("cost_per_line = 40", "cost_per_line = 40\nparallel = true");
    assert_ne!(parallel, SCALAR_TARGET);
    let tiny = &target_file(dir.path(), "tiny.toml", &parallel);
    let bench = |extra: &[&str]| {
        // 16x16x16 splits its rows between the two processors; one processor has no parallel loop.
        let mut args = vec!["bench", "matmul", "16x16x16", "--target", tiny, "--threads", "2", "--scaling"];
        args.extend(["--baseline", "none", "--no-db", "-q"]);
        args.extend(extra);
        let (code, stdout, stderr) = morello(&with_quick(&args));
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    let v: serde_json::Value = serde_json::from_str(&bench(&["--json"])).expect("JSON");
    let results = v["results"].as_array().expect("results");
    let names: Vec<&str> = results.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["morello", "morello-1-thread"]);
    assert_eq!(results[1]["max_abs_error"], 0.0);
    assert!(v["omp_wait_policy"].is_null() || v["omp_wait_policy"].is_string(), "{v}");
    // The quick sampling is below the defaults; other work may have run too (the tests run in parallel).
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("is below the defaults")), "{v}");
    let scaling = number(&v["scaling"]);
    assert!((scaling - number(&results[1]["morello_speedup"])).abs() < 1e-12, "{v}");
    let stdout = bench(&[]);
    assert!(stdout.contains("\nscaling:    the best one-thread kernel (cost "), "{stdout}");
    assert!(stdout.contains("), timed as morello-1-thread; morello on 2 threads runs "), "{stdout}");
    assert!(!stdout.contains("emits the same C"), "{stdout}");
    // One thread has nothing to compare with.
    let (code, _, stderr) = morello(&["bench", "matmul", "8x8x8", "--target", tiny, "--scaling", "--no-db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--scaling compares --threads N with one thread: give --threads 2 or more"),
        "{stderr}"
    );
}

#[test]
fn versus_target_says_when_both_targets_pick_the_same_c() {
    if !have_compiler() {
        return;
    }
    // A copy under another name: another target (its own table), the same kernel.
    let dir = tempfile::tempdir().unwrap();
    let tiny = target_file(dir.path(), "tiny.toml", SCALAR_TARGET);
    let copy =
        target_file(dir.path(), "copy.toml", &SCALAR_TARGET.replace("name = \"tiny\"", "name = \"copy\""));
    let args = with_quick(&[
        "bench",
        "matmul",
        "2x2x2",
        "--target",
        &tiny,
        "--versus-target",
        &copy,
        "--baseline",
        "none",
        "--no-db",
        "-q",
    ]);
    let (code, stdout, stderr) = morello(&args);
    assert_eq!(code, 0, "{stderr}");
    let note = "\nnote:       morello-vs-copy emits the same C as morello: the difference between their times \
                is this run's noise\n";
    assert!(stdout.contains(note), "{stdout}");
}

#[test]
fn versus_target_refuses_a_target_with_other_levels_and_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = &target_file(dir.path(), "tiny.toml", SCALAR_TARGET);
    let (code, _, stderr) = morello(&[
        "bench",
        "matmul",
        "2x2x2",
        "--target",
        tiny,
        "--versus-target",
        "x86-avx2",
        "--no-db",
        "-q",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "--versus-target x86-avx2: its levels (GL, L2, L1, VRF, RF) or ISA differ from those of \
             --target tiny (HBM, REG)"
        ),
        "{stderr}"
    );
    let (code, _, stderr) =
        morello(&["bench", "matmul", "2x2x2", "--top-k", "2", "--versus-target", tiny, "--no-db", "-q"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
