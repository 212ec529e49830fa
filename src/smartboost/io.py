"""The model file format: versioned JSON, read without executing anything.

A model file is one JSON object (``docs/reference/model_format.md`` documents every field)::

    {"format": "smartboost-model", "version": 1, "objective": {...}, "base_score": ...,
     "feature_names": [...], "bin_mapper": {...}, "params": {...},
     "best_iteration": ..., "best_score": {...}, "trees": [{...}, ...]}

Floats are written with Python's shortest round-trip repr, so a reloaded model predicts bit for
bit the same; non-finite thresholds are the strings ``"inf"``/``"-inf"`` (strict JSON has no
infinity), and a model holding any other non-finite number is refused before anything is
written. Loading validates everything it reads and raises :class:`ModelFormatError` naming the
field (``trees[3].left[7]``); pickling a :class:`~smartboost.Booster` goes through the same
text. Files are written as ``open(path, "w")`` writes them (modes, symlinks), but atomically.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from . import _schema as schema
from ._params import explicit_params, file_params, resolve_params
from .binning import BinMapper
from .errors import ModelFormatError, ParameterError, SmartBoostError
from .objectives import Objective, make_objective
from .tree import Tree

FORMAT_NAME = "smartboost-model"
FORMAT_VERSION = 1

_FIELDS = ("format", "version", "smartboost_version", "objective", "base_score", "feature_names", "bin_mapper",
           "params", "best_iteration", "best_score", "trees", "data_format")

MAX_MODEL_BYTES = 1 << 31
"""Largest model text (UTF-8) the loader parses: 2 GiB, about 60,000 trees of 255 leaves."""

_SHAP_HEADROOM = 4.0
"""The sum of the base score and the trees' largest leaves times this must be finite (``_trees``)."""

MAX_NESTING = 64
"""Deepest nesting of JSON lists and objects the loader parses (a model file nests 4 deep)."""

# The tables of the nesting scan (_check_size_and_nesting).
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_DEPTH_STEP = np.zeros(256, np.int8)
_DEPTH_STEP[list(b"[{")] = 1
_DEPTH_STEP[list(b"]}")] = -1
_NESTING_BLOCK = 1 << 20


@dataclass
class ModelContent:
    """Everything a model file holds."""

    objective: Objective
    bin_mapper: BinMapper
    base_score: float | np.ndarray  # one per output (class) of a multiclass objective
    feature_names: list[str]
    params: dict[str, Any]
    trees: list[Tree]
    best_iteration: int
    best_score: dict[str, dict[str, float]]
    data_format: dict[str, Any] | None = None  # how the training file was read; None: unknown


def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    """Tuples as lists; a custom objective function as its name, "custom"."""
    return {k: "custom" if callable(v) else list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def model_to_string(content: ModelContent) -> str:
    """Serialise a model to JSON text.

    Raises
    ------
    ModelFormatError
        The model holds a NaN or infinite number that no model file can hold (a leaf value, a
        gain or the base score overflowed), naming the field; nothing is written then.
    """
    _refuse_non_finite(content)
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "smartboost_version": __version__,
        "objective": content.objective.to_dict(),
        "base_score": (content.base_score.tolist() if isinstance(content.base_score, np.ndarray)
                       else content.base_score),
        "feature_names": content.feature_names,
        "bin_mapper": content.bin_mapper.to_dict(),
        "params": _json_params(content.params),
        "best_iteration": content.best_iteration,
        "best_score": content.best_score,
        "trees": [tree.to_dict() for tree in content.trees],
    }
    if content.data_format is not None:  # optional: files without it stay byte for byte as before
        document["data_format"] = content.data_format
    return json.dumps(document, allow_nan=False, separators=(",", ":"))


def _refuse_non_finite(content: ModelContent) -> None:
    """Raise, naming the field, when the model holds a number strict JSON cannot write (an
    infinite threshold is written as a string; any other non-finite number has no valid form)."""
    def check(path: str, values: Any) -> None:
        array = np.asarray(values, np.float64)
        i = schema.first_non_finite(array.ravel())
        if i is not None:
            where = path if array.ndim == 0 else schema.child(path, i)
            raise ModelFormatError(f"cannot save the model: {where} is {array.ravel()[i]}, and a model file holds "
                                   "finite numbers only (the training overflowed: lower learning_rate, or rescale "
                                   "the labels)")

    check("base_score", content.base_score)
    for i, tree in enumerate(content.trees):
        path = schema.child("trees", i)
        for name in ("value", "gain", "hessian"):
            check(schema.child(path, name), getattr(tree, name))
        check(schema.child(path, "threshold"), np.where(np.isinf(tree.threshold), 0.0, tree.threshold))
    for data_name, metrics in content.best_score.items():
        for metric, value in metrics.items():
            check(schema.child(schema.child("best_score", data_name), metric), value)


