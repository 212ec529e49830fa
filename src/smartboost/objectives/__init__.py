"""Objectives: losses with their gradients, hessians, start values and links.

Importing this package imports every module in it, so each objective registers itself; see
:mod:`smartboost.objectives.base` for the interface.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Objective, canonical_objective_name, make_objective, objective_class, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Objective", "canonical_objective_name", "make_objective", "objective_class", "register"]
