"""Ctrl-C and SIGTERM keep the work: real signals sent to real processes and to this one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.grower import TreeGrower

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _wait_for(process: subprocess.Popen, stream, text: str, timeout: float = 300.0) -> str:
    """Read ``stream`` line by line until a line holds ``text``; return what was read."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    process.kill()
    raise AssertionError(f"{text!r} never appeared; output:\n{''.join(seen)}")


_TRAIN_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import smartboost as sb

    class Say(sb.TrainingCallback):
        def after_iteration(self, env):
            print(f"iteration {env.iteration + 1}", flush=True)
            return False

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 10))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(float)
    try:
        sb.train({"objective": "binary", "num_leaves": 255, "min_data_in_leaf": 2, "verbosity": 0},
                 sb.Dataset(X, y), 1_000_000, callbacks=[sb.checkpoint(sys.argv[1], 10**9), Say()])
    except KeyboardInterrupt as exc:
        print(f"caught {type(exc).__name__} {exc.signum}", flush=True)
""")


def test_ctrl_c_during_training_saves_the_model_and_raises_keyboard_interrupt(tmp_path):
    path = tmp_path / "model.json"
    process = subprocess.Popen([sys.executable, "-c", _TRAIN_SCRIPT, str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    seen = _wait_for(process, process.stdout, "iteration 3")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    out = seen + out
    assert process.returncode == 0, err
    assert f"caught TrainingInterrupted {int(signal.SIGINT)}" in out
    assert "SystemError" not in err and "Traceback" not in err
    assert "training stops after the current iteration" in err
    last = max(int(line.split()[1]) for line in out.splitlines() if line.startswith("iteration"))
    assert sb.Booster(model_file=path).current_iteration() == last  # every finished iteration, no other


def _write_csv(path, X, y):
    np.savetxt(path, np.column_stack([y, X]), delimiter=",", fmt="%.17g")


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interrupt")
    X, y = make_binary(n=20000, n_features=8, seed=3)
    _write_csv(folder / "train.csv", X[:15000], y[:15000])
    _write_csv(folder / "valid.csv", X[15000:], y[15000:])
    return folder


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_cli_train_stopped_by_a_signal_saves_the_model_and_says_how_to_resume(csv_files, tmp_path, signum):
    model = tmp_path / "model.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "smartboost.cli", "train", str(csv_files / "train.csv"), "--valid",
         str(csv_files / "valid.csv"), "-o", str(model), "--objective", "binary", "--num_leaves", "255",
         "--min_data_in_leaf", "2", "--num_iterations", "1000000", "--log-period", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(process, process.stderr, "[3]")
    process.send_signal(signum)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, err
    assert "Traceback" not in err and "SystemError" not in err
    summary = [line for line in err.splitlines() if line.startswith("smartboost: ")]
    assert len(summary) == 1 and "resume with --init_model" in summary[0], err
    saved = sb.Booster(model_file=model).current_iteration()
    assert saved >= 3 and f"the model so far ({saved} iterations)" in summary[0]


@pytest.mark.parametrize("sampling", [[], ["--sampling", "bernoulli", "--sample_rate", "0.5"]])
def test_cli_resumed_training_equals_one_run(csv_files, tmp_path, sampling):
    from smartboost.cli import main

    common = [str(csv_files / "train.csv"), "--objective", "binary", "--num_leaves", "15", *sampling, "--seed", "7",
              "--verbosity", "-1"]
    assert main(["train", *common, "-o", str(tmp_path / "whole.json"), "--num_iterations", "20"]) == 0
    assert main(["train", *common, "-o", str(tmp_path / "part.json"), "--num_iterations", "8"]) == 0
    assert main(["train", *common, "-o", str(tmp_path / "resumed.json"), "--num_iterations", "12",
                 "--init_model", str(tmp_path / "part.json")]) == 0
    whole = sb.Booster(model_file=tmp_path / "whole.json")
    resumed = sb.Booster(model_file=tmp_path / "resumed.json")
    assert resumed.current_iteration() == 20
    assert [t.to_dict() for t in resumed.trees] == [t.to_dict() for t in whole.trees]


def test_a_second_ctrl_c_stops_the_iteration_at_once_and_keeps_finished_iterations(tmp_path, monkeypatch):
    """Two signals inside one iteration of a multiclass model (three trees per iteration): the run
    stops in the middle of it, and the checkpoint holds only whole iterations."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((600, 4))
    y = rng.integers(0, 3, 600).astype(float)
    grow = TreeGrower.grow
    calls = []

    def grow_and_interrupt(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 8:  # the second tree of the third iteration
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the handler runs: the first signal only asks to stop
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the second stops here
        return grow(self, *args, **kwargs)

    monkeypatch.setattr(TreeGrower, "grow", grow_and_interrupt)
    path = tmp_path / "model.json"
    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(sb.TrainingInterrupted):
        sb.train({"objective": "multiclass", "num_class": 3, "num_leaves": 4, "verbosity": -1},
                 sb.Dataset(X, y), 50, callbacks=[sb.checkpoint(path, 10**9)])
    assert len(calls) == 8
    assert sb.Booster(model_file=path).num_trees() == 6
    assert signal.getsignal(signal.SIGINT) is previous  # the handler is given back


def test_without_signals_the_handler_is_given_back():
    previous = signal.getsignal(signal.SIGINT)
    X, y = make_binary(n=500)
    sb.train({"objective": "binary", "num_leaves": 4, "verbosity": -1}, sb.Dataset(X, y), 3)
    assert signal.getsignal(signal.SIGINT) is previous