def _check_size_and_nesting(text: str) -> None:
    """Refuse a text too long or nested too deeply before it is parsed, so that parsing can end
    only in a parsed document or a ModelFormatError (never a RecursionError).

    Escapes and then strings are cut out so that only the brackets that open and close JSON
    containers remain; their running depth must stay within ``MAX_NESTING``. Everything runs
    in C (re, bytes.translate, numpy), in blocks: a few percent of the parsing time.
    """
    _check_size(len(text))  # a character is at least one byte: refused before it is encoded
    encoded = text.encode("utf-8", "surrogatepass")
    _check_size(len(encoded))
    structure = _ESCAPE.sub(b"", encoded).translate(None, _NOT_STRUCTURE)
    # An unterminated string runs to the end of the text: nothing after its quote opens a container.
    brackets = np.frombuffer(_STRING.sub(b"", structure).partition(b'"')[0], np.uint8)
    depth = 0
    for start in range(0, brackets.size, _NESTING_BLOCK):
        levels = depth + np.cumsum(_DEPTH_STEP[brackets[start:start + _NESTING_BLOCK]], dtype=np.int64)
        if levels.max() > MAX_NESTING:
            raise ModelFormatError(f"model text nests lists and objects more than {MAX_NESTING} deep (a model "
                                   "file nests 4 deep): corrupt or not a smartboost model")
        depth = int(levels[-1])


class _Constant:
    """What the parser makes of a NaN, Infinity or -Infinity token (refused, naming its field)."""

    def __init__(self, token: str) -> None:
        self.token = token


