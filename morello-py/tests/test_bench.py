"""Impl.bench(): the figures of `morello bench --json`, from the same code."""

import json
import os
import pathlib
import subprocess

import pytest

import morello

#: The keys of `morello bench --json` for one kernel (morello-measure's KernelReport::json).
REPORT_KEYS = {
    "spec", "target", "compiler", "threads", "cpu", "bound_cpus", "omp_wait_policy", "samples",
    "min_sample_seconds", "seed", "caches", "peak_gflops", "rate_unit", "peak", "work", "memory_bound", "openmp",
    "results", "skipped", "baselines_not_comparable", "notes", "warnings",
}

QUICK = {"samples": 2, "min_sample_seconds": 0.01}


def cli():
    """The `morello` binary of this checkout's build, if there is one."""
    root = pathlib.Path(__file__).resolve().parents[2]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    for profile in ("debug", "release"):
        binary = target / profile / "morello"
        if binary.exists():
            return binary
    return None


def test_bench_reports_the_kernel_beside_a_baseline(db_one):
    impl = morello.search("matmul 16x16x16", processors=1, db=db_one)
    report = impl.bench(["naive"], **QUICK)
    assert set(report) == REPORT_KEYS
    assert report["spec"] == impl.spec
    assert report["threads"] == 1
    names = [r["name"] for r in report["results"]]
    assert names[0] == "morello"
    kernel = report["results"][0]
    assert kernel["predicted_cost"] == impl.cost and kernel["max_abs_error"] == 0
    assert kernel["seconds_per_call"] > 0 and len(kernel["samples_seconds_per_call"]) == 2
    if "naive" in names:
        naive = report["results"][names.index("naive")]
        assert naive["morello_speedup"] == pytest.approx(naive["seconds_per_call"] / kernel["seconds_per_call"])
    else:
        assert [s["name"] for s in report["skipped"]] == ["naive"]


def test_bench_has_the_keys_of_the_cli(db_one, tmp_path):
    binary = cli()
    if binary is None:
        pytest.skip("no `morello` binary in the build directory (cargo build -p morello-cli first)")
    command = [str(binary), "bench", "matmul", "8x8x8", "--json", "--baseline", "naive", "--samples", "2",
               "--min-sample-seconds", "0.01", "--db", str(tmp_path / "cli.mdb"), "-q"]
    printed = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    report = morello.search("matmul 8x8x8", processors=1, db=db_one).bench(["naive"], **QUICK)
    assert set(printed) == set(report)
    assert [set(r) for r in printed["results"]] == [set(r) for r in report["results"]]
    assert printed["spec"] == report["spec"] and printed["results"][0]["impl"] == report["results"][0]["impl"]


def test_bad_bench_options_are_morello_errors(db_one):
    impl = morello.search("matmul 8x8x8", processors=1, db=db_one)
    with pytest.raises(morello.MorelloError, match="unknown baseline|baselines: "):
        impl.bench(["cublas"])
    with pytest.raises(morello.MorelloError, match="samples must be at least 1"):
        impl.bench([], samples=0)
    with pytest.raises(morello.MorelloError, match='caches must be "warm" or "cold"'):
        impl.bench([], caches="tepid")
