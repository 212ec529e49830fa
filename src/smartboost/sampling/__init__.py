"""Row samplers (ALGORITHMS.md 3), behind one interface (:class:`~smartboost.sampling.base.Sampler`).

``sampling`` selects one of :data:`SAMPLERS`; :func:`resolve_sampling_params` checks the sampling
parameters together at the boundary and :func:`make_sampler` builds the sampler of a run, drawing
whole queries with ``sampling_unit='query'`` (:mod:`smartboost.sampling.queries`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from .base import NoSampling, Sampler, SamplingContext
from .goss import GOSSSampler
from .importance import LossSampler, MVSSampler, Smart1Sampler, Smart2Sampler
from .queries import QuerySampler
from .random import BernoulliSampler, UniformSampler
from .trimming import TrimmingSampler

SAMPLERS: dict[str, type[Sampler]] = {cls.name: cls for cls in (
    NoSampling, UniformSampler, BernoulliSampler, TrimmingSampler, GOSSSampler, Smart1Sampler, Smart2Sampler,
    MVSSampler, LossSampler)}

_OWN_PARAMS = {
    "smart_rho": ("smart1", "smart2", "loss"),
    "smart_eta": ("smart2",),
    "smart_correction": ("smart2",),
    "mvs_lambda": ("mvs",),
    "goss_top_rate": ("goss",),
    "goss_other_rate": ("goss",),
    "trimming_alpha": ("trimming",),
}

GOSS_DEFAULT_TOP_SHARE = 2.0 / 3.0
"""Without ``goss_top_rate``, GOSS keeps this share of ``sample_rate`` as top rows (LightGBM's
defaults, top 0.2 and other 0.1, have the same 2:1 ratio)."""

GOSS_DEFAULT_TOP_RATE = 0.2
"""LightGBM's ``top_rate`` default, used when only ``goss_other_rate`` is given."""

__all__ = ["SAMPLERS", "Sampler", "SamplingContext", "make_sampler", "resolve_sampling_params"]


def resolve_sampling_params(params: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the sampling parameters together and fill in the derived ones, in place.

    Parameters
    ----------
    params : dict
        Resolved parameters (defaults filled in); updated in place.
    given : dict
        The parameters the user gave (canonical names).

    Raises
    ------
    ParameterError
        For combinations that make no sense.
    """
    sampling = params["sampling"]
    if params["sampling_freq"] == 0:  # LightGBM's bagging_freq=0: no sampling
        if sampling not in (None, "none"):
            raise ParameterError(f"sampling='{sampling}' with sampling_freq=0 (which turns sampling off); "
                                 "use sampling_freq >= 1")
        sampling = "none"
    if sampling is None:
        sampling = "uniform" if params["sample_rate"] < 1.0 else "none"
    params["sampling"] = sampling
    for name, samplers in _OWN_PARAMS.items():
        if name in given and sampling not in samplers:
            raise ParameterError(f"parameter '{name}' applies to sampling={' or '.join(samplers)}, not '{sampling}'")
    if sampling == "none":
        if given.get("sample_rate", 1.0) < 1.0 and params["sampling_freq"] != 0:
            raise ParameterError("sample_rate < 1 with sampling='none'; choose a sampler (e.g. sampling='mvs')")
        params["sample_rate"] = 1.0
    if params["smart_rho"] is not None and "sample_rate" in given:
        raise ParameterError("give either smart_rho (p = min(1, rho * importance)) or sample_rate, not both")
    if sampling == "trimming" and params["trimming_alpha"] is not None and "sample_rate" in given:
        raise ParameterError("give either trimming_alpha or sample_rate for trimming, not both")
    if sampling == "goss":
        _resolve_goss(params, given)
    if params["sampling_unit"] == "query" and not SAMPLERS[sampling].supports_queries:
        able = ", ".join(name for name, cls in SAMPLERS.items() if cls.supports_queries)
        raise ParameterError(f"sampling_unit='query' draws whole queries with a sampler's rule; sampling="
                             f"'{sampling}' has none (use sample_rate < 1 with one of: {able})")


def _resolve_goss(params: dict[str, Any], given: dict[str, Any]) -> None:
    top = params["goss_top_rate"]
    other = params["goss_other_rate"]
    if other is not None:
        top = GOSS_DEFAULT_TOP_RATE if top is None else top
        if "sample_rate" in given and abs(given["sample_rate"] - (top + other)) > 1e-12:
            raise ParameterError(f"sample_rate={given['sample_rate']} differs from goss_top_rate + goss_other_rate "
                                 f"= {top + other}; give two of the three")
        params["sample_rate"] = top + other
    elif top is None:
        top = GOSS_DEFAULT_TOP_SHARE * params["sample_rate"]
    if not top < params["sample_rate"] <= 1.0:
        raise ParameterError(f"goss needs goss_top_rate ({top:g}) < sample_rate ({params['sample_rate']:g}) <= 1: the "
                             "rest of the sample is drawn from the other rows")
    params["goss_top_rate"] = top


def make_sampler(params: dict[str, Any], n_rows: int, row_ids: np.ndarray | None = None) -> Sampler:
    """The sampler selected by resolved (and :func:`resolve_sampling_params`-checked) parameters,
    for ``n_rows`` rows with ids ``row_ids`` among every machine's rows (None: 0 .. n_rows - 1)."""
    sampler = SAMPLERS[params["sampling"]](params, n_rows)
    sampler.row_ids = row_ids
    return QuerySampler(sampler) if params["sampling_unit"] == "query" else sampler
