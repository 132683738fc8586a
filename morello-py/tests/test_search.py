"""morello.search: the implementation, its cost, tree and C, the top-k, errors, the GIL and
Ctrl-C."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import morello


def test_a_search_gives_cost_tree_and_c(matmul64):
    assert matmul64.cost > 0
    assert matmul64.spec == "Matmul(1x64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)"
    assert matmul64.target.startswith("x86")
    tree = matmul64.tree()
    assert tree.splitlines()[0].split()[:2] == ["cost", "GL"]
    assert "kernel" in tree
    c = matmul64.c_source()
    assert "void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out)" in c
    assert matmul64.stats["optimal"] is True
    assert set(matmul64.peaks) >= {"GL", "L1"}
    assert matmul64.json()["spec"]


def test_a_repeated_search_reads_the_table(db, matmul64):
    again = morello.search("matmul 64x64x64", db=db)
    assert again.cost == matmul64.cost
    assert again.tree() == matmul64.tree()
    assert again.stats["specs_solved"] == 0


def test_top_k_starts_with_the_best_and_rises(matmul64):
    top = matmul64.top_k(3)
    assert 1 <= len(top) <= 3
    assert top[0].cost == matmul64.cost
    assert [t.cost for t in top] == sorted(t.cost for t in top)
    assert len({t.c_source() for t in top}) == len(top), "top-k candidates emit distinct C"
    with pytest.raises(morello.MorelloError, match="at least 1"):
        matmul64.top_k(0)


@pytest.mark.parametrize(
    "spec, options, message",
    [
        ("matmul 0x3x3", {}, "invalid matmul size `0x3x3`: dimension 0 is zero"),
        ("matmul 4x4", {}, "matmul"),
        ("frobnicate 4x4", {}, "frobnicate"),
        ("matmul 4x4x4", {"target": "pdp-11"}, "unknown target `pdp-11`"),
        ("matmul 4x4x4", {"dtype": "f99"}, "invalid dtype `f99`"),
        ("matmul 4x4x4", {"epilogue": "relu"}, "invalid epilogue `relu`"),
        ("matmul 4x4x4", {"memory": "L7=1KiB"}, "invalid memory `L7=1KiB`"),
        ("matmul 4x4x4", {"processors": 0}, "processors must be at least 1"),
        ("matmul 4x4x4", {"db": "x.mdb", "no_db": True}, "not both"),
        ("matmul 4x4x4", {"time_limit": -1.0}, "time_limit must be a positive number"),
    ],
)
def test_bad_input_is_a_morello_error_with_the_rust_text(spec, options, message):
    options = {"no_db": True, **options} if "db" not in options else options
    with pytest.raises(morello.MorelloError, match=message.replace("(", r"\(").replace(")", r"\)")):
        morello.search(spec, **options)


def test_the_search_releases_the_gil():
    """A search on another thread leaves this one running Python."""
    done = threading.Event()
    result = {}

    def work():
        result["impl"] = morello.search("matmul 8x8x8", no_db=True, jobs=1)
        done.set()

    thread = threading.Thread(target=work)
    started = time.perf_counter()
    thread.start()
    ticks = 0
    while not done.is_set():
        time.sleep(0.01)
        ticks += 1
    thread.join()
    seconds = time.perf_counter() - started
    assert result["impl"].cost > 0
    # Blocked by a held GIL, this thread would tick about once in the whole search.
    assert ticks >= max(5, seconds * 100 * 0.3), (ticks, seconds)


def test_ctrl_c_cancels_a_search_cleanly(tmp_path):
    """SIGINT during a long search: KeyboardInterrupt within the final solve's limit, and what was
    solved is saved to the table."""
    table = tmp_path / "interrupted.mdb"
    script = textwrap.dedent(
        f"""
        import sys, time, morello
        print("searching", flush=True)
        started = time.perf_counter()
        try:
            morello.search("matmul 2048x2048x2048", db={str(table)!r})
        except KeyboardInterrupt:
            print(f"interrupted after {{time.perf_counter() - started:.1f}} s", flush=True)
            sys.exit(0)
        print("finished without interruption", flush=True)
        sys.exit(3)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "searching"
    time.sleep(1.5)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the search did not stop within 30 s of SIGINT")
    waited = time.perf_counter() - sent
    assert process.returncode == 0, (out, err)
    assert out.startswith("interrupted after"), out
    # The first signal lets it solve what it explored, for at most 3 s (FINAL_SOLVE_LIMIT).
    assert waited < 10, waited
    assert table.exists() and os.path.getsize(table) > 0, "what was solved is saved"
