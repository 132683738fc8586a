#!/usr/bin/env python3
"""Whole-process wall clock and peak resident memory of commands, run alternately.

    benches/process_time.py [--runs N] [--warmup W] 'command one' 'command two' ...

Each command (split like a shell would, but run without one) runs W times untimed, then the commands
take turns N times, so that a change in the machine's load falls on all of them alike. For each it
prints the median, minimum and maximum wall clock (from just before the process is spawned to its
exit, as a user would wait for it), the median CPU time (user + system) and the largest maximum
resident set size of its runs (as `/usr/bin/time -v` reports it). Output goes to /dev/null; a
command that fails stops the measurement. Used for the warm-search figures of docs/PERFORMANCE.md
("Warm answers from a table"); wrap it in `flock /tmp/morello-bench.lock` on a shared machine.
"""

import argparse
import resource
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    """Runs argv under `/usr/bin/time`, returning (wall seconds, CPU seconds, max RSS in KiB).

    The resident set is `/usr/bin/time`'s: the kernel's maximum for a process counts what it held
    before its exec, so a child forked from this Python would report Python's size. The wall clock
    includes `/usr/bin/time`'s own fork and exec (well under a millisecond), so it errs high.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "maxrss %M"] + argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(argv)} exited with {proc.returncode}:\n{stderr}")
    return wall, cpu, int(stderr.rsplit("maxrss ", 1)[1].split()[0])


def main():
    parser = argparse.ArgumentParser(description="whole-process wall clock and max RSS, alternated")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("commands", nargs="+", help="one shell-quoted command line per argument")
    options = parser.parse_args()
    commands = [shlex.split(c) for c in options.commands]
    for argv in commands:
        for _ in range(options.warmup):
            run_once(argv)
    walls = [[] for _ in commands]
    cpus = [[] for _ in commands]
    rss = [0 for _ in commands]
    for _ in range(options.runs):
        for i, argv in enumerate(commands):
            wall, cpu, kib = run_once(argv)
            walls[i].append(wall)
            cpus[i].append(cpu)
            rss[i] = max(rss[i], kib)
    for argv, w, c, kib in zip(commands, walls, cpus, rss):
        print(
            f"{statistics.median(w) * 1e3:8.2f} ms median wall ({min(w) * 1e3:.2f}-{max(w) * 1e3:.2f}), "
            f"{statistics.median(c) * 1e3:7.2f} ms median CPU, {kib / 1024:6.1f} MiB max RSS, "
            f"{len(w)} runs: {shlex.join(argv)}"
        )


if __name__ == "__main__":
    main()
