"""The model file format: versioned JSON, read without executing anything.

A model file is one JSON object (``docs/reference/model_format.md`` documents every field)::

    {"format": "smartboost-model", "version": 1, "objective": {...}, "base_score": ...,
     "feature_names": [...], "bin_mapper": {...}, "params": {...},
     "best_iteration": ..., "best_score": {...}, "trees": [{...}, ...]}

Floats are written with Python's shortest round-trip repr, so a reloaded model predicts bit for
bit the same; non-finite thresholds are the strings ``"inf"``/``"-inf"`` (strict JSON has no
infinity). Loading validates everything it reads and raises :class:`ModelFormatError` naming
the problem; pickling a :class:`~smartboost.Booster` goes through the same text.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from ._params import resolve_params
from .binning import BinMapper
from .errors import ModelFormatError, SmartBoostError
from .objectives import Objective, make_objective
from .tree import Tree

FORMAT_NAME = "smartboost-model"
FORMAT_VERSION = 1


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


def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    """Tuples as lists; a custom objective function as its name, "custom"."""
    return {k: "custom" if callable(v) else list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def model_to_string(content: ModelContent) -> str:
    """Serialise a model to JSON text."""
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
    return json.dumps(document, allow_nan=False, separators=(",", ":"))


def _field(document: dict, key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in document:
        raise ModelFormatError(f"model is missing the field '{key}'")
    value = document[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ModelFormatError(f"model field '{key}' has the wrong type ({type(value).__name__})")
    return value


def model_from_string(text: str) -> ModelContent:
    """Parse and validate model JSON text.

    Raises
    ------
    ModelFormatError
        The text is not JSON (corrupt or truncated), not a smartboost model, from a newer
        format version, or inconsistent.
    """
    if not isinstance(text, str):
        raise ModelFormatError(f"a model string must be str, got {type(text).__name__}")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFormatError(f"model is not valid JSON (corrupt or truncated file?): {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ModelFormatError("not a smartboost model (the 'format' field is missing or different)")
    version = _field(document, "version", int)
    if version > FORMAT_VERSION:
        raise ModelFormatError(f"model format version {version} was written by a newer smartboost; this "
                               f"version ({__version__}) reads versions up to {FORMAT_VERSION}")
    try:
        spec = _field(document, "objective", dict)
        objective = make_objective(str(spec.get("name", "")), spec)
        params = resolve_params(_field(document, "params", dict))
    except (SmartBoostError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"model has invalid settings: {exc}") from None
    try:
        bin_mapper = BinMapper.from_dict(_field(document, "bin_mapper", dict))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"model bin_mapper is invalid: {exc!r}") from None
    feature_names = _field(document, "feature_names", list)
    if len(feature_names) != bin_mapper.n_features or not all(isinstance(n, str) for n in feature_names):
        raise ModelFormatError("model feature_names do not match its number of features")
    base_score = _base_score(_field(document, "base_score", (int, float, list)), objective.num_outputs)
    trees = []
    for i, tree in enumerate(_field(document, "trees", list)):
        if not isinstance(tree, dict):
            raise ModelFormatError(f"tree {i} is not an object")
        try:
            trees.append(Tree.from_dict(tree, bin_mapper.n_features, bin_mapper.n_bins))
        except ModelFormatError as exc:
            raise ModelFormatError(f"tree {i}: {exc}") from None
    if len(trees) % objective.num_outputs:
        raise ModelFormatError(f"model has {len(trees)} trees, not a multiple of its {objective.num_outputs} "
                               "classes")
    best_iteration = _field(document, "best_iteration", int)
    iterations = len(trees) // objective.num_outputs
    if not 0 <= best_iteration <= iterations:
        raise ModelFormatError(f"best_iteration {best_iteration} is outside [0, {iterations}]")
    return ModelContent(objective=objective, bin_mapper=bin_mapper, base_score=base_score,
                        feature_names=feature_names, params=params, trees=trees,
                        best_iteration=best_iteration, best_score=_field(document, "best_score", dict))


def _base_score(value: Any, n_outputs: int) -> float | np.ndarray:
    """A number for single-output models, a list of ``n_outputs`` numbers for multiclass ones."""
    if n_outputs == 1 and not isinstance(value, list):
        return float(value)
    if (not isinstance(value, list) or len(value) != n_outputs
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise ModelFormatError(f"model base_score must be {'a number' if n_outputs == 1 else f'{n_outputs} numbers'}")
    return np.array(value, np.float64)


def read_model_text(path: str | os.PathLike) -> str:
    """Read a model file's text; a binary or non-UTF-8 file is a ModelFormatError."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelFormatError(f"{path} is not a smartboost model (not UTF-8 text)") from None


def write_model_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, then a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
