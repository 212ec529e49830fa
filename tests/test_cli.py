"""The command line, run as a user runs it: a subprocess."""

import subprocess
import sys

import numpy as np
import pytest

import smartboost as sb
from smartboost.datasets import make_high_dim, make_higgs_like
from smartboost.objectives import make_objective


def _run(*args):
    return subprocess.run([sys.executable, "-m", "smartboost.cli", *args], capture_output=True, text=True, timeout=600)


def test_demo_prints_a_table_of_metrics_and_times():
    out = _run("demo", "--rows", "4000", "--trees", "10", "--leaves", "15")
    assert out.returncode == 0, out.stderr
    header = next(line for line in out.stdout.splitlines() if line.startswith("| library"))
    assert "training s" in header and "test AUC" in header
    row = next(line for line in out.stdout.splitlines() if line.startswith("| smartboost"))
    assert row.split("|")[4].strip() == "none"  # below sampling='auto''s 100,000 rows: the default uses every row
    auc, logloss, error = (float(cell) for cell in row.split("|")[8:11])
    # recomputed with scikit-learn from the same model: make_higgs_like's first 4,000 rows (seed 0)
    # for training and the next 1,000 for the test, the demo's defaults otherwise
    from sklearn.metrics import log_loss, roc_auc_score

    X, y = make_higgs_like(5000, seed=0)
    params = {"objective": "binary", "num_leaves": 15, "learning_rate": 0.1, "verbosity": -1, "seed": 0}
    p = sb.train(params, sb.Dataset(X[:4000], y[:4000], params=params), 10).predict(X[4000:])
    expected = (roc_auc_score(y[4000:], p), log_loss(y[4000:], p), np.mean((p > 0.5) != y[4000:]))
    assert (auc, logloss, error) == pytest.approx(expected, abs=5.1e-5)  # printed to 4 decimals


def test_evaluate_reads_the_metric_parameters_of_the_model(tmp_path):
    # a quantile model of alpha 0.2 was evaluated with the default alpha, 0.9
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 2))
    y = X[:, 0] + rng.exponential(size=400)
    train = sb.Dataset(X, y)
    booster = sb.train({"objective": "quantile", "alpha": 0.2, "verbosity": -1}, train, 5, valid_sets=[train],
                       valid_names=["data"])
    booster.save_model(tmp_path / "m.json")
    np.savetxt(tmp_path / "d.csv", np.c_[y, X], delimiter=",", header="y,a,b", comments="")
    out = _run("evaluate", str(tmp_path / "m.json"), str(tmp_path / "d.csv"))
    assert out.returncode == 0, out.stderr
    value = float(out.stdout.strip().splitlines()[-1].split("|")[2])
    assert value == pytest.approx(booster.evals_result["data"]["quantile"][-1], rel=1e-5)  # printed to 6 digits


def test_help_and_errors():
    assert _run("--help").returncode == 0
    assert "demo" in _run("--help").stdout
    bad = _run("demo", "--leaves", "1")
    assert bad.returncode == 1
    assert bad.stderr.startswith("smartboost: error: parameter 'num_leaves'") and "Traceback" not in bad.stderr
    assert _run("nonsense").returncode == 2


def _svmlight_files(tmp_path):
    from conftest import make_binary
    from sklearn.datasets import dump_svmlight_file

    X, y = make_binary(n=1500, seed=3)
    dump_svmlight_file(X[:1000], y[:1000], str(tmp_path / "train.svm"))
    dump_svmlight_file(X[1000:], y[1000:], str(tmp_path / "test.svm"))
    return X, y