def _refuse_constants(value: Any, path: str) -> None:
    """Raise naming the field of the first NaN/Infinity token in ``value`` (nested at most
    ``MAX_NESTING`` deep, so the recursion is bounded)."""
    items = value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    for key, item in items:
        if type(item) is _Constant:
            schema.fail(schema.child(path, key), f"is {item.token}, which strict JSON does not have: "
                                                 f"{schema.FINITE_ONLY}")
        _refuse_constants(item, schema.child(path, key))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object whose keys are all different: with a key twice (an edited or concatenated
    file), json would silently keep the last value."""
    document = dict(pairs)
    if len(document) != len(pairs):
        seen = set()
        key = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise ModelFormatError(f"model field '{key}' appears twice in one object (edited or corrupt file?); a model "
                               "file holds each field once")
    return document


# The first two lines of a model LightGBM's save_model writes ("tree", then "version=v4")
_LIGHTGBM_TEXT = re.compile(r"\ufeff?tree\r?\nversion=")


def _parse(text: Any) -> dict:
    """The JSON document of a model text, refusing what is not JSON, a NaN/Infinity token, or
    anything but a smartboost model of a version this smartboost reads."""
    if not isinstance(text, str):
        raise ModelFormatError(f"a model string must be str, got {type(text).__name__}")
    text = text.removeprefix("\ufeff")  # the byte-order mark some editors write at the start of UTF-8
    _check_size_and_nesting(text)
    constants = []

    def constant(token: str) -> _Constant:
        constants.append(_Constant(token))
        return constants[-1]

    if _LIGHTGBM_TEXT.match(text):  # a common mix-up; "not valid JSON" would suggest a damaged file
        raise ModelFormatError("this is a LightGBM text model (it starts with 'tree' and 'version='); smartboost "
                               "reads only its own JSON models and cannot load LightGBM's")
    try:
        document = json.loads(text, parse_constant=constant, object_pairs_hook=_unique_keys)
    except ModelFormatError:
        raise
    except ValueError as exc:  # JSONDecodeError, or an integer of more digits than Python converts
        raise ModelFormatError(f"model is not valid JSON (corrupt or truncated file?): {exc}") from None
    if type(document) is not dict or document.get("format") != FORMAT_NAME:
        raise ModelFormatError("not a smartboost model (the 'format' field is missing or different)")
    if constants:
        _refuse_constants(document, "")
    schema.known_keys(document, _FIELDS, "")
    version = schema.integer(schema.member(document, "version", ""), "version", 1, schema.INT64_MAX)
    if version > FORMAT_VERSION:
        raise ModelFormatError(f"model format version {version} was written by a newer smartboost; this "
                               f"version ({__version__}) reads versions up to {FORMAT_VERSION}")
    schema.member(document, "smartboost_version", "", str, default="")
    return document


def _registry_check(path: str, check: Callable[..., Any], *args: Any) -> Any:
    """``check(*args)``, its ParameterError (or a TypeError/ValueError of a registry check) raised
    as the ModelFormatError of the field at ``path``."""
    try:
        return check(*args)
    except (SmartBoostError, TypeError, ValueError) as exc:
        schema.fail(path, f"is invalid: {exc}")


def _objective(document: dict) -> Objective:
    """The objective from its name and options, each option checked as the training parameter it is."""
    spec = schema.member(document, "objective", "", dict)
    name = schema.member(spec, "name", "objective", str)
    options = {}
    for key, value in spec.items():
        if key != "name":
            options.update(_registry_check(schema.child("objective", key), explicit_params, {key: value}))
    objective = _registry_check("objective", make_objective, name, options)
    schema.known_keys(spec, ("name", *objective.options), "objective")
    return objective


def _params(document: dict) -> dict[str, Any]:
    """The training parameters, each checked by the parameter registry, then all together (aliases
    of one parameter must agree)."""
    params = schema.member(document, "params", "", dict)
    for key, value in params.items():
        _registry_check(schema.child("params", key), explicit_params, {key: value})
    return _registry_check("params", resolve_params, file_params(params))


def _feature_names(document: dict, n_features: int) -> list[str]:
    """One unique string per feature."""
    names = schema.strings(schema.member(document, "feature_names", ""), "feature_names")
    if len(names) != n_features:
        schema.fail("feature_names", f"has {len(names)} names for the {n_features} features of bin_mapper.edges")
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if seen.setdefault(name, i) != i:
            schema.fail(schema.child("feature_names", i), f"repeats the name of feature {seen[name]} ({name!r})")
    return names


def _base_score(document: dict, n_outputs: int) -> float | np.ndarray:
    """A number for single-output models, a list of ``n_outputs`` numbers for multiclass ones."""
    value = schema.member(document, "base_score", "")
    if n_outputs == 1 and type(value) is not list:
        return schema.number(value, "base_score")
    if type(value) is not list:
        schema.fail("base_score", f"must be a list of {n_outputs} numbers (one per class), not "
                                  f"{type(value).__name__}")
    scores = schema.numbers(value, "base_score", np.float64)
    if scores.size != n_outputs:
        schema.fail("base_score", f"has {scores.size} numbers, not {n_outputs} (one per output)")
    return scores


def _best_score(document: dict) -> dict[str, dict[str, float]]:
    """``{data_name: {metric: finite number}}``, as written."""
    best_score = schema.member(document, "best_score", "", dict)
    for data_name, metrics in best_score.items():
        data_path = schema.child("best_score", data_name)
        for metric, value in schema.of_type(metrics, dict, data_path).items():
            schema.number(value, schema.child(data_path, metric))
    return best_score


def _trees(document: dict, bin_mapper: BinMapper, base_score: float | np.ndarray) -> list[Tree]:
    """The trees; together with the base score they must add up to finite raw scores."""
    trees = [Tree.from_dict(tree, bin_mapper, schema.child("trees", i))
             for i, tree in enumerate(schema.member(document, "trees", "", list))]
    # The largest raw score any row can reach: finite, or predictions would overflow to inf; and
    # with room for the SHAP values, whose terms span up to twice a tree's largest leaf and whose
    # interactions take differences of those (smartboost.explain).
    reach = float(np.max(np.abs(base_score))) + sum(float(np.abs(t.value[t.is_leaf]).max()) for t in trees)
    if not np.isfinite(_SHAP_HEADROOM * reach):
        schema.fail("trees", f"has leaf values that add up to more than a 64-bit float holds (over "
                             f"1/{_SHAP_HEADROOM:g} of the largest, which SHAP values need)")
    return trees


def model_from_string(text: str) -> ModelContent:
    """Parse and validate model JSON text.

    Every field is checked before it is used: its type, the range of every integer (before
    numpy narrows it), the finiteness of every number, the consistency of trees, bins and
    features, the objective and parameters through their registries. The text itself is
    bounded before parsing (``MAX_MODEL_BYTES`` bytes, ``MAX_NESTING`` levels) and no
    code is executed.

    Raises
    ------
    ModelFormatError
        The text is not JSON (corrupt or truncated), not a smartboost model, from a newer
        format version, or has a field that is missing, mistyped, out of range or
        inconsistent; the message names the field's path, e.g. ``trees[3].left[7]``.
    """
    document = _parse(text)
    objective = _objective(document)
    params = _params(document)
    bin_mapper = BinMapper.from_dict(schema.member(document, "bin_mapper", ""))
    feature_names = _feature_names(document, bin_mapper.n_features)
    base_score = _base_score(document, objective.num_outputs)
    trees = _trees(document, bin_mapper, base_score)
    if len(trees) % objective.num_outputs:
        schema.fail("trees", f"has {len(trees)} trees, not a multiple of the objective's {objective.num_outputs} "
                             "classes")
    iterations = len(trees) // objective.num_outputs
    best_iteration = schema.integer(schema.member(document, "best_iteration", ""), "best_iteration", 0, iterations)
    return ModelContent(objective=objective, bin_mapper=bin_mapper, base_score=base_score,
                        feature_names=feature_names, params=params, trees=trees,
                        best_iteration=best_iteration, best_score=_best_score(document),
                        data_format=_data_format(document))


def _data_format(document: dict) -> dict[str, Any] | None:
    """The optional ``data_format`` field: ``{"svmlight_zero_based": bool}``, or None when absent."""
    value = schema.member(document, "data_format", "", dict, default=None)
    if value is not None:
        schema.known_keys(value, ("svmlight_zero_based",), "data_format")
        schema.member(value, "svmlight_zero_based", "data_format", bool)
    return value


def _check_size(n_bytes: int) -> None:
    """Refuse a model text of more than ``MAX_MODEL_BYTES`` bytes."""
    if n_bytes > MAX_MODEL_BYTES:
        raise ModelFormatError(f"model text has {n_bytes} bytes, more than the {MAX_MODEL_BYTES} a model file may "
                               "have: corrupt or not a smartboost model")


def _check_path(path: Any, name: str) -> None:
    """Raise ParameterError unless ``path`` is a file path: ``os.stat`` takes an integer as an
    open file descriptor, which would read or report on an unrelated file."""
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"{name} must be a path (str or os.PathLike), got {type(path).__name__}")


def read_model_text(path: str | os.PathLike) -> str:
    """Read a model file's text; a file too large, binary or not UTF-8 is a ModelFormatError."""
    _check_path(path, "model_file")
    _check_size(os.stat(path).st_size)
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{path} is not a smartboost model (not UTF-8 text)") from None


