"""The ``smartboost`` command line.

- ``smartboost train DATA -o model.json [--valid FILE] [--config params.toml] [--KEY VALUE ...]``:
  train on a data file (svmlight/LETOR, CSV/TSV, parquet; see :mod:`smartboost.datafile`); any
  training parameter of ``docs/reference/parameters.md`` is an option (``--num_leaves 63`` or
  ``--num-leaves=63``), and a TOML file can hold them (options win over the file).
- ``smartboost predict MODEL DATA [-o FILE] [--raw-score | --pred-leaf | --pred-contrib]
  [--num-iteration N] [--start-iteration N]``: one prediction (or row of leaves or SHAP values) per line.
- ``smartboost evaluate MODEL DATA [--metric NAME ...]``: a table of metrics.
- ``smartboost datasets list | info NAME | fetch NAME``: the public dataset registry.
- ``smartboost experiment sampling | ranking | rgbm``: the papers' tables (markdown) and figures
  (PNG, with matplotlib) on a registry dataset or a generated one; see :mod:`smartboost.experiments`.
- ``smartboost demo``: train and evaluate on a generated HIGGS-like set (no download) and print a
  table; the README's first command.

Data files are read strictly (:mod:`smartboost.datafile`): a CSV/TSV field that is neither a
number nor a missing-value token (``--na_values``) is an error naming its line and column,
except in the columns of ``--categorical_feature`` (feature indices not counting the label
column, as LightGBM's, or header names), which hold categories as text (a training file's
column of numbers only holds integer codes, read by value);
``--header auto|true|false`` says whether the first line is a header. The model remembers its
training file's svmlight index base (``--zero_based``), and ``--valid``, ``predict`` and
``evaluate`` files are read the same way, their CSV/TSV/parquet columns matched to the model's
features by name.

Errors print one line and exit with status 1 (2 for usage errors), unexpected ones (a bug) too;
``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from ._interrupt import interrupt_of, raise_interrupt
from .callback import CallbackEnv, TrainingCallback
from .errors import DataError, ParameterError, SmartBoostError

__all__ = ["main"]


def _auc(label: np.ndarray, prob: np.ndarray) -> float:
    from .metrics import get_metric

    return get_metric("auc")(label, prob, prob)


def _scores(label: np.ndarray, prob: np.ndarray) -> tuple[float, float, float]:
    eps = 1e-15
    p = np.clip(prob, eps, 1 - eps)
    logloss = float(-np.mean(label * np.log(p) + (1 - label) * np.log(1 - p)))
    return _auc(label, prob), logloss, float(np.mean((prob > 0.5) != (label == 1)))


def _run_smartboost(params, X, y, Xt, trees):
    from . import Dataset, train

    start = time.perf_counter()
    dataset = Dataset(X, y, params=params).construct()  # binned here, timed apart from training
    bin_seconds = time.perf_counter() - start
    start = time.perf_counter()
    booster = train(params, dataset, trees)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prob = booster.predict(Xt)
    return booster.params["sampling"], bin_seconds, train_seconds, time.perf_counter() - start, prob


def _run_lightgbm(params, X, y, Xt, trees):
    import lightgbm

    start = time.perf_counter()
    dataset = lightgbm.Dataset(X, y, params={"max_bin": 255, "verbose": -1}).construct()
    bin_seconds = time.perf_counter() - start
    start = time.perf_counter()
    booster = lightgbm.train({key: value for key, value in params.items() if key != "sampling"} | {"verbose": -1},
                             dataset, trees)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prob = booster.predict(Xt, num_threads=params["num_threads"])
    return "none", bin_seconds, train_seconds, time.perf_counter() - start, prob  # LightGBM's default


def _demo(args: argparse.Namespace, extra: list[str]) -> int:
    from . import compile_kernels
    from ._params import resolve_params
    from .datasets import make_higgs_like

    n_test = max(1, args.rows // 4)
    print(f"smartboost {__version__} demo: HIGGS-like synthetic binary data (generated, seed {args.seed}), "
          f"{args.rows:,} train / {n_test:,} test rows x 28 features")
    X, y = make_higgs_like(args.rows + n_test, seed=args.seed)
    X, y, Xt, yt = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
    params = {"objective": "binary", "num_leaves": args.leaves, "learning_rate": args.learning_rate,
              "num_threads": args.threads, "verbosity": -1, "seed": args.seed}
    if args.sampling is not None:
        params["sampling"] = args.sampling
    resolve_params(params)  # a bad option fails at once, not after the kernels compile
    print(f"kernel compile/load: {compile_kernels():.1f} s (cached after the first run; not in the timings "
          "below)\n")
    runs = [("smartboost", _run_smartboost)]
    if args.compare:
        runs.append(("lightgbm", _run_lightgbm))
    print("| library | trees | leaves | sampling | binning s | training s | prediction s | test AUC | test logloss | "
          "test error |\n|---|---|---|---|---|---|---|---|---|---|")
    for name, run in runs:
        try:
            sampling, bin_s, train_s, predict_s, prob = run(params, X, y, Xt, args.trees)
        except ImportError:
            print(f"| {name} | not installed | | | | | | | | |")
            continue
        auc, logloss, error = _scores(yt, prob)
        print(f"| {name} | {args.trees} | {args.leaves} | {sampling} | {bin_s:.2f} | {train_s:.2f} | "
              f"{predict_s:.3f} | {auc:.4f} | {logloss:.4f} | {error:.4f} |")
    return 0


# -- train / predict / evaluate --------------------------------------------------------------

def _option_value(text: str) -> Any:
    """A command-line value as the parameter registry takes it: int, float, bool or str."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _extra_params(tokens: list[str]) -> dict[str, Any]:
    """``--key value`` / ``--key=value`` pairs (a bare ``--switch`` is True) as a params dict."""
    params: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--") or len(token) == 2:
            raise argparse.ArgumentTypeError(f"unexpected argument {token!r}; parameters are given as --name value")
        key, has_value, value = token[2:].partition("=")
        key = key.replace("-", "_")
        if not has_value:
            if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                value, i = tokens[i + 1], i + 1
            else:
                value = _bare_value(key, token)
        value = _option_value(value)
        if params.get(key, value) != value:  # the last would silently win, as between aliases it may not
            raise ParameterError(f"parameter '{key}' given twice with different values: {params[key]!r} and {value!r}"
                                 + (" (several metrics are one comma-separated value: --metric auc,logloss)"
                                    if key == "metric" else ""))
        params[key] = value
        i += 1
    return params


