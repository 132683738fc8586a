"""An autotuner in Python: for each matmul of a small model, take the cost model's top-k
candidates, compile each, time each on this machine, and keep the fastest.

    python autotune.py [--k K] [--target T] [--processors P] [--db PATH] [--rounds R]
        [--min-seconds S] [SPEC ...]

The default model is one layer of a small transformer on 32 tokens (hidden size 128, feed-forward
512): the attention projection, the feed-forward up and down projections. A spec on the command
line (``"matmul 16x16x16"``) replaces them. Each candidate is compiled (verified against the
reference interpreter first) and checked against numpy; timing alternates between the candidates
in rounds of calls of at least ``--min-seconds`` each, on the same inputs, and keeps each one's
median round. The report says which candidate won, how much faster it is than the model's pick,
and how often the model's pick was already the fastest.
"""

import argparse
import statistics
import time

import numpy as np

import morello

MODEL = [
    "matmul 32x128x384",  # the attention projection (queries, keys, values at once)
    "matmul 32x128x512",  # feed-forward up
    "matmul 32x512x128",  # feed-forward down
]


def matmul_dims(spec_text):
    """(m, k, n) of a matmul's spec text `Matmul(BxMxKxN, ...)`."""
    dims = spec_text.split("(", 1)[1].split(",", 1)[0].split("x")
    return tuple(int(d) for d in dims[1:])


def calls_per_round(call, min_seconds):
    """How many calls take at least `min_seconds` (doubling from one)."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        if time.perf_counter() - start >= min_seconds:
            return calls
        calls *= 2


def time_candidates(kernels, arrays, rounds, min_seconds):
    """The median seconds per call of each kernel, timed in alternating rounds (each call bound to
    the arrays once, so that a round times the kernel, not the conversions)."""
    calls = [kernel.bind(*arrays) for kernel in kernels]
    counts = [calls_per_round(call, min_seconds) for call in calls]
    samples = [[] for _ in kernels]
    for _ in range(rounds):
        for i, (call, count) in enumerate(zip(calls, counts)):
            start = time.perf_counter()
            for _ in range(count):
                call()
            samples[i].append((time.perf_counter() - start) / count)
    return [statistics.median(s) for s in samples]


def tune(spec, args):
    best = morello.search(spec, target=args.target, processors=args.processors, db=args.db)
    candidates = best.top_k(args.k)
    m, k, n = matmul_dims(best.spec)
    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    kernels = []
    for candidate in candidates:
        kernel = candidate.compile()
        if not np.all(np.abs(kernel(a, b) - exact) <= bound):
            raise SystemExit(f"a candidate for {spec} disagrees with numpy")
        kernels.append(kernel)
    seconds = time_candidates(kernels, (a, b), args.rounds, args.min_seconds)
    fastest = min(range(len(kernels)), key=seconds.__getitem__)
    print(f"\n{best.spec}")
    print(f"{'rank':>4} {'model cost':>11} {'median us':>10} {'GFLOP/s':>8}")
    for rank, (candidate, s) in enumerate(zip(candidates, seconds), start=1):
        mark = "  <- fastest" if rank - 1 == fastest else ""
        print(f"{rank:>4} {candidate.cost:>11} {s * 1e6:>10.2f} {2 * m * k * n / s / 1e9:>8.1f}{mark}")
    print(f"kept #{fastest + 1}: {seconds[0] / seconds[fastest]:.3f}x the model's pick")
    return fastest == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="*", help="matmul specs (default: the model's)")
    parser.add_argument("--k", type=int, default=4, help="candidates per spec (default 4)")
    parser.add_argument("--target", default="x86")
    parser.add_argument(
        "--processors", type=int, help="processors the kernels' parallel loops use (default: this machine's cores)"
    )
    parser.add_argument("--db", help="memo table file (default: the target's default table)")
    parser.add_argument("--rounds", type=int, default=7, help="timing rounds (default 7)")
    parser.add_argument("--min-seconds", type=float, default=0.02, help="seconds per round (default 0.02)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    specs = args.specs or MODEL
    picked = sum(tune(spec, args) for spec in specs)
    print(f"\nthe model's pick was the fastest for {picked} of {len(specs)} specs")


if __name__ == "__main__":
    main()