def test_train_predict_evaluate_from_an_svmlight_file(tmp_path):
    import numpy as np

    import smartboost as sb
    from smartboost.metrics import get_metric

    X, y = _svmlight_files(tmp_path)
    model = tmp_path / "model.json"
    out = _run("train", str(tmp_path / "train.svm"), "--valid", str(tmp_path / "test.svm"), "-o", str(model),
               "--objective", "binary", "--num-leaves=7", "--num_iterations", "20", "--metric", "auc,logloss",
               "--log-period", "5")
    assert out.returncode == 0, out.stderr
    assert "trained 20 iterations" in out.stdout and str(model) in out.stdout
    assert "[20]\ttest.svm's auc:" in out.stderr
    booster = sb.Booster(model_file=model)
    assert booster.params["num_leaves"] == 7 and booster.num_trees() == 20

    predictions = tmp_path / "pred.txt"
    assert _run("predict", str(model), str(tmp_path / "test.svm"), "-o", str(predictions)).returncode == 0
    np.testing.assert_array_equal(np.loadtxt(predictions), booster.predict(X[1000:]))

    table = _run("evaluate", str(model), str(tmp_path / "test.svm"), "--metric", "auc", "--metric", "error")
    assert table.returncode == 0, table.stderr
    auc = float(next(line for line in table.stdout.splitlines() if line.startswith("| auc")).split("|")[2])
    expected = get_metric("auc")(y[1000:], booster.predict(X[1000:], raw_score=True), None)
    assert abs(auc - expected) < 1e-5


def test_train_from_csv_with_header_and_toml_config(tmp_path):
    import numpy as np

    import smartboost as sb

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = X[:, 0] * 2 + rng.standard_normal(400) * 0.1
    X[::7, 1] = np.nan
    lines = ["a,target,b,c"] + [f"{r[0]},{t},{'' if np.isnan(r[1]) else r[1]},{r[2]}" for r, t in zip(X, y)]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "params.toml").write_text('objective = "regression"\nnum_leaves = 5\nnum_iterations = 30\n')
    model = tmp_path / "m.json"
    out = _run("train", str(tmp_path / "train.csv"), "--label-column", "name:target", "--config",
               str(tmp_path / "params.toml"), "--num_leaves", "9", "-o", str(model))
    assert out.returncode == 0, out.stderr
    booster = sb.Booster(model_file=model)
    assert booster.feature_name() == ["a", "b", "c"]
    assert booster.params["num_leaves"] == 9 and booster.num_trees() == 30  # the option beats the file


def test_cli_errors_are_one_line(tmp_path):
    _svmlight_files(tmp_path)
    bad = _run("train", str(tmp_path / "train.svm"), "--num_leaf", "x")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "num_leaf" in bad.stderr
    unknown = _run("train", str(tmp_path / "train.svm"), "--numleaves", "3")
    assert unknown.returncode == 1 and "unknown parameter 'numleaves'" in unknown.stderr
    missing = _run("predict", str(tmp_path / "none.json"), str(tmp_path / "train.svm"))
    assert missing.returncode == 1 and "none.json" in missing.stderr
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    assert "not valid JSON" in _run("predict", str(corrupt), str(tmp_path / "train.svm")).stderr



