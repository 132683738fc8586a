"""The examples run (on small shapes: the defaults take minutes)."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def test_the_autotune_example_runs(db_one):
    command = [sys.executable, str(EXAMPLES / "autotune.py"), "matmul 8x8x8", "matmul 16x8x16", "--k", "2",
               "--processors", "1", "--db", str(db_one), "--rounds", "2", "--min-seconds", "0.002"]
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=300).stdout
    assert out.count("<- fastest") == 2, out
    assert "the model's pick was the fastest for" in out
