"""The command line, run as a user runs it: a subprocess."""

import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "-m", "smartboost.cli", *args], capture_output=True, text=True, timeout=600)


def test_demo_prints_a_table_of_metrics_and_times():
    out = _run("demo", "--rows", "4000", "--trees", "10", "--leaves", "15")
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("| library"))
    assert "training s" in header and "test AUC" in header
    row = next(line for line in out.stdout.splitlines() if line.startswith("| smartboost"))
    auc = float(row.split("|")[7])
    assert 0.7 < auc < 1.0


def test_help_and_errors():
    assert _run("--help").returncode == 0
    assert "demo" in _run("--help").stdout
    bad = _run("demo", "--leaves", "1")
    assert bad.returncode == 1
    assert bad.stderr.startswith("smartboost: error: parameter 'num_leaves'") and "Traceback" not in bad.stderr
    assert _run("nonsense").returncode == 2
