"""A BLIS-like loop nest for a 512x512x512 f32 matmul, written by hand as a schedule and
completed by the search, then verified and timed beside the searched optimum in one run.

    python blis.py [--db PATH] [--samples N] [--min-sample-seconds S]

The schedule follows BLIS's five loops around a register microkernel (Van Zee and van de Geijn,
"BLIS: A Framework for Rapidly Instantiating BLAS Functionality"):

    parallel  m in halves, one per core            (BLIS's ic loop, parallelized)
    jc        n in panels of 64 columns            tile n 64
    pc        k in chunks of 128                   to_accum; split 128
              B's 128x64 chunk packed into L1 as micro-panels of 32 columns, k-major
    ir        m in blocks of 6 rows                tile m 6
              the 6x64 output block in vector registers (16 lanes): the microkernel, whose
              loop over k and broadcast FMAs the search completes

It needs an AVX-512 host for the default target's kernels (x86 picks what this host runs; the
tile sizes suit AVX-512's 32 vector registers).
"""

import argparse
import sys

import numpy as np

import morello

SPEC = "matmul 512x512x512"


def blis_schedule(db):
    """The hand schedule (see the module's doc)."""
    return (
        morello.Schedule(SPEC, db=db)
        .move_to("rhs", "L2")
        .parallel([1, 256, 512])
        .move_to("lhs", "L2")
        .move_to("out", "L2")
        .tile("n", 64)
        .to_accum()
        .split(128)
        .pack("rhs", "L1", "[2, 1, 2 p(32)]")
        .tile("m", 6)
        .move_to("out", "VRF", vector_size=16)
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="memo table file (default: the target's default table)")
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--min-sample-seconds", type=float, default=0.2)
    args = parser.parse_args()

    searched = morello.search(SPEC, db=args.db)
    hand = blis_schedule(args.db).synthesize()
    print(f"target: {searched.target}")
    print(f"searched optimum: cost {searched.cost}")
    print(f"BLIS-like schedule: cost {hand.cost} ({hand.cost / searched.cost:.3f}x the optimum's)")
    print(hand.tree())

    # Both verified against numpy (compile() also checks each against the reference interpreter).
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 512), dtype=np.float32)
    b = rng.standard_normal((512, 512), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 512 * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    for name, impl in (("searched", searched), ("hand", hand)):
        error = np.abs(impl.compile()(a, b) - exact)
        if not np.all(error <= bound):
            sys.exit(f"the {name} kernel is wrong: largest error {error.max():.3g}")
        print(f"{name}: verified, largest error {error.max():.3g} (bound {bound.max():.3g})")

    # Timed side by side in one run: alternating, the same inputs, as `morello bench` times.
    report = searched.bench(
        [], versus={"hand": hand}, samples=args.samples, min_sample_seconds=args.min_sample_seconds
    )
    results = {r["name"]: r for r in report["results"]}
    mine, blis = results["morello"], results["morello-hand"]
    print(f"\n{report['threads']} threads; {report['samples']} samples of >= {report['min_sample_seconds']} s")
    for label, r in (("searched", mine), ("BLIS-like", blis)):
        s = r["spread"]
        print(
            f"{label:>10}: median {r['seconds_per_call'] * 1e3:.3f} ms "
            f"(min {s['min'] * 1e3:.3f}, max {s['max'] * 1e3:.3f}), {r['gflops']:.1f} GFLOP/s"
        )
    ratio = blis["seconds_per_call"] / mine["seconds_per_call"]
    print(f"BLIS-like / searched median time: {ratio:.3f} ({'within' if ratio <= 1.05 else 'more than'} 5%)")


if __name__ == "__main__":
    main()