def test_errors_found_in_training_name_the_file(tmp_path):
    rng = np.random.default_rng(0)
    X, grades = rng.normal(size=(60, 2)), rng.integers(0, 3, 60)
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, grades, str(tmp_path / "ranked.svm"), query_id=np.arange(60) // 10)
    dump_svmlight_file(X, grades, str(tmp_path / "unranked.svm"))
    (tmp_path / "huge.csv").write_text("y,a\n" + "".join(f"{1e308 if i else 1.0},{i}\n" for i in range(20)))
    (tmp_path / "binary.csv").write_text("y,a\n" + "".join(f"{i % 2},{i}\n" for i in range(20)))
    (tmp_path / "grades.csv").write_text("y,a\n" + "".join(f"{i % 3},{i}\n" for i in range(20)))

    def error(*args):
        out = _run("train", *(str(a) for a in args), "-o", str(tmp_path / "m.json"), "--num_iterations", "2")
        # a kernel not yet in numba's cache prints its compile notice first
        lines = [line for line in out.stderr.splitlines() if not line.startswith("[smartboost] compiling")]
        assert out.returncode == 1 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
        return lines[0].removeprefix("smartboost: error: ")
    # train() found them, and named no file (only its label checks were made beforehand, with the name)
    assert error(tmp_path / "unranked.svm", "--objective", "lambdarank").startswith(
        f"{tmp_path / 'unranked.svm'}: objective 'lambdarank' needs queries")
    assert error(tmp_path / "huge.csv", "--objective", "regression").startswith(
        f"{tmp_path / 'huge.csv'}: the start score overflows")
    # a validation file's labels name it, not the training file; a ranking metric's queries it lacks, its set
    assert error(tmp_path / "binary.csv", "--valid", tmp_path / "grades.csv", "--objective", "binary").startswith(
        f"{tmp_path / 'grades.csv'}: label must be 0 or 1")
    assert error(tmp_path / "ranked.svm", "--valid", tmp_path / "unranked.svm", "--objective", "lambdarank").startswith(
        f"{tmp_path / 'unranked.svm'}: the file has no queries, which metric 'ndcg@10' needs")
    # a metric's label rule (the objective takes any label): the validation file, not the training file
    assert error(tmp_path / "binary.csv", "--valid", tmp_path / "grades.csv", "--objective", "regression",
                 "--metric", "auc").startswith(f"{tmp_path / 'grades.csv'}: label must be 0 or 1")


def test_datasets_list_and_info():
    out = _run("datasets", "list")
    assert out.returncode == 0 and "| a9a | binary | svmlight | 123 |" in out.stdout
    info = _run("datasets", "info", "a8a")
    assert info.returncode == 0 and "csie.ntu.edu.tw" in info.stdout
    assert _run("datasets", "info", "nope").returncode == 1


def test_train_and_evaluate_a_ranking_file_with_a_query_side_file(tmp_path):
    import numpy as np
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(5)
    sizes = rng.integers(5, 20, 40)
    X = rng.standard_normal((sizes.sum(), 4))
    y = np.clip(np.round(X[:, 0] + 1), 0, 3)
    dump_svmlight_file(X, y, str(tmp_path / "rank.train"))
    np.savetxt(tmp_path / "rank.train.query", sizes, fmt="%d")
    model = tmp_path / "rank.json"
    out = _run("train", str(tmp_path / "rank.train"), "--objective", "lambdarank", "--num_iterations", "10",
               "--min_data_in_leaf", "5", "-o", str(model))
    assert out.returncode == 0, out.stderr
    table = _run("evaluate", str(model), str(tmp_path / "rank.train"), "--metric", "ndcg@5")
    assert table.returncode == 0, table.stderr
    ndcg = float(next(line for line in table.stdout.splitlines() if line.startswith("| ndcg@5")).split("|")[2])
    assert 0.7 < ndcg <= 1.0


def test_datasets_info_says_where_checksums_come_from():
    higgs = _run("datasets", "info", "higgs")
    assert higgs.returncode == 0 and "archive.ics.uci.edu" in higgs.stdout and "not verified here" in higgs.stdout
    msd = _run("datasets", "info", "year-prediction-msd")
    assert "sha256: not known (not verified)" in msd.stdout and "NOT verified" in msd.stdout
    listing = _run("datasets", "list").stdout
    assert "| mq2008 | ranking | svmlight | 46 | train/valid/test |" in listing
    assert "| year-prediction-msd | regression | csv | 90 | train/test | no | none known |" in listing


