"""Monotone and interaction constraints: the parameters resolved against a model's features.

``monotone_constraints`` and ``interaction_constraints`` name features by index or by name
(``_params``); :func:`monotone_directions` and :func:`interaction_groups` turn them into the
arrays the growth loop reads (``_kernels.grow``, ``_kernels.split``), checking every feature
they name. docs/howto/constraints.md describes what the constraints guarantee.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import ParameterError

__all__ = ["monotone_directions", "interaction_groups"]


def _feature_index(ref: int | str, feature_names: Sequence[str], parameter: str) -> int:
    """The index of a feature given by index or name; a ParameterError names an unknown one."""
    if isinstance(ref, str):
        if ref not in feature_names:
            raise ParameterError(f"parameter '{parameter}' names feature {ref!r}, which is not a feature of the data "
                                 f"(features: {', '.join(map(repr, feature_names[:10]))}"
                                 f"{' ...' if len(feature_names) > 10 else ''})")
        return list(feature_names).index(ref)
    if not 0 <= ref < len(feature_names):
        raise ParameterError(f"parameter '{parameter}' names feature {ref}, but the data has {len(feature_names)} "
                             "features")
    return ref


def monotone_directions(value: Any, feature_names: Sequence[str], categorical: np.ndarray) -> np.ndarray | None:
    """The ``monotone_constraints`` parameter as one int8 per feature (-1, 0, +1), or None when
    it constrains nothing.

    Parameters
    ----------
    value : tuple of int, dict or None
        The resolved parameter: one direction per feature, or features (indices or names) to
        directions.
    feature_names : sequence of str
    categorical : ndarray of bool
        The categorical features, which have no order to keep.

    Raises
    ------
    ParameterError
        A list of the wrong length, an unknown feature or one named twice, or a constrained
        categorical feature.
    """
    if value is None:
        return None
    n = len(feature_names)
    directions = np.zeros(n, np.int8)
    if isinstance(value, Mapping):
        named: dict[int, int | str] = {}
        for ref, direction in value.items():
            f = _feature_index(ref, feature_names, "monotone_constraints")
            if f in named:  # as index and name: one would silently win
                raise ParameterError(f"parameter 'monotone_constraints' names feature {feature_names[f]!r} twice "
                                     f"(as {named[f]!r} and {ref!r})")
            named[f] = ref
            directions[f] = direction
    else:
        if len(value) != n:
            raise ParameterError(f"parameter 'monotone_constraints' has {len(value)} entries, but the data has {n} "
                                 "features (give one of -1, 0, 1 per feature, or a dict of feature names)")
        directions[:] = value
    bad = np.flatnonzero((directions != 0) & categorical)
    if bad.size:
        raise ParameterError(f"parameter 'monotone_constraints' constrains the categorical feature "
                             f"{feature_names[bad[0]]!r}; categories have no order to keep monotone")
    return directions if directions.any() else None


def interaction_groups(value: Any, feature_names: Sequence[str]) -> np.ndarray | None:
    """The ``interaction_constraints`` parameter as the bit set of the groups each feature
    belongs to: uint64, shape (n_features, ceil(n_groups / 64)); None without constraints.

    Raises
    ------
    ParameterError
        A group naming an unknown feature.
    """
    if value is None:
        return None
    groups = np.zeros((len(feature_names), (len(value) + 63) // 64), np.uint64)
    for k, group in enumerate(value):
        for ref in group:
            groups[_feature_index(ref, feature_names, "interaction_constraints"), k // 64] |= np.uint64(1 << (k % 64))
    return groups
