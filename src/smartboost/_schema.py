"""Typed reads of a parsed model document, each failure a ModelFormatError naming the field.

The model loader (:func:`smartboost.io.model_from_string`, ``Tree.from_dict``,
``BinMapper.from_dict``) reads every field of the JSON document through these helpers, so a
wrong type, an integer outside its range or a non-finite number is refused with its path, such
as ``trees[3].left[7]``, before numpy converts anything. Lists of numbers are checked with one
pass over the element types and vectorised range checks, so loading stays about as fast as
parsing the JSON.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, NoReturn

import numpy as np

from .errors import ModelFormatError

INT64_MAX = int(np.iinfo(np.int64).max)

_INFINITIES = {"inf": np.inf, "-inf": -np.inf}
"""The strings a threshold list may hold for infinite thresholds (strict JSON has no infinity)."""

FINITE_ONLY = "a model holds finite numbers only"
_TOO_LARGE = "too large for a 64-bit float"

_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer"}
MISSING = object()
"""Default of :func:`member` for a field that must be present."""


def child(path: str, key: str | int) -> str:
    """The path of member ``key`` (a name or a list index) of the field at ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def fail(path: str, problem: str) -> NoReturn:
    """Raise the ModelFormatError of the field at ``path``."""
    raise ModelFormatError(f"model field '{path}' {problem}")


def describe(value: Any) -> str:
    """A short text for ``value`` in an error message (a huge number or text cut to 40 characters)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def of_type(value: Any, kind: type, path: str) -> Any:
    """``value`` when its JSON type is ``kind`` (dict, list, str or bool; true/false are not integers)."""
    if type(value) is not kind:
        fail(path, f"must be {_KIND_NAMES[kind]}, not {type(value).__name__} ({describe(value)})")
    return value


def member(obj: dict, key: str, path: str, kind: type | None = None, default: Any = MISSING) -> Any:
    """Member ``key`` of the object at ``path``, of JSON type ``kind`` when given; ``default`` when
    absent, a missing field when no default is given."""
    if key not in obj:
        if default is MISSING:
            fail(child(path, key), "is missing")
        return default
    value = obj[key]
    return value if kind is None else of_type(value, kind, child(path, key))


def known_keys(obj: dict, keys: Collection[str], path: str) -> None:
    """Refuse members other than ``keys``: a field this version does not know could change what
    the model means, so it is not ignored."""
    for key in obj:
        if key not in keys:
            fail(child(path, key), f"is not a field of this format (known: {', '.join(keys)})")


def integer(value: Any, path: str, low: int, high: int) -> int:
    """``value`` when it is an integer (not true/false) in ``[low, high]``."""
    if type(value) is not int:
        fail(path, f"must be an integer, not {type(value).__name__} ({describe(value)})")
    if not low <= value <= high:
        fail(path, f"is {describe(value)}, outside [{low}, {high}]")
    return value


def number(value: Any, path: str) -> float:
    """``value`` as a float when it is a finite number (not true/false)."""
    if type(value) not in (int, float):
        fail(path, f"must be a number, not {type(value).__name__} ({describe(value)})")
    try:
        result = float(value)
    except OverflowError:
        fail(path, f"is {describe(value)}, {_TOO_LARGE}")
    if not math.isfinite(result):
        fail(path, f"is {result}: {FINITE_ONLY}")
    return result


def first_non_finite(values: np.ndarray) -> int | None:
    """Index of the first NaN or infinite entry of a float array, None when all are finite."""
    finite = np.isfinite(values)
    return None if finite.all() else int(np.argmin(finite))


def _check_types(values: list, path: str, allowed: Collection[type], what: str) -> set[type]:
    """The element types of ``values``, refusing the first element of another type."""
    types = set(map(type, values))
    if not types.issubset(allowed):
        i = next(i for i, v in enumerate(values) if type(v) not in allowed)
        fail(child(path, i), f"must be {what}, not {type(values[i]).__name__} ({describe(values[i])})")
    return types


def strings(values: Any, path: str) -> list[str]:
    """``values`` when it is a list of strings."""
    _check_types(of_type(values, list, path), path, (str,), "a string")
    return values


def numbers(values: Any, path: str, dtype: type, low: int | None = None, high: int | None = None,
            infinities: bool = False) -> np.ndarray:
    """A list of numbers as an array of ``dtype``, every entry checked.

    Parameters
    ----------
    values : object
        The field's parsed JSON value; it must be a flat list.
    path : str
        The field's path, for errors (an entry's path adds its index).
    dtype : numpy dtype
        A float dtype (entries: finite numbers), an integer dtype (entries: integers in
        ``[low, high]``, by default the dtype's range) or bool (entries: true/false).
    low, high : int, optional
        Range of an integer field.
    infinities : bool
        Also accept the strings ``"inf"`` and ``"-inf"`` (float thresholds).

    Returns
    -------
    ndarray of ``dtype``, shape (len(values),)

    Raises
    ------
    ModelFormatError
        Naming the first bad entry, e.g. ``trees[3].left[7]``.
    """
    of_type(values, list, path)
    kind = np.dtype(dtype).kind
    if kind == "b":
        _check_types(values, path, (bool,), "true or false")
        return np.array(values, np.bool_)
    if kind in "iu":
        if low is None or high is None:
            info = np.iinfo(dtype)
            low, high = info.min if low is None else low, info.max if high is None else high
        _check_types(values, path, (int,), "an integer")
        array = _convert(values, path, np.int64, f"outside [{low}, {high}]")
        if array.size and (array.min() < low or array.max() > high):
            i = int(np.flatnonzero((array < low) | (array > high))[0])
            fail(child(path, i), f"is {array[i]}, outside [{low}, {high}]")
        return array.astype(dtype, copy=False)
    allowed = (int, float, str) if infinities else (int, float)
    types = _check_types(values, path, allowed, "a number or 'inf'/'-inf'" if infinities else "a number")
    text_at = [i for i, v in enumerate(values) if type(v) is str] if str in types else []
    for i in text_at:
        if values[i] not in _INFINITIES:
            fail(child(path, i), f"is {describe(values[i])}, neither a number nor 'inf'/'-inf'")
    array = _convert([0.0 if type(v) is str else v for v in values] if text_at else values, path, dtype,
                     _TOO_LARGE)
    i = first_non_finite(array)
    if i is not None:
        fail(child(path, i), f"is {array[i]}: {FINITE_ONLY}" + (" (infinite thresholds are the strings "
                                                                 "'inf'/'-inf')" if infinities else ""))
    array[text_at] = [_INFINITIES[values[i]] for i in text_at]
    return array


def _convert(values: list, path: str, dtype: type, problem: str) -> np.ndarray:
    """``np.array(values, dtype)``; an integer numpy cannot hold is refused with its index."""
    try:
        return np.array(values, dtype)
    except OverflowError:
        for i, v in enumerate(values):
            try:
                np.array(v, dtype)
            except OverflowError:
                fail(child(path, i), f"is {describe(v)}, {problem}")
        raise