def _experiment(tmp_path, *args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "smartboost.cli", "experiment", *args, "--threads", "1",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def _table(stdout: str, first_cell: str) -> list[str]:
    """The cells of the first table row starting with ``first_cell``."""
    line = next(line for line in stdout.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_experiment_sampling_tables_and_figures(tmp_path):
    out = _experiment(tmp_path, "sampling", "--dataset", "synthetic", "--rows", "2000", "--trees", "8", "--leaves",
                      "7", "--rates", "0.3", "--samplers", "goss", "mvs:mvs_lambda=1", "--seeds", "2",
                      "--which", "smart-table", "mvs-figure", "iteration-cost")
    assert out.returncode == 0, out.stderr
    assert "### SMART table, synthetic: 2,000 train / 500 test rows" in out.stdout
    none, mvs = _table(out.stdout, "none"), _table(out.stdout, "mvs:mvs_lambda=1")
    assert none[2] != "-" and none[5] == "1"  # no sampling reaches its own target, speed-up 1
    assert abs(float(mvs[3]) - 0.3) < 0.05  # ASRI: the realised sample rate
    goss_point = next(line for line in out.stdout.splitlines() if line.startswith("| goss | 0.3 |"))
    # The MVS figure's 1-AUC mean, recomputed here with scikit-learn's AUC: the synthetic set's
    # 2,000 training and 500 test rows, seeds 0 and 1, the experiment's tree settings.
    from sklearn.metrics import roc_auc_score

    X, y = make_higgs_like(2500, seed=0)
    params = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 20,
              "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "num_threads": 1, "verbosity": -1,
              "sampling": "goss", "sample_rate": 0.3}
    errors = [1.0 - roc_auc_score(y[2000:], sb.train({**params, "seed": seed}, sb.Dataset(X[:2000], y[:2000]), 8)
                                  .predict(X[2000:], raw_score=True)) for seed in (0, 1)]
    assert float(goss_point.split("|")[3]) == pytest.approx(np.mean(errors), rel=1e-4)  # printed to 5 digits
    assert {p.name for p in tmp_path.iterdir()} == {
        "smart_table_synthetic_0.3.md", "smart_table_synthetic_0.3.png", "mvs_figure_synthetic.md",
        "mvs_figure_synthetic.png", "iteration_cost_synthetic.md"}
    assert (tmp_path / "mvs_figure_synthetic.png").read_bytes()[:4] == b"\x89PNG"


def test_experiment_ranking_table_and_figure(tmp_path):
    out = _experiment(tmp_path, "ranking", "--dataset", "synthetic", "--queries", "40", "--trees", "6", "--rates",
                      "0.5", "--samplers", "mvs", "smart2")
    assert out.returncode == 0, out.stderr
    assert "40 queries train" in out.stdout and "sampled runs train 12 trees, the other 6" in out.stdout
    assert _table(out.stdout, "none")[5] == "1"
    assert abs(float(_table(out.stdout, "smart2 0.5")[1]) - 0.5) < 0.05
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranking_smart_table_synthetic_31.md",
                                                          "ranking_smart_table_synthetic_31.png"]


def test_experiment_rgbm_without_matplotlib_prints_tables_only(tmp_path):
    import os

    blocker = tmp_path / "blocker" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('matplotlib blocked for this test')\n")
    results = tmp_path / "results"
    out = _experiment(results, "rgbm", "--dataset", "synthetic", "--trees", "8", "--t", "16", "5000",
                      env={"PYTHONPATH": os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])})
    assert out.returncode == 0, out.stderr
    assert "matplotlib is not installed: printing and saving tables only" in out.stderr
    assert "| 2000 (Type 0) |" in out.stdout  # t above F runs Type 0
    # The final test loss of t=16, recomputed from the model's predictions: the synthetic set's
    # 200 training and 500 test rows, the experiment's stump settings, Type 3 with t=16.
    X, y = make_high_dim(700, 2000, 10, 0)
    settings = {"objective": "regularized_logistic", "logistic_mu": 0.001}
    model = sb.train({**settings, "boosting": "gradient", "step_rule": "smooth", "learning_rate": 1.0, "max_depth": 1,
                      "min_data_in_leaf": 1, "num_threads": 1, "verbosity": -1, "selection_type": 3,
                      "selection_t": 16}, sb.Dataset(X[:200], y[:200]), 8)
    loss = make_objective(settings["objective"], settings).loss(y[200:], model.predict(X[200:], raw_score=True))
    assert float(_table(out.stdout, "16")[-1]) == pytest.approx(loss.mean(), rel=1e-4)  # printed to 5 digits
    assert [p.name for p in results.iterdir()] == ["rgbm_synthetic.md"]


