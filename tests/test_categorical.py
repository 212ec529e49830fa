"""Categorical features: binning, split finding against brute force, prediction on raw and
binned data, model files, the ways categories are given, and bad input."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

import smartboost as sb
from smartboost.errors import DataError, ModelFormatError, ParameterError

pd = pytest.importorskip("pandas")

_PARAMS = {"objective": "regression", "num_leaves": 7, "learning_rate": 0.3, "min_data_in_leaf": 5,
           "min_data_per_group": 5, "cat_smooth": 1.0, "verbosity": -1}


def _frame(n=1200, n_categories=12, seed=0, missing=0.05):
    """A frame with a text category (missing values included), an integer-coded category and a
    number, and a target depending on all three."""
    rng = np.random.default_rng(seed)
    names = np.array([f"c{i:02d}" for i in range(n_categories)], dtype=object)
    text = rng.integers(0, n_categories, n)
    code = rng.integers(0, 5, n)
    x = rng.normal(size=n)
    y = rng.normal(size=n_categories)[text] + 0.7 * (code == 3) + 0.5 * x + 0.1 * rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "city": pd.Categorical(names[text]), "code": code.astype(np.float64)})
    frame.loc[rng.random(n) < missing, "city"] = np.nan
    return frame, y


def _train(frame, y, params=None, rounds=10, **dataset):
    return sb.train({**_PARAMS, **(params or {})}, sb.Dataset(frame, y, **dataset), rounds)


def _binned_prediction(booster, data):
    scores = booster._start_scores(data.n_rows)
    for k in range(booster.num_model_per_iteration()):
        booster.predict_binned(data, scores[k], k, None, booster.num_model_per_iteration())
    return scores[0] if scores.shape[0] == 1 else scores.T


# -- binning ------------------------------------------------------------------------------------

def test_categories_get_bins_by_value_and_rare_ones_share_one():
    counts = {"a": 50, "b": 2, "c": 30, "d": 1, "e": 40}
    column = pd.Categorical(np.repeat(list(counts), list(counts.values())))
    mapper = sb.Dataset(pd.DataFrame({"c": column}), np.zeros(column.size)).bin_mapper
    table = mapper.categories[0]
    assert table.values.tolist() == ["a", "b", "c", "d", "e"]
    # a, c, e hold min_data_in_bin (3) rows: a bin each, in value order; b and d share the last one
    assert table.bins.tolist() == [0, 3, 1, 3, 2] and mapper.n_bins[0] == 4


def test_more_categories_than_bins_keep_the_most_frequent():
    rng = np.random.default_rng(1)
    codes = rng.zipf(1.3, 5000) % 400
    data = sb.Dataset(codes.reshape(-1, 1).astype(np.float64), np.zeros(5000), categorical_feature=[0],
                      params={"max_bin": 16})
    table = data.bin_mapper.categories[0]
    counts = np.array([np.count_nonzero(codes == v) for v in table.values])
    own = table.bins < 15
    assert own.sum() == 15 and counts[own].min() >= counts[~own].max()
    assert data.bin_mapper.n_bins[0] == 16


# -- split finding ------------------------------------------------------------------------------

def _brute_force_gain(categories, g, h, l2):
    """The best gain of any partition of the categories (missing rows always right)."""
    values = np.unique(categories[categories >= 0])
    G, H = g.sum(), h.sum()
    best = (-np.inf, None)
    for k in range(1, values.size + (1 if (categories < 0).any() else 0)):
        for left in itertools.combinations(values, k):
            mask = np.isin(categories, left)
            gl, hl = g[mask].sum(), h[mask].sum()
            gain = 0.5 * (gl ** 2 / (hl + l2) + (G - gl) ** 2 / (H - hl + l2) - G ** 2 / (H + l2))
            if gain > best[0]:
                best = (gain, set(left))
    return best


@pytest.mark.parametrize("n_categories, onehot", [(3, True), (4, True), (6, False), (7, False)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_categorical_split_is_the_best_partition(n_categories, onehot, seed):
    """With nothing holding it back (cat_smooth 0, cat_l2 0, groups of one row), the sorted scan
    finds the best of all partitions of the categories (Fisher's result); one-vs-rest the best
    single category, missing values always on the right."""
    rng = np.random.default_rng(seed)
    n = 400
    categories = rng.integers(0, n_categories, n).astype(np.float64)
    if onehot:
        categories[rng.random(n) < 0.05] = -1  # missing: always right
    y = rng.normal(size=n_categories)[categories.astype(int)] + rng.normal(size=n)
    params = {"objective": "regression", "num_leaves": 2, "learning_rate": 1.0, "min_data_in_leaf": 1,
              "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 1.0, "cat_l2": 0.0, "cat_smooth": 0.0,
              "min_data_per_group": 1, "max_cat_threshold": 64, "max_cat_to_onehot": 8 if onehot else 1,
              "boost_from_average": False, "verbosity": -1, "min_data_in_bin": 1}
    data = sb.Dataset(categories.reshape(-1, 1), y, categorical_feature=[0], params=params)
    tree = sb.train(params, data, 1).trees[0]
    assert tree.categorical_nodes[0]
    table = data.bin_mapper.categories[0]
    left = set(table.values[np.isin(table.bins, tree.left_bins(0))].tolist())
    g, h = -y, np.ones(n)  # squared error at the start score 0
    if onehot:
        gains = [(0.5 * (g[categories == v].sum() ** 2 / (np.sum(categories == v) + 1) + (g.sum() - g[
            categories == v].sum()) ** 2 / (n - np.sum(categories == v) + 1) - g.sum() ** 2 / (n + 1)), {v})
            for v in np.unique(categories[categories >= 0])]
        gain, best = max(gains, key=lambda item: item[0])
    else:
        gain, best = _brute_force_gain(categories, g, h, 1.0)
    np.testing.assert_allclose(tree.gain[0], gain, rtol=1e-6)
    assert left == best or (not onehot and left == set(np.unique(categories[categories >= 0])) - best
                            and not (categories < 0).any())


def test_max_cat_threshold_and_min_data_per_group_limit_the_left_side():
    frame, y = _frame(n=3000, n_categories=40, missing=0.0)
    booster = _train(frame[["city"]], y, {"max_cat_threshold": 3, "num_leaves": 15})
    sizes = [tree.left_bins(node).size for tree in booster.trees for node in np.flatnonzero(tree.categorical_nodes)]
    assert sizes and max(sizes) <= 3


# -- prediction ----------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {},
    {"grow_policy": "depthwise", "max_depth": 3, "num_leaves": 0},
    {"sampling": "mvs", "sample_rate": 0.3},
    {"selection_type": 1, "selection_t": 60, "selection_scope": "node"},
    {"colsample_bytree": 0.67},
    {"max_cat_to_onehot": 64},
], ids=["leafwise", "depthwise", "sampled", "type 1 per node", "colsample", "one-vs-rest"])
def test_raw_and_binned_predictions_agree_with_unseen_and_missing_categories(params):
    frame, y = _frame()
    booster = _train(frame, y, params, categorical_feature=["city", "code"])
    assert any(tree.categorical_nodes.any() for tree in booster.trees)
    test, _ = _frame(n=500, n_categories=15, seed=5, missing=0.1)  # c12-c14 unseen; code 0-4 only
    test.loc[:20, "code"] = [7.0, -1.0, np.nan] * 7  # unseen, negative (missing), missing
    raw = booster.predict(test)
    binned = _binned_prediction(booster, sb.Dataset(test, reference=booster).binned)
    np.testing.assert_array_equal(raw, binned)
    unseen = test["city"].isin(["c12", "c13", "c14"]).to_numpy()
    missing = test["city"].isna().to_numpy()
    as_missing = test.copy()
    as_missing.loc[unseen, "city"] = np.nan
    np.testing.assert_array_equal(booster.predict(as_missing)[unseen | missing], raw[unseen | missing])


def test_multiclass_and_ranking_with_categories():
    frame, y = _frame()
    classes = np.digitize(y, [-0.5, 0.5]).astype(np.float64)
    booster = _train(frame, classes, {"objective": "multiclass", "num_class": 3}, rounds=4)
    np.testing.assert_array_equal(booster.predict(frame, raw_score=True),
                                  _binned_prediction(booster, sb.Dataset(frame, reference=booster).binned))
    grades = np.clip(np.round(y + 1), 0, 3)
    ranker = _train(frame, grades, {"objective": "lambdarank"}, rounds=4, group=[40] * 30)
    assert any(tree.categorical_nodes.any() for tree in ranker.trees)
    np.testing.assert_array_equal(ranker.predict(frame), _binned_prediction(
        ranker, sb.Dataset(frame, reference=ranker).binned))


def test_the_same_model_for_any_thread_count():
    frame, y = _frame()
    models = [json.loads(_train(frame, y, {"num_threads": threads, "num_leaves": 15}).model_to_string())
              for threads in (1, 2)]
    assert [model["trees"] for model in models[:1]] == [model["trees"] for model in models[1:]]


# -- the ways categories are given -----------------------------------------------------------

def test_pandas_categories_strings_and_integer_codes_give_the_same_trees():
    frame, y = _frame(missing=0.0)
    codes = frame["city"].cat.codes.to_numpy().astype(np.float64)  # categories sorted: codes in text order
    ways = [frame,
            frame.assign(city=frame["city"].astype(str).astype(object)),
            frame.assign(city=frame["city"].astype("string")),
            frame.assign(city=codes)]
    models = [_train(way, y, categorical_feature=["city", "code"]) for way in ways]
    for model in models[1:]:
        for a, b in zip(models[0].trees, model.trees):
            for name in ("feature", "left", "left_sets", "value"):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert models[3].bin_mapper.categories[1].values.tolist() == list(range(12))


def test_a_frames_category_order_does_not_change_predictions():
    frame, y = _frame()
    booster = _train(frame, y)
    expected = booster.predict(frame)
    reordered = frame.assign(city=frame["city"].cat.reorder_categories(frame["city"].cat.categories[::-1]))
    np.testing.assert_array_equal(booster.predict(reordered), expected)
    extra = frame.assign(city=frame["city"].cat.add_categories(["zz"]).cat.set_categories(
        ["zz", *frame["city"].cat.categories]))
    np.testing.assert_array_equal(booster.predict(extra), expected)
    np.testing.assert_array_equal(booster.predict(frame.assign(city=frame["city"].astype(object))), expected)


def test_booleans_with_missing_values_are_the_flags_of_a_bool_column():
    frame, y = _frame()
    flags = frame["code"].to_numpy() == 3
    with_missing = pd.Series(flags, dtype=object)
    with_missing[frame["city"].isna().to_numpy()] = None  # an object column: categorical by its type
    booster = _train(frame.assign(code=with_missing), y)
    assert booster.bin_mapper.categories[2].values.tolist() == [0, 1]
    expected = booster.predict(frame.assign(code=with_missing))
    complete = ~frame["city"].isna().to_numpy()
    for column in (flags, pd.array(flags, dtype="boolean"), pd.Categorical(flags)):  # they were "numbers" for text
        np.testing.assert_array_equal(booster.predict(frame.assign(code=column))[complete], expected[complete])


@pytest.mark.parametrize("dtype", ["category", object, "string"])
def test_a_text_column_with_only_missing_values_is_all_missing(dtype):
    pd = pytest.importorskip("pandas")
    frame, y = _frame()
    booster = _train(frame, y)
    # every row missing: no category at all (pandas gives an empty list of them); it was an IndexError
    missing = frame.assign(city=pd.Series([None] * len(frame), dtype=dtype))
    expected = booster.predict(frame.assign(city=frame["city"].cat.set_categories(["zz"])))  # unseen: missing
    np.testing.assert_array_equal(booster.predict(missing), expected)
    trained = sb.train({**_PARAMS, "num_iterations": 2}, sb.Dataset(missing, y))
    assert np.isfinite(trained.predict(missing)).all()


def test_auto_takes_a_frames_category_and_text_columns_only():
    frame, y = _frame()
    data = sb.Dataset(frame, y)
    assert data.bin_mapper.categorical.tolist() == [False, True, False]
    data = sb.Dataset(frame, y, params={"categorical_feature": "name:city,code"})
    assert data.bin_mapper.categorical.tolist() == [False, True, True]
    with pytest.raises(ParameterError, match="categorical_feature.*differs from the Dataset's"):
        sb.train({**_PARAMS, "categorical_feature": [0]}, data, 1)


# -- model files -----------------------------------------------------------------------------

def test_model_round_trip_predicts_bit_for_bit(tmp_path):
    frame, y = _frame()
    booster = _train(frame, y, categorical_feature=["city", "code"])
    booster.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(frame), booster.predict(frame))
    assert loaded.model_to_string() == booster.model_to_string()
    document = json.loads(booster.model_to_string())
    assert document["bin_mapper"]["categorical"][0]["values"][:2] == ["c00", "c01"]
    assert all("left_bins" in tree for tree in document["trees"])
    more = sb.train(_PARAMS, sb.Dataset(frame, y, reference=loaded), 3, init_model=loaded)
    assert more.num_trees() == booster.num_trees() + 3


def test_numeric_models_hold_no_categorical_fields():
    frame, y = _frame()
    document = json.loads(sb.train({"verbosity": -1}, sb.Dataset(frame[["x", "code"]], y), 2).model_to_string())
    assert "categorical" not in document["bin_mapper"] and "left_bins" not in document["trees"][0]
    assert not set(document["params"]) & {"categorical_feature", "max_cat_to_onehot", "cat_smooth",
                                          "monotone_constraints", "interaction_constraints"}


def _tampered(booster, change):
    document = json.loads(booster.model_to_string())
    change(document)
    return json.dumps(document)


@pytest.mark.parametrize("change, field", [
    (lambda d: d["trees"][0]["left_bins"][0].clear(), r"trees\[0\].left_bins\[0\]' is empty"),
    (lambda d: d["trees"][0]["left_bins"][0].append(250), r"trees\[0\].left_bins\[0\]' holds a bin outside"),
    (lambda d: d["trees"][0]["left_bins"][0].append(300), r"left_bins\[0\]\[\d+\]' is 300, outside \[0, 254\]"),
    (lambda d: d["trees"][0]["left_bins"][0].__setitem__(slice(None), [2, 1]), r"left_bins\[0\]\[1\]"),
    (lambda d: d["trees"][0]["left_bins"].pop(), r"trees\[0\].left_bins' has"),
    (lambda d: d["trees"][0]["missing_left"].__setitem__(0, True), r"trees\[0\].missing_left\[0\]"),
    (lambda d: d["bin_mapper"]["categorical"][0]["values"].reverse(), r"categorical\[0\].values\[1\]"),
    (lambda d: d["bin_mapper"]["categorical"][0]["bins"].pop(), r"categorical\[0\].bins' has"),
    (lambda d: d["bin_mapper"]["categorical"][0].__setitem__("feature", 9), r"categorical\[0\].feature' is 9"),
    (lambda d: d["bin_mapper"]["categorical"][0]["values"].__setitem__(0, 1.5), r"categorical\[0\].values\[0\]"),
    (lambda d: d["bin_mapper"].pop("categorical"), r"trees\[0\].left_bins' is not a field"),
])
def test_the_loader_checks_the_categorical_fields(change, field):
    frame, y = _frame()
    booster = _train(frame[["city"]], y, rounds=1)
    assert booster.trees[0].categorical_nodes[0]
    with pytest.raises(ModelFormatError, match=field):
        sb.Booster(model_str=_tampered(booster, change))


def test_plot_tree_and_importance_show_categorical_splits():
    pytest.importorskip("matplotlib")
    from smartboost.plotting import plot_tree, pyplot
    pyplot(headless=True)
    frame, y = _frame()
    booster = _train(frame[["city"]], y, rounds=2)
    assert booster.feature_importance()[0] == sum(tree.categorical_nodes.sum() for tree in booster.trees)
    ax = plot_tree(booster, 0, max_categories=2)
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("city in {c") and "others right" in t for t in texts)
    pyplot().close("all")


# -- scikit-learn, command line ----------------------------------------------------------------

def test_sklearn_categorical_features_from_dtype_and_as_a_mask():
    from smartboost.sklearn import SmartBoostRegressor
    frame, y = _frame()
    model = SmartBoostRegressor(n_estimators=5, num_leaves=7, min_data_per_group=5).fit(frame, y)
    assert model.booster_.bin_mapper.categorical.tolist() == [False, True, False]
    np.testing.assert_array_equal(model.predict(frame), model.booster_.predict(frame))
    masked = SmartBoostRegressor(n_estimators=5, num_leaves=7, categorical_features=[False, True, True]).fit(frame, y)
    assert masked.booster_.bin_mapper.categorical.tolist() == [False, True, True]
    with pytest.raises(ValueError, match="categorical_features"):
        SmartBoostRegressor(categorical_features="all").fit(frame, y)
    # the frame's values as an array of text were numpy's bare "could not convert string to float"
    for method, args in ((model.predict, ()), (SmartBoostRegressor().fit, (y,))):
        for array in (frame.to_numpy(), frame.to_numpy().tolist()):
            with pytest.raises(DataError, match="X holds non-numeric values.*as columns of a DataFrame"):
                method(array, *args)


def test_cli_trains_and_predicts_a_csv_with_a_text_column(tmp_path, capsys):
    from smartboost.cli import main
    frame, y = _frame(n=600)
    table = frame.assign(label=y)[["label", "x", "city", "code"]]
    table.to_csv(tmp_path / "train.csv", index=False)
    model = tmp_path / "model.json"
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(model), "--categorical_feature", "city",
                 "--num_iterations", "5", "--num_leaves", "7", "--min_data_per_group", "5", "--verbosity", "-1"]) == 0
    assert main(["predict", str(model), str(tmp_path / "train.csv"), "-o", str(tmp_path / "p.txt")]) == 0
    booster = sb.Booster(model_file=model)
    expected = booster.predict(frame.assign(city=frame["city"].astype(object)))
    np.testing.assert_allclose(np.loadtxt(tmp_path / "p.txt"), expected, rtol=1e-15)
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(model), "--categorical_feature", "1",
                 "--num_iterations", "2", "--verbosity", "-1"]) == 0  # index 1: the second feature (city)
    capsys.readouterr()
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(model), "--num_iterations", "2"]) == 1
    assert "column 3 ('city'): 'c" in capsys.readouterr().err  # text in a column not declared categorical


def test_cli_reads_integer_codes_by_value(tmp_path, capsys):
    """A CSV column of integer codes declared categorical holds numbers, as in LightGBM: "3" and
    "3.0" are one category, and the CLI predicts with a model trained on the codes in Python."""
    from smartboost.cli import main
    frame, y = _frame(n=600)
    frame = frame.drop(columns="city")
    frame.assign(label=y)[["label", "x", "code"]].to_csv(tmp_path / "train.csv", index=False,
                                                         float_format="%.0f")  # codes "3", x rounded
    test = frame.assign(label=y).iloc[:50][["label", "x", "code"]]
    test.to_csv(tmp_path / "test.csv", index=False, float_format="%.1f")  # codes "3.0"
    model = tmp_path / "model.json"
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(model), "--categorical_feature", "code",
                 "--num_iterations", "3", "--min_data_per_group", "5"]) == 0
    booster = sb.Booster(model_file=model)
    assert not booster.bin_mapper.categories[1].is_text
    assert main(["predict", str(model), str(tmp_path / "test.csv"), "-o", str(tmp_path / "p.txt")]) == 0
    np.testing.assert_allclose(np.loadtxt(tmp_path / "p.txt"), booster.predict(test[["x", "code"]].round(1)),
                               rtol=1e-15)
    _train(frame, y, rounds=3, categorical_feature=["code"]).save_model(tmp_path / "python.json")
    assert main(["predict", str(tmp_path / "python.json"), str(tmp_path / "test.csv"), "-o",
                 str(tmp_path / "q.txt")]) == 0
    pd.DataFrame({"label": [1.0], "x": [0.0], "code": ["three"]}).to_csv(tmp_path / "text.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "text.csv")]) == 1
    assert "column 3 ('code'): 'three' is not a number" in capsys.readouterr().err


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("column, match", [
    ([0.0, 1.5, 2.0], r"categorical column 'c' has 1.5 at row 1"),
    ([0.0, np.inf, 2.0], r"has inf at row 1"),
    ([0.0, 2.0 ** 40, 1.0], r"categories are integer codes"),
])
def test_bad_codes_name_the_column_and_row(column, match):
    with pytest.raises(DataError, match=match):
        sb.Dataset(pd.DataFrame({"c": column * 4}), np.zeros(12), categorical_feature=["c"])


def test_negative_codes_are_missing_values_with_a_warning(caplog):
    import logging

    from smartboost._config import logger
    level = logger.level  # a command line run with --verbosity -1 elsewhere may have raised it above warnings
    logger.propagate = True
    logger.setLevel(logging.WARNING)
    try:
        # the warning comes with the bins, made by construct() or the first training run
        data = sb.Dataset(pd.DataFrame({"c": [0.0, -1.0, 2.0, -3.0] * 3}), np.zeros(12),
                          categorical_feature=[0]).construct()
    finally:
        logger.propagate = False
        logger.setLevel(level)
    assert "negative codes" in caplog.text
    assert data.binned.missing_count[0] == 6


@pytest.mark.parametrize("declared, match", [
    (["nope"], "names column 'nope', which is not a feature"),
    ([7], "names feature 7, but the data has 3 features"),
])
def test_unknown_categorical_features_are_named(declared, match):
    frame, y = _frame()
    with pytest.raises(DataError, match=match):
        sb.Dataset(frame, y, categorical_feature=declared)


def test_text_predicted_for_a_numeric_feature_is_refused():
    frame, y = _frame()
    booster = _train(frame[["x", "code"]], y, rounds=1)
    with pytest.raises(DataError, match="column 'code' holds text, but the model's feature 'code' is numeric"):
        booster.predict(frame[["x", "code"]].assign(code=["a"] * len(frame)))


@pytest.mark.parametrize("numbers", ["numpy", "float column", "integer category column"])
def test_numbers_predicted_for_a_text_feature_are_refused(numbers):
    frame, y = _frame()
    booster = _train(frame, y, rounds=2)
    codes = frame["city"].cat.codes.to_numpy()  # were read as positions among the training categories
    data = {"numpy": frame.assign(city=codes).to_numpy(np.float64),
            "float column": frame.assign(city=codes.astype(np.float64)),
            "integer category column": frame.assign(city=pd.Categorical(codes))}[numbers]
    with pytest.raises(DataError, match="column (1|'city') holds numbers, but the model's categorical feature "
                                        "(1|'city') has text categories"):
        booster.predict(data)
    # a column of missing values only has no number: every row is missing
    missing = frame.assign(city=np.nan).to_numpy(np.float64)
    np.testing.assert_array_equal(booster.predict(missing),
                                  booster.predict(frame.assign(city=frame["city"].cat.set_categories(["zz"]))))


def test_categorical_features_split_below_the_root():
    """A child's categorical split is its best one: the same as the root split of a model
    trained on the child's rows alone (binned alike)."""
    rng = np.random.default_rng(7)
    n = 20000
    x, c = rng.normal(size=n), rng.integers(0, 40, n)
    y = 3 * (x > 0) + rng.normal(size=40)[c] + 0.3 * rng.normal(size=n)
    X = np.c_[x, c.astype(float)]
    params = {"verbosity": -1, "num_leaves": 3, "min_data_per_group": 20}
    full = sb.Dataset(X, y, categorical_feature=[1])
    tree = sb.train(params, full, 1).trees[0]
    assert tree.feature[0] == 0 and 1 in (tree.feature[tree.left[0]], tree.feature[tree.right[0]])
    child = tree.left[0] if tree.feature[tree.left[0]] == 1 else tree.right[0]
    rows = (x <= tree.threshold[0]) == (child == tree.left[0])
    alone = sb.train({**params, "num_leaves": 2, "boost_from_average": False}, sb.Dataset(
        X[rows], y[rows] - y.mean(), reference=full), 1).trees[0]
    assert alone.feature[0] == 1
    np.testing.assert_array_equal(tree.left_bins(child), alone.left_bins(0))
    np.testing.assert_allclose(tree.gain[child], alone.gain[0], rtol=1e-6)


@pytest.mark.parametrize("column", [pd.Categorical([None] * 300, categories=["a"]), np.array([None] * 300, object)])
def test_a_feature_without_categories_predicts_the_same_loaded(column):
    # A categorical column all missing in training has no category: the model file's empty list
    # loaded as integer codes, and the loaded model refused the texts the trained one took.
    x = np.random.default_rng(3).normal(size=300)
    frame = pd.DataFrame({"c": column, "x": x})
    booster = _train(frame, x, rounds=2)
    assert booster.bin_mapper.categories[0].values.size == 0
    loaded = sb.Booster(model_str=booster.model_to_string())
    unseen = booster.predict(pd.DataFrame({"c": [np.nan] * 3, "x": [0.5, -1.0, 2.0]}))
    for model in (booster, loaded):  # any category, text or code, is one the feature has not seen
        np.testing.assert_array_equal(model.predict(frame), booster.predict(frame))
        np.testing.assert_array_equal(model.predict(pd.DataFrame({"c": ["a", "b", None], "x": [0.5, -1.0, 2.0]})),
                                      unseen)
        np.testing.assert_array_equal(model.predict(pd.DataFrame({"c": [3.0, 0.0, -1.0], "x": [0.5, -1.0, 2.0]})),
                                      unseen)


@pytest.mark.parametrize("categorical, match", [
    ("nope", "categorical_feature names 'nope', which is not a feature column of the file (2 feature columns; "
             "columns a, b)"),
    ("a,7", "categorical_feature names 7, which is not a feature column"),
    ("y", "categorical_feature names 'y'"),  # the label column
    ("b", r"column 2 \('a'\): 'x' is not a number; .* a column of text categories is named in categorical_feature"),
])
def test_cli_names_a_categorical_feature_that_is_no_column(tmp_path, capsys, categorical, match):
    # an unknown name left the text column undeclared: the error named a cell that 'is not a number'
    from smartboost.cli import main
    (tmp_path / "t.csv").write_text("y,a,b\n1,x,2\n0,y,3\n1,x,4\n0,z,5\n")
    capsys.readouterr()
    assert main(["train", str(tmp_path / "t.csv"), "--label-column", "y", "--categorical_feature", categorical,
                 "-o", str(tmp_path / "m.json")]) == 1
    assert re.search(match if categorical == "b" else re.escape(match), capsys.readouterr().err)
