"""Fuzzing the model loader: a corrupted model text loads or is refused, nothing else.

Valid model texts of four tiny models (binary, regression, 3-class multiclass, lambdarank) are
mutated by hypothesis: truncated at a random byte, characters overwritten, a JSON value replaced
by one of another type (text, bool, null, list, object, 2**70, a negative integer, the NaN and
Infinity tokens, 1e309), a value copied from elsewhere in the document, a key or list entry
deleted, a value wrapped in more lists or objects. ``Booster(model_str=...)`` must then either
raise a :class:`smartboost.SmartBoostError` or load a model that predicts finite numbers (or
refuses with a SmartBoostError), predicts on binned rows exactly as on raw ones, and saves a
text that reloads to itself. Any other exception fails.

Each test runs ``SMARTBOOST_FUZZ_EXAMPLES`` examples (default 300: about 25 s for the module).
A longer run::

    SMARTBOOST_FUZZ_EXAMPLES=20000 PYTHONPATH=src python -m pytest -q -p no:cacheprovider tests/test_fuzz_model.py
"""

import json
import os

import numpy as np
import pytest
from conftest import make_binary, make_regression
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import smartboost as sb

EXAMPLES = int(os.environ.get("SMARTBOOST_FUZZ_EXAMPLES", "300"))
fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def models():
    """``{name: (model text, rows to predict)}`` for four tiny models, trained once."""
    X, y = make_binary(n=300, n_features=5, seed=7, missing_rate=0.05)
    X[(y == 1) & (np.arange(300) % 2 == 0), 4] = np.nan  # a split with threshold 'inf'
    Xr, yr = make_regression(n=300, n_features=4, seed=8)
    small = {"num_leaves": 4, "min_data_in_leaf": 5, "verbosity": -1}
    train = sb.Dataset(X[:200], y[:200])
    boosters = {
        "binary": sb.train({**small, "objective": "binary", "early_stopping_round": 3}, train, 3,
                           valid_sets=[sb.Dataset(X[200:], y[200:], reference=train)]),
        "regression": sb.train(small, sb.Dataset(Xr, yr), 3),
        "multiclass": sb.train({**small, "objective": "multiclass", "num_class": 3},
                               sb.Dataset(Xr, np.digitize(yr, np.quantile(yr, [1 / 3, 2 / 3]))), 2),
        "lambdarank": sb.train({**small, "objective": "lambdarank"},
                               sb.Dataset(Xr, np.clip(np.round(yr), 0, 3), group=[30] * 10), 3),
    }
    rows = {"binary": X[:8], "regression": Xr[:8], "multiclass": Xr[:8], "lambdarank": Xr[:8]}
    return {name: (booster.model_to_string(), rows[name]) for name, booster in boosters.items()}


def _loads_or_refuses(text, X):
    """Load ``text``; a SmartBoostError is a correct refusal, any other exception propagates."""
    try:
        booster = sb.Booster(model_str=text)
    except sb.SmartBoostError:
        event("refused")
        return
    try:
        predictions = booster.predict(X)
    except sb.SmartBoostError:
        event("loaded, refused to predict")
        return
    event("loaded")
    assert np.all(np.isfinite(predictions))
    # The loaded model means one thing: binned rows walk the trees as raw rows do ...
    raw = booster.predict(X, raw_score=True, num_iteration=-1).reshape(X.shape[0], -1).T
    binned = booster._start_scores(X.shape[0])
    k = booster.num_model_per_iteration()
    for c in range(k):
        booster.predict_binned(sb.Dataset(X, reference=booster).binned, binned[c], first_tree=c, step=k)
    np.testing.assert_array_equal(binned, raw)
    # ... and what it saves reloads to the same text.
    saved = booster.model_to_string()
    assert sb.Booster(model_str=saved).model_to_string() == saved


_NAMES = st.sampled_from(["binary", "regression", "multiclass", "lambdarank"])
_TOKENS = ["NaN", "Infinity", "-Infinity", "1e309", "-1e309"]
_FOREIGN = st.one_of(
    st.text(max_size=4), st.booleans(), st.none(), st.just(2 ** 70), st.just(-(2 ** 63) - 1),
    st.integers(-(2 ** 40), -1), st.integers(0, 300), st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(-2, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2),
    st.sampled_from(_TOKENS).map(lambda token: ("token", token)),
)


def _paths(value, path=()):
    """Every path into a parsed JSON document (the root excluded), parents before children."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key)
        yield from _paths(item, (*path, key))


def _get(document, path):
    for key in path:
        document = document[key]
    return document


def _set(document, path, value):
    _get(document, path[:-1])[path[-1]] = value


def _dump(document, token=None):
    """The document as text; the placeholder string becomes ``token`` (a NaN/Infinity or 1e309
    token, which json.dumps cannot write)."""
    text = json.dumps(document, separators=(",", ":"))
    return text if token is None else text.replace('"\\u0000TOKEN"', token)


@fuzz
@given(name=_NAMES, data=st.data())
def test_truncated_model_text(models, name, data):
    text, X = models[name]
    cut = data.draw(st.integers(0, len(text) - 1), label="cut")
    with pytest.raises(sb.SmartBoostError):
        sb.Booster(model_str=text[:cut])


@fuzz
@given(name=_NAMES, data=st.data())
def test_overwritten_characters(models, name, data):
    text, X = models[name]
    chars = list(text)
    for _ in range(data.draw(st.integers(1, 4), label="flips")):
        at = data.draw(st.integers(0, len(chars) - 1), label="at")
        chars[at] = data.draw(st.one_of(st.sampled_from('[]{}",:-.0123456789eE \\tfnu'), st.characters()),
                              label="char")
    _loads_or_refuses("".join(chars), X)


@fuzz
@given(name=_NAMES, data=st.data())
def test_value_replaced_by_another_type(models, name, data):
    text, X = models[name]
    document = json.loads(text)
    path = data.draw(st.sampled_from(list(_paths(document))), label="path")
    value = data.draw(_FOREIGN, label="value")
    if isinstance(value, tuple):
        _set(document, path, "\0TOKEN")
        _loads_or_refuses(_dump(document, value[1]), X)
    else:
        _set(document, path, value)
        _loads_or_refuses(_dump(document), X)


@fuzz
@given(name=_NAMES, data=st.data())
def test_value_copied_from_elsewhere(models, name, data):
    text, X = models[name]
    document = json.loads(text)
    paths = list(_paths(document))
    target = data.draw(st.sampled_from(paths), label="target")
    source = data.draw(st.sampled_from(paths), label="source")
    _set(document, target, json.loads(json.dumps(_get(document, source))))
    _loads_or_refuses(_dump(document), X)


@fuzz
@given(name=_NAMES, data=st.data())
def test_entry_deleted_or_nested_deeper(models, name, data):
    text, X = models[name]
    document = json.loads(text)
    path = data.draw(st.sampled_from(list(_paths(document))), label="path")
    if data.draw(st.booleans(), label="delete"):
        del _get(document, path[:-1])[path[-1]]
    else:
        value = _get(document, path)
        for _ in range(data.draw(st.integers(1, 70), label="levels")):
            value = [value] if data.draw(st.booleans(), label="list") else {"k": value}
        _set(document, path, value)
    _loads_or_refuses(_dump(document), X)