def test_experiment_sampling_paper_protocol_tables(tmp_path):
    out = _experiment(tmp_path, "sampling", "--protocol", "paper", "--which", "smart-table", "mvs-figure", "--dataset",
                      "synthetic", "--rows", "1500", "--trees", "6", "--rhos", "1", "--rates", "0.8", "--seeds", "1",
                      "--folds", "2", "--no-plot")
    assert out.returncode == 0, out.stderr
    assert "LogitBoost (SMART's logistic form, from F = 0)" in out.stdout
    methods = ["baseline", "uniform 0.4", "trimming 0.42", "1st-order rho=1", "2nd-order rho=1",
               "2nd-order rho=1, no correction"]
    assert [_table(out.stdout, m)[0] for m in methods] == methods
    assert _table(out.stdout, "baseline")[-5:] == ["0.325", "60", "1", "65", "1"]  # the paper's figures beside
    assert abs(float(_table(out.stdout, "uniform 0.4")[3]) - 0.4) < 0.01  # ASRI
    assert "| goss | 0.8 |" in out.stdout and "cross-validated 1-AUC" in out.stdout
    assert "MVS learning time at rate 0.8" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mvs_paper_lambda_synthetic.md", "mvs_paper_synthetic.md", "mvs_paper_time_synthetic.md",
        "smart_paper_synthetic_best.md", "smart_paper_synthetic_target.md"]


def test_experiment_ranking_and_rgbm_paper_protocols(tmp_path):
    out = _experiment(tmp_path / "ranking", "ranking", "--protocol", "paper", "--queries", "40", "--trees", "5",
                      "--no-plot")
    assert out.returncode == 0, out.stderr
    assert "the paper's lambdas (no normalisation)" in out.stdout and "LightGBM's normalised lambdas" in out.stdout
    assert _table(out.stdout, "trimming 0.1")[0] == "trimming 0.1"
    assert any(line.startswith("| loss-based rho=") for line in out.stdout.splitlines())
    assert len(list((tmp_path / "ranking").iterdir())) == 4
    out = _experiment(tmp_path / "rgbm", "rgbm", "--protocol", "paper", "--dataset", "synthetic", "--seconds", "0.05",
                      "--types", "0", "2", "--no-plot")
    assert out.returncode == 0, out.stderr
    assert "the paper's normalised stumps from F = 0" in out.stdout
    steps = [(row[0], row[1]) for row in (_table(out.stdout, name) for name in ("Type 0 (t=2000)", "Type 2 (t=1)"))]
    assert steps == [("Type 0 (t=2000)", "line search"), ("Type 2 (t=1)", "line search")]
    assert out.stdout.count("| 1/sigma |") == 2


def test_experiment_errors_are_one_line(tmp_path):
    wrong_task = _experiment(tmp_path, "ranking", "--dataset", "a8a")
    assert wrong_task.returncode == 1 and "Traceback" not in wrong_task.stderr
    assert "a8a is a binary dataset; this experiment needs ranking data" in wrong_task.stderr
    unknown = _experiment(tmp_path, "rgbm", "--dataset", "nope")
    assert unknown.returncode == 1 and "unknown dataset 'nope'" in unknown.stderr
    bad_sampler = _experiment(tmp_path, "sampling", "--samplers", "mvs:lambda")
    assert bad_sampler.returncode == 2 and "not key=value" in bad_sampler.stderr
    assert "smart-table" in _run("experiment", "sampling", "--help").stdout