def _bare_value(key: str, option: str) -> str:
    """The value of a bare ``option`` of parameter ``key`` (no value follows): 'true' for a parameter that takes
    True (a switch, ``--lambdarank_norm``); any other needs a value, and would otherwise be
    refused as "must be an integer, got True"."""
    from ._params import canonical_param_name, resolve_params

    canonical_param_name(key)  # an unknown name is refused as such
    try:
        resolve_params({key: True})
    except ParameterError:
        raise ParameterError(f"{option} needs a value ({option} VALUE or {option}=VALUE)") from None
    return "true"


def _label_column(text: str) -> int | str | None:
    """``--label-column``: 'auto', None ('none'), an index, or a header name (``name:<column>`` as in
    LightGBM, or the bare name when it is not a number)."""
    if text.lower() in ("none", "auto"):
        return None if text.lower() == "none" else "auto"
    try:
        return int(text)
    except ValueError:
        return text if text.startswith("name:") else f"name:{text}"


def _choice(text: str) -> bool | str:
    """``auto``, ``true`` or ``false`` as 'auto', True or False."""
    return {"true": True, "false": False}.get(text.lower(), text.lower())


def _read_options(args: argparse.Namespace):
    """The data options of a command as the readers take them."""
    from .datafile import ReadOptions

    return ReadOptions(args.format, args.label_column, args.header, args.na_values, args.zero_based)


def _read_for_booster(path: str, args: argparse.Namespace, booster):
    """A file to predict or evaluate with ``booster`` (:func:`smartboost.datafile.read_for_model`;
    names ``Column_<i>`` are no names)."""
    from ._data import default_names
    from .datafile import read_for_model, text_refs

    names = None if default_names(booster.feature_names) else booster.feature_names
    return read_for_model(path, _read_options(args), booster.num_feature(), names,
                          (booster.data_format or {}).get("svmlight_zero_based"), text_refs(booster.bin_mapper, names))


@contextlib.contextmanager
def _naming(path: str):
    """Raise a DataError of the data of file ``path`` (its labels, query ids: "row 2 has 5.0"; in
    training, anything train() finds wrong with it: a start score that overflows, no queries for a
    ranking objective) with the file's name, so that the one of several files it is about is known."""
    try:
        yield
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None


class _KeepDataFormat(TrainingCallback):
    """Put how the training file was read into the model, before the checkpoint first writes it,
    so that every later file of the model is read the same way."""

    def __init__(self, data_format: dict[str, Any] | None) -> None:
        self.data_format = data_format

    def before_training(self, env: CallbackEnv) -> None:
        """Set ``env.booster.data_format``."""
        env.booster.data_format = self.data_format


# The data options of some formats only, with their defaults. One given when no data file of the
# command is of those formats would be silently ignored (--label-column 3 with an svmlight file
# trained on the first field); a file of another format beside one of them may need it, though.
_FORMAT_OPTIONS = {"label_column": ("--label-column", ("csv", "tsv", "parquet"), "auto"),
                   "header": ("--header", ("csv", "tsv"), "auto"),
                   "na_values": ("--na-values", ("csv", "tsv"), None),
                   "zero_based": ("--zero-based", ("svmlight",), "auto")}


def _check_format_options(args: argparse.Namespace, paths: list[str]) -> None:
    """Refuse a data option (``--label-column``, ``--header``, ``--na-values``, ``--zero-based``)
    given for data ``paths`` none of which is of a format it applies to."""
    from .datafile import guess_format

    formats = {path: args.format or guess_format(path) for path in paths}
    for dest, (option, applies, default) in _FORMAT_OPTIONS.items():
        if getattr(args, dest) != default and not set(formats.values()) & set(applies):
            files = ", ".join(f"{path} is {fmt}" for path, fmt in formats.items())
            raise ParameterError(f"{option} applies only to {'/'.join(applies)} files, and {files}: it would be "
                                 "ignored")