def write_model_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` as ``open(path, "w")`` would, but atomically.

    The text goes to a new file in the target's folder, is flushed to disk, and then replaces
    the target by a rename, so a reader sees the old file or the new one, never a mix. As with
    ``open``: a symlink is written through (its final target is replaced and the link stays a
    link), an existing file keeps its permission bits, and a new file gets ``0o666`` less the
    umask. The folder is synced after the rename where the OS allows it.

    Parameters
    ----------
    path : str or path-like
    text : str
    """
    _check_path(path, "filename")
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    try:
        fd, tmp = _new_file_beside(target)
        try:
            if mode is not None:  # before the text is written, so it is never readable by more users than before
                os.chmod(tmp, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:  # named by the file asked for, not by the hidden temporary one
        raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
    _sync_folder(target.parent)


def _new_file_beside(target: Path) -> tuple[int, Path]:
    """A new hidden file in ``target``'s folder, open for writing; created with mode ``0o666`` so
    the umask applies to it as it does to a file ``open`` creates (``tempfile`` would give 0o600)."""
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:  # another writer drew the same name: draw again
            continue


def _sync_folder(folder: Path) -> None:
    """fsync ``folder`` so the rename survives a crash; skipped where a folder cannot be opened
    (Windows) or synced (some file systems)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