def _check_output(path: str) -> None:
    """Refuse an ``--output`` that cannot be written before the data is read and the model
    trained (or predicted), not after."""
    if not path:
        raise ParameterError("--output is empty: name the file to write")
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise ParameterError(f"--output {path} is a directory: name the file to write")
    if not target.parent.is_dir():
        raise ParameterError(f"--output {path}: the folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK | os.X_OK) or target.exists() and not os.access(target, os.W_OK):
        raise ParameterError(f"--output {path}: permission denied")


def _read_config(path: str) -> dict[str, Any]:
    """The parameters of a ``--config`` TOML file; text that is not UTF-8 or not TOML is a
    ParameterError naming the file (and the line and column where TOML says)."""
    with open(path, "rb") as f:
        content = f.read()
    try:
        return tomllib.loads(content.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = content.count(b"\n", 0, exc.start) + 1
        raise ParameterError(f"--config {path}: line {line}: not UTF-8 text (byte {content[exc.start]:#04x})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"--config {path}: not a TOML file: {exc}") from None


def _train(args: argparse.Namespace, extra: list[str]) -> int:
    from . import Checkpoint, Dataset, TrainingInterrupted, log_evaluation, train
    from ._config import set_verbosity
    from ._params import resolve_params, training_params
    from .datafile import read_for_model, read_training, text_refs
    from .engine import check_evaluation_data, training_metrics, training_objective

    _check_output(args.output)
    _check_format_options(args, [args.data, *(args.valid or [])])
    params: dict[str, Any] = _read_config(args.config) if args.config else {}
    params.update(_extra_params(extra))
    # a bad option fails at once, before the data is read and the kernels compile
    resolved = resolve_params(params)
    set_verbosity(resolved["verbosity"])
    init_model = _load_model(args.init_model) if args.init_model else None
    # a resumed run reads its training file as the model's was read
    data = (read_training(args.data, _read_options(args), resolved["categorical_feature"]) if init_model is None
            else _read_for_booster(args.data, args, init_model))
    if data.label is None:
        raise SmartBoostError(f"{args.data} has no label column; training needs labels")
    start = time.perf_counter()
    with _naming(args.data):
        train_set = Dataset(data.X, data.label, feature_name=data.feature_names, params=params, qid=data.qid,
                            reference=init_model)
    typed = training_params(params)
    objective = training_objective(typed)
    metrics = training_metrics(typed, objective)
    valid_sets, valid_names = [], []
    for path in args.valid or []:
        valid = read_for_model(path, _read_options(args), data.X.shape[1], data.feature_names, data.zero_based,
                               text_refs(train_set.bin_mapper, data.feature_names))
        if valid.label is None:
            raise SmartBoostError(f"{path} has no label column; a validation file needs labels")
        with _naming(path):
            valid_sets.append(Dataset(valid.X, valid.label, reference=train_set, qid=valid.qid))
            # here, as train()'s own checks of them would be named after the training file
            objective.check_label(valid_sets[-1].label, "label", training=False)
            check_evaluation_data(metrics, valid_sets[-1].label, valid_sets[-1].query_starts, "label", "the file")
        valid_names.append(Path(path).name)
    # the checkpoint also writes the final model, and the model so far on Ctrl-C or SIGTERM
    saver = Checkpoint(args.output, args.checkpoint_period or sys.maxsize, verbose=False)
    callbacks = [_KeepDataFormat(None if data.zero_based is None else {"svmlight_zero_based": data.zero_based}),
                 saver]
    if valid_sets and args.log_period > 0:
        callbacks.append(log_evaluation(args.log_period))
    try:
        with _naming(args.data):
            booster = train(params, train_set, valid_sets=valid_sets, valid_names=valid_names, callbacks=callbacks,
                            init_model=init_model)
    except TrainingInterrupted as exc:
        if saver.saved_iterations is None:  # stopped before the loop began
            raise
        done = saver.saved_iterations - (init_model.current_iteration() if init_model else 0)
        asked = resolve_params(params)["num_iterations"]
        print(f"smartboost: {signal.Signals(exc.signum).name}: stopped after {done} of {asked} iterations; the model "
              f"so far ({saver.saved_iterations} iterations) is saved in {args.output}; resume with --init_model "
              f"{args.output} --num_iterations {asked - done}", file=sys.stderr)
        return 128 + exc.signum
    print(f"trained {booster.current_iteration()} iterations ({booster.num_trees()} trees) on "
          f"{train_set.num_data():,} rows x {train_set.num_feature()} features in "
          f"{time.perf_counter() - start:.2f} s; model saved to {args.output}")
    return 0


def _load_model(path: str):
    from . import Booster

    return Booster(model_file=path)


def _predict(args: argparse.Namespace, extra: list[str]) -> int:
    if args.output is not None:
        _check_output(args.output)
    _check_format_options(args, [args.data])
    booster = _load_model(args.model)
    data = _read_for_booster(args.data, args, booster)
    prediction = booster.predict(data.X, raw_score=args.raw_score, start_iteration=args.start_iteration,
                                 num_iteration=args.num_iteration, pred_leaf=args.pred_leaf,
                                 pred_contrib=args.pred_contrib)
    out = open(args.output, "w") if args.output else sys.stdout
    try:
        # one column per output; reshape(n, -1) cannot size the columns of zero rows
        np.savetxt(out, prediction[:, None] if prediction.ndim == 1 else prediction,
                   fmt="%d" if args.pred_leaf else "%.17g", delimiter="\t")
    finally:
        if args.output:
            out.close()
    return 0


def _evaluate(args: argparse.Namespace, extra: list[str]) -> int:
    from ._data import to_query_starts
    from .engine import model_metrics

    _check_format_options(args, [args.data])
    booster = _load_model(args.model)
    data = _read_for_booster(args.data, args, booster)
    if data.label is None:
        raise SmartBoostError(f"{args.data} has no label column; evaluation needs labels")
    if len(data.label) == 0:  # every metric of no rows is NaN
        raise DataError(f"{args.data} has no rows; evaluation needs labelled rows")
    with _naming(args.data):
        label = booster.objective.check_label(np.asarray(data.label, np.float64), "label", training=False)
        queries = to_query_starts(None, data.qid, len(label))
    raw = booster.predict(data.X, raw_score=True)
    raw = raw.T if raw.ndim == 2 else raw  # metrics take class-major multiclass scores
    prediction = booster.objective.transform(raw)
    # the parameters the model was trained with shape them: a quantile model's alpha, not the default 0.9
    metrics = model_metrics(booster, args.metric or None)
    if not metrics:
        raise SmartBoostError("the model has no metric (its objective has no default one); name one with --metric")
    rows = []  # every metric computed before the table is printed, so that an error leaves no half table
    for metric in metrics:
        value = metric.evaluate(booster.objective, label, raw, prediction, None, queries)
        rows.append(f"| {metric.name} | {value:.6g} |")
    print("\n".join([f"| metric | {Path(args.data).name} |", "|---|---|", *rows]))
    return 0


# -- datasets --------------------------------------------------------------------------------

def _datasets(args: argparse.Namespace, extra: list[str]) -> int:
    from . import datasets

    if args.action == "list":
        print(f"cache folder: {datasets.cache_dir()}\n")
        print("| name | task | format | features | splits | cached | checksums |\n|---|---|---|---|---|---|---|")
        for name, d in datasets.REGISTRY.items():
            cached = all((datasets.cache_dir() / f.path).is_file() for f in d.files)
            print(f"| {name} | {d.task} | {d.format} | {d.n_features} | {'/'.join(d.splits)} | "
                  f"{'yes' if cached else 'no'} | {d.checksums.split(':')[0]} |")
        return 0
    if args.name is None:
        raise SmartBoostError(f"datasets {args.action} needs a dataset name (see `smartboost datasets list`)")
    d = datasets.get(args.name)
    if args.action == "info":
        print(f"{d.name} ({d.task}, {d.format}, {d.n_features} features; splits: {', '.join(d.splits)})\n"
              f"  {d.description}\n  checksums: {d.checksums}")
        for f in d.files:
            path = datasets.cache_dir() / f.path
            print(f"  {f.url}{f' (member {f.member})' if f.member else ''}\n"
                  f"    cache: {path} ({'present' if path.is_file() else 'missing'})")
            for what, value in (("sha256", f.sha256), ("sha256 of the content", f.sha256_content)):
                print(f"    {what}: {value or 'not known (not verified)'}")
        return 0
    for path in dict.fromkeys(datasets.fetch(args.name, download=not args.offline)):
        print(f"{path}: ok")
    return 0


# -- experiments -----------------------------------------------------------------------------

def _sampler_spec(text: str):
    """``NAME`` or ``NAME:key=value,key=value`` as a sampler of the experiments."""
    from .experiments.sampling import SamplerSpec

    name, _, options = text.partition(":")
    params: dict[str, Any] = {"sampling": name}
    for option in filter(None, options.split(",")):
        key, has_value, value = option.partition("=")
        if not has_value:
            raise argparse.ArgumentTypeError(f"sampler option {option!r} of {text!r} is not key=value")
        params[key.strip().replace("-", "_")] = _option_value(value.strip())
    return SamplerSpec(text, params)


def _report(results, args: argparse.Namespace) -> None:
    """Print each result's table and save it (and its figure) under ``--out``."""
    for result in results:
        print(result.markdown() + "\n")
        paths = result.save(args.out, plot=args.plot)
        print(f"saved: {', '.join(str(p) for p in paths)}\n")


def _start_experiment(args: argparse.Namespace) -> None:
    """Say when figures cannot be drawn (every timed run warms its own kernels up first)."""
    from .experiments.report import matplotlib_available

    if args.plot and not matplotlib_available():
        args.plot = False
        print("matplotlib is not installed: printing and saving tables only, no figures "
              "(pip install 'smartboost[plot]')", file=sys.stderr)


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr)


def _protocol_threads(args: argparse.Namespace) -> None:
    """``--threads`` left unset: all for smartboost's protocol; one for the papers' (the RGBM
    paper's one CPU; steadier timings on a shared machine)."""
    if args.threads is None:
        args.threads = 1 if args.protocol == "paper" else 0


def _trees(args: argparse.Namespace, default: int) -> int:
    """``--trees``, or the experiment's default."""
    return default if args.trees is None else args.trees


def _experiment_sampling(args: argparse.Namespace, extra: list[str]) -> int:
    from .experiments import sampling

    _protocol_threads(args)
    if args.protocol == "paper":
        return _experiment_sampling_paper(args)
    args.trees = _trees(args, 300)
    data = sampling.load(args.dataset or "a8a", args.rows, args.seed)
    _start_experiment(args)
    common = {"leaves": args.leaves, "threads": args.threads, "progress": _progress}
    results = []
    for which in dict.fromkeys(args.which):
        print(f"{which} on {data.describe()}", file=sys.stderr)
        if which == "smart-table":
            samplers = args.samplers or sampling.DEFAULT_SAMPLERS
            if samplers[0].params.get("sampling") != "none":
                samplers = [sampling.SamplerSpec("none", {"sampling": "none"}), *samplers]
            results += [sampling.smart_table(data, rate, args.trees, samplers, args.tolerance, **common)
                        for rate in args.rates or [0.2]]
        elif which == "mvs-figure":
            results.append(sampling.mvs_figure(data, args.rates or [0.02, 0.05, 0.1, 0.2, 0.5, 1.0], args.trees,
                                               args.samplers or sampling.MVS_FIGURE_SAMPLERS,
                                               range(args.seed, args.seed + args.seeds), **common))
        else:
            results.append(sampling.iteration_cost(data, args.rates or [0.05, 0.1, 0.2], args.trees,
                                                   args.samplers or sampling.COST_SAMPLERS, **common))
    _report(results, args)
    return 0


def _experiment_sampling_paper(args: argparse.Namespace) -> int:
    """``--protocol paper``: SMART's a8a tables (smart-table) and the MVS comparison (mvs-figure)."""
    from .experiments import sampling

    _start_experiment(args)
    results = []
    for which in dict.fromkeys(args.which):
        if which == "iteration-cost":
            raise ParameterError("--protocol paper runs smart-table and mvs-figure (iteration-cost has no paper "
                                 "protocol)")
        if which == "smart-table":
            data = sampling.load(args.dataset or "a8a", args.rows, args.seed)
            print(f"SMART's tables under its protocol on {data.describe()}", file=sys.stderr)
            results += sampling.smart_paper_tables(data, _trees(args, 500), sampling.smart_paper_methods(args.rhos),
                                                   leaves=args.leaves or 31, threads=args.threads,
                                                   progress=_progress)
        else:
            data = sampling.load(args.dataset or "synthetic", args.rows or 100_000, args.seed)
            print(f"the MVS comparison under its protocol on {data.describe()}", file=sys.stderr)
            results += sampling.mvs_paper_tables(data, args.rates or [0.1, 0.2, 0.5, 0.8], _trees(args, 100),
                                                 range(args.seed, args.seed + args.seeds), args.folds,
                                                 leaves=args.leaves or 31, threads=args.threads,
                                                 progress=_progress)
    _report(results, args)
    return 0


def _experiment_ranking(args: argparse.Namespace, extra: list[str]) -> int:
    from .experiments import ranking

    _protocol_threads(args)
    args.trees = _trees(args, 100)
    paper = args.protocol == "paper"
    data = ranking.load(args.dataset or ("synthetic" if paper else "mq2008"), args.queries or (2000 if paper else None),
                        args.rows, args.seed)
    _start_experiment(args)
    if paper:
        print(f"SMART's LambdaMART tables under its protocol on {data.describe()}", file=sys.stderr)
        results = [table for rate in args.rates or [0.1]
                   for table in ranking.smart_paper_tables(data, args.trees, rate, leaves=args.leaves,
                                                           threads=args.threads, progress=_progress)]
    else:
        print(f"ranking SMART table on {data.describe()}", file=sys.stderr)
        results = [ranking.smart_table(data, args.rates or [0.1, 0.2], args.trees,
                                       args.samplers or ranking.DEFAULT_SAMPLERS, args.leaves, args.tolerance,
                                       args.threads, _progress)]
    _report(results, args)
    return 0


def _experiment_rgbm(args: argparse.Namespace, extra: list[str]) -> int:
    from .experiments import rgbm

    _protocol_threads(args)
    args.trees = _trees(args, 500)
    paper = args.protocol == "paper"
    data = rgbm.load(args.dataset or "a9a", args.rows, args.seed, holdout=0.2 if paper else None)
    _start_experiment(args)
    if paper:
        print(f"RGBM under its protocol on {data.describe()}", file=sys.stderr)
        result = rgbm.rgbm_paper_figure(data, args.seconds, args.types, threads=args.threads, progress=_progress)
    else:
        print(f"RGBM curves on {data.describe()}", file=sys.stderr)
        result = rgbm.rgbm_figure(data, args.trees, args.t, args.threads, _progress)
    _report([result], args)
    return 0


def _add_experiment(commands, name: str, run, help: str, description: str, dataset: str, trees: str,
                    epilog: str) -> argparse.ArgumentParser:
    command = commands.add_parser(name, help=help, description=description, epilog=epilog,
                                  formatter_class=argparse.RawDescriptionHelpFormatter, parents=[_DEBUG])
    command.add_argument("--protocol", choices=["default", "paper"], default="default",
                         help="'default': smartboost's settings; 'paper': the paper's own protocol (docs/papers.md) "
                              "(default: default)")
    command.add_argument("--dataset", default=None,
                         help=f"a name of `smartboost datasets list`, or 'synthetic' (generated) (default {dataset})")
    command.add_argument("--trees", type=int, default=None, help=f"boosting iterations per run (default {trees})")
    command.add_argument("--rows", type=int, default=None,
                         help="training rows: public sets keep only the first ROWS (quick runs); generated sets "
                              "that are sized by rows have ROWS")
    command.add_argument("--seed", type=int, default=0,
                         help="seed of generated data and of the held-out test quarter of sets without a test split")
    command.add_argument("--threads", type=int, default=None,
                         help="threads (default 0: all; 1 under --protocol paper)")
    command.add_argument("--out", default="smartboost-results",
                         help="folder for the markdown tables and PNG figures (default ./smartboost-results)")
    command.add_argument("--no-plot", dest="plot", action="store_false", help="tables only, no PNG figures")
    command.set_defaults(run=run)
    return command


def _add_experiment_commands(commands) -> None:
    experiment = commands.add_parser(
        "experiment", help="reproduce the papers' tables and figures (sampling, ranking, rgbm)",
        description="Run the experiments of the papers smartboost implements on a registry dataset or a generated "
                    "one; each prints markdown tables and saves them, with PNG figures when matplotlib is "
                    "installed, under --out. docs/papers.md shows results.")
    kinds = experiment.add_subparsers(dest="experiment", required=True)
    samplers_help = ("samplers: a `sampling` value, optionally with parameters: mvs:mvs_lambda=1 "
                     "goss:goss_top_rate=0.05 (default: the experiment's list)")

    sampling = _add_experiment(
        kinds, "sampling", _experiment_sampling, "SMART table, MVS figure, iteration cost",
        "Row-sampling experiments (binary data):\n"
        "  smart-table     SMART's Table 2: per sampler, the iteration and seconds at which test logloss first\n"
        "                  reaches the no-sampling best + --tolerance, and the mean sample rate (ASRI); one\n"
        "                  table per --rates value (default 0.2); figure: logloss vs iterations and seconds\n"
        "  mvs-figure      the MVS paper's Figure 1: test 1-AUC and logloss after --trees trees against the\n"
        "                  sample rate (default 0.02 ... 1.0), mean +- std over --seeds seeds\n"
        "  iteration-cost  median ms per iteration per sampler and rate (default 0.05 0.1 0.2) vs none\n"
        "'synthetic' is a generated HIGGS-like set of --rows training rows (default 1,000,000).\n"
        "--protocol paper:\n"
        "  smart-table     SMART's a8a Table 2 as the paper ran it: LogitBoost from F = 0, fixed rho per\n"
        "                  importance sampler (--rhos; the sample size follows the gradients, ASRI reported),\n"
        "                  uniform 0.4, trimming 0.42, runs timed in lockstep; the table at test loss 0.325\n"
        "                  and the table at each method's best, beside the paper's (--trees default 500)\n"
        "  mvs-figure      the MVS comparison: test 1-AUC per rate (default 0.1 0.2 0.5 0.8) with GOSS's\n"
        "                  ratio and MVS's lambda tuned by --folds-fold CV, the lambda sweep, and at 0.8 the\n"
        "                  time to the no-sampling AUC (default data: synthetic, 100,000 rows; --trees 100)",
        "a8a (paper mvs-figure: synthetic)", "300 (paper: 500 smart-table, 100 mvs-figure)",
        "example: smartboost experiment sampling --dataset a8a --which smart-table mvs-figure --seeds 3\n"
        "         smartboost experiment sampling --protocol paper --which smart-table")
    sampling.add_argument("--which", nargs="+", choices=["smart-table", "mvs-figure", "iteration-cost"],
                          default=["smart-table"], help="what to run (default smart-table)")
    sampling.add_argument("--rates", type=float, nargs="+", help="sample rates (default: per experiment)")
    sampling.add_argument("--samplers", type=_sampler_spec, nargs="+", help=samplers_help)
    sampling.add_argument("--seeds", type=int, default=5, help="mvs-figure: seeds per point (default 5)")
    sampling.add_argument("--leaves", type=int, default=None,
                          help="leaves per tree (default 255 on synthetic, else 31)")
    sampling.add_argument("--tolerance", type=float, default=0.002,
                          help="smart-table: target = no-sampling best test logloss + this (default 0.002)")
    sampling.add_argument("--rhos", type=float, nargs="+", default=[0.5, 1.0, 2.0],
                          help="--protocol paper smart-table: the fixed rho values of first- and second-order "
                               "sampling (default 0.5 1 2)")
    sampling.add_argument("--folds", type=int, default=5,
                          help="--protocol paper mvs-figure: cross-validation folds of the tuning (default 5)")

    ranking = _add_experiment(
        kinds, "ranking", _experiment_ranking, "SMART's LambdaMART table",
        "LambdaMART with each sampler at each rate (twice the trees) against no sampling: the seconds and\n"
        "iteration at which test NDCG@10 first reaches the no-sampling best - --tolerance, and the mean\n"
        "sample rate (ASRI); figure: test NDCG@10 against iterations and seconds. Ranking sets: mq2008,\n"
        "mslr-5k, lightgbm-rank, mslr-web10k; 'synthetic' is a generated MSLR-like set of --queries queries.\n"
        "--protocol paper: SMART's WEB30K table's methods (baseline, uniform, trimming, loss-based, first and\n"
        "second order; the importance samplers at the fixed rho that keeps the rate at the first iteration),\n"
        "with the paper's lambdas and with LightGBM's normalisation, runs timed in lockstep; tables at the\n"
        "best NDCG@10 of uniform sampling and at each method's best (default: synthetic, 2,000 queries, rate 0.1).",
        "mq2008 (paper: synthetic)", "100",
        "example: smartboost experiment ranking --dataset synthetic --queries 2000 --rates 0.1 0.2\n"
        "         smartboost experiment ranking --protocol paper --queries 2000")
    ranking.add_argument("--rates", type=float, nargs="+", default=None,
                         help="sample rates (default 0.1 0.2; paper: 0.1)")
    ranking.add_argument("--samplers", type=_sampler_spec, nargs="+", help=samplers_help)
    ranking.add_argument("--leaves", type=int, default=31, help="leaves per tree (default 31)")
    ranking.add_argument("--queries", type=int, default=None, help="synthetic: training queries (default 10,000)")
    ranking.add_argument("--tolerance", type=float, default=0.002,
                         help="target = no-sampling best test NDCG@10 - this (default 0.002)")

    rgbm = _add_experiment(
        kinds, "rgbm", _experiment_rgbm, "RGBM's loss curves per number of candidate features",
        "Stumps with first-order boosting and step 1/sigma; one run per number t of candidate features drawn\n"
        "per tree (Type 3), t = F being Type 0. Table: training loss reached within fractions of the t = F\n"
        "run's time, and the final test loss; figure: losses against iterations and seconds. Binary sets use\n"
        "the regularised logistic loss (mu 0.001), regression sets the squared loss; 'synthetic' is a\n"
        "generated p >> n set (200 rows x 2,000 features); 'rcv1-like' and 'yearprediction-like' are\n"
        "generated stand-ins for the paper's rcv1 and YearPredictionMSD.\n"
        "--protocol paper: the paper's normalised stumps from F = 0, every Type (0; 1 with t pairs; 2; 3 with\n"
        "t features; t on the paper's geometric grid), each with line search and with 1/sigma, an 80/20\n"
        "random split, 100 thresholds per feature, --seconds of training per run in lockstep; training and\n"
        "test losses compared at equal times.",
        "a9a", "500", "example: smartboost experiment rgbm --dataset colon-cancer --t 16 64 256\n"
                      "         smartboost experiment rgbm --protocol paper --dataset colon-cancer --seconds 2")
    rgbm.add_argument("--t", type=int, nargs="+", help="candidate features per tree (default 1, 2, 4, ..., F)")
    rgbm.add_argument("--seconds", type=float, default=5.0,
                      help="--protocol paper: training seconds of every run (default 5)")
    rgbm.add_argument("--types", type=int, nargs="+", choices=[0, 1, 2, 3], default=[0, 1, 2, 3],
                      help="--protocol paper: selection Types to run (default 0 1 2 3)")


# -- parser ----------------------------------------------------------------------------------

# --debug is also an option of every command, so that it may follow the command name as it may
# precede it ('smartboost train data --debug' read it as a training parameter). No default there:
# a command without it keeps the top-level value.
_DEBUG = argparse.ArgumentParser(add_help=False)
_DEBUG.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")

def _add_data_options(command: argparse.ArgumentParser) -> None:
    from .datafile import FORMATS, NA_VALUES

    command.add_argument("--format", choices=FORMATS, default=None,
                         help="data format (default: from the file name; no extension means svmlight)")
    command.add_argument("--label-column", type=_label_column, default="auto",
                         help="CSV/TSV/parquet label column: an index (from 0), a header name (or "
                              "'name:<column>'), 'none' or 'auto' "
                              "(default): the first column of a training file; for a model's files, the one column "
                              "of a header that is not a feature (none: no label), or without names the first "
                              "column when there is one more than the model's features")
    command.add_argument("--header", type=_choice, choices=["auto", True, False], default="auto",
                         metavar="{auto,true,false}",
                         help="CSV/TSV: whether the first line is a header; auto (default): when one of its fields "
                              "is neither a number nor a missing value. A model's files are matched to its "
                              "features by header name (any order; missing or unknown columns are errors)")
    command.add_argument("--na-values", "--na_values", type=lambda text: text.split(","), default=None,
                         metavar="TOKENS",
                         help="CSV/TSV: comma-separated missing-value tokens besides the empty field (default: "
                              f"{','.join(NA_VALUES)}); any other field that is not a number is an error")
    command.add_argument("--zero-based", "--zero_based", type=_choice, choices=["auto", True, False],
                         default="auto", metavar="{auto,true,false}",
                         help="svmlight: whether indices start at 0; auto (default): when the training file has "
                              "an index 0. A model keeps its training file's choice and reads its other files "
                              "the same way")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="smartboost", description="Gradient boosting with fast row sampling.")
    parser.add_argument("--version", action="version", version=f"smartboost {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser(
        "train", help="train a model on a data file",
        description="Train on a data file and save the model. Any training parameter (docs/reference/parameters.md) is "
                    "an option: --objective binary --num_leaves 63 --learning-rate 0.05 --num_iterations 500 "
                    "--sampling mvs --sample_rate 0.2 ...",
        epilog="example: smartboost train a9a --valid a9a.t --objective binary --metric auc -o model.json",
        allow_abbrev=False, parents=[_DEBUG])
    train.add_argument("data", help="training data file")
    train.add_argument("-o", "--output", default="model.json", help="model file to write (default model.json)")
    train.add_argument("--valid", action="append", help="validation data file (repeatable)")
    train.add_argument("--config", help="TOML file of training parameters (options override it)")
    train.add_argument("--log-period", type=int, default=10, help="iterations between evaluation lines (0: none)")
    train.add_argument("--checkpoint-period", type=int, default=0,
                       help="also write the model every this many iterations (0: at the end only); Ctrl-C or "
                            "SIGTERM stops training after the current iteration and leaves the model trained so "
                            "far in the output file (exit status 130 or 143); a second Ctrl-C stops at once")
    train.add_argument("--init-model", "--init_model", dest="init_model",
                       help="continue training this model file (a resumed run draws the same samples as an "
                            "uninterrupted one); --num_iterations counts the new iterations")
    _add_data_options(train)
    train.set_defaults(run=_train, extra_params=True)

    predict = commands.add_parser("predict", help="predict a data file with a saved model",
                                  description="Write one prediction per row (multiclass: one column per class).",
                                  parents=[_DEBUG])
    predict.add_argument("model", help="model file")
    predict.add_argument("data", help="data file; a label column, if any, is ignored (see --label-column)")
    predict.add_argument("-o", "--output", help="output file (default: stdout)")
    output = predict.add_mutually_exclusive_group()
    output.add_argument("--raw-score", action="store_true", help="raw scores instead of predictions")
    output.add_argument("--pred-leaf", "--pred_leaf", action="store_true",
                        help="the leaf index each row reaches in each tree, a column per tree")
    output.add_argument("--pred-contrib", "--pred_contrib", action="store_true",
                        help="SHAP values of the raw score, a column per feature then the expected value (a block "
                             "per class for a multiclass model)")
    predict.add_argument("--num-iteration", "--num_iteration", type=int, default=None, metavar="N",
                         help="use N iterations (default: the model's best iteration, else all; <= 0: all)")
    predict.add_argument("--start-iteration", "--start_iteration", type=int, default=0, metavar="N",
                         help="skip the first N iterations (their trees and the base score)")
    _add_data_options(predict)
    predict.set_defaults(run=_predict)

    evaluate = commands.add_parser("evaluate", help="evaluate a saved model on a labelled data file",
                                   description="Print a table of metrics of the model on the data.",
                                   parents=[_DEBUG])
    evaluate.add_argument("model", help="model file")
    evaluate.add_argument("data", help="labelled data file")
    evaluate.add_argument("--metric", action="append",
                          help="metric name (repeatable; default: the model's metric parameter, else its objective's "
                               "metric)")
    _add_data_options(evaluate)
    evaluate.set_defaults(run=_evaluate)

    data = commands.add_parser(
        "datasets", help="list, describe or download the public datasets",
        description="The public benchmark datasets smartboost knows, cached under $SMARTBOOST_DATA (default "
                    "~/.cache/smartboost). list: every set, whether it is cached and where its checksums come "
                    "from; info NAME: addresses, cache paths and checksums; fetch NAME: download what is missing "
                    "and check every file.",
        epilog="example: smartboost datasets fetch mq2008", parents=[_DEBUG])
    data.add_argument("action", choices=["list", "info", "fetch"])
    data.add_argument("name", nargs="?", help="dataset name (info, fetch)")
    data.add_argument("--offline", action="store_true", help="fetch: only check the cached files, never download")
    data.set_defaults(run=_datasets)

    demo = commands.add_parser("demo", help="train and evaluate on generated data, print a table",
                               description="Train smartboost on a generated HIGGS-like binary set (no download) "
                                           "and print binning, training and prediction times and test metrics.",
                               parents=[_DEBUG])
    demo.add_argument("--rows", type=int, default=200_000, help="training rows (test: a quarter more)")
    demo.add_argument("--trees", type=int, default=100, help="boosting iterations")
    demo.add_argument("--leaves", type=int, default=31, help="leaves per tree")
    demo.add_argument("--learning-rate", type=float, default=0.1, help="shrinkage")
    demo.add_argument("--threads", type=int, default=0, help="threads (0: all)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the data and the model")
    demo.add_argument("--sampling", default=None,
                      help="smartboost's row sampler (default: 'auto' from 100,000 rows, as in train; 'none': "
                           "every row, as LightGBM by default)")
    demo.add_argument("--compare", action="store_true", help="also train LightGBM if it is installed")
    demo.set_defaults(run=_demo)

    _add_experiment_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``smartboost`` command."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "extra_params", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a job killed on a cluster) ends the command as Ctrl-C does: during training
        # at the next iteration, with the model so far saved
        signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        return args.run(args, extra)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    except (KeyboardInterrupt, SystemError) as exc:
        interrupt = interrupt_of(exc)
        if interrupt is not None:
            signum = getattr(interrupt, "signum", signal.SIGINT)
            print(f"smartboost: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
            return 128 + signum
        unexpected = exc  # a compiled kernel's own SystemError
    except (SmartBoostError, OSError, ImportError, tomllib.TOMLDecodeError) as exc:
        if args.debug:
            raise
        print(f"smartboost: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError as exc:  # e.g. an svmlight index of 2e9 makes as many features
        if args.debug:
            raise
        print(f"smartboost: error: out of memory{f': {exc}' if str(exc) else ''} (the data, or the number of "
              "features its largest svmlight index implies, is too large for this machine)", file=sys.stderr)
        return 1
    except Exception as exc:
        unexpected = exc
    # a bug, not an error of the input: still one line, as a traceback would hide the message in it
    if args.debug:
        raise unexpected
    print(f"smartboost: error: unexpected {type(unexpected).__name__}: {unexpected} (a bug in smartboost: please "
          "report it; --debug shows the traceback)", file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
