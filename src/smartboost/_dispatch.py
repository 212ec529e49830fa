"""Calling a compiled function many times in a row without numba's per-call type dispatch."""

from __future__ import annotations

from typing import Any

from numba.core.registry import CPUDispatcher


class BoundKernel:
    """A compiled function whose calls after the first skip numba's type dispatch.

    At every call numba's dispatcher works out the numba type of each argument to choose the
    compiled version; for a namedtuple of arrays (the growth loop's state, a worker's rows) that
    is a few microseconds per field, 20-30 us for the growth loop's arguments, which a loop that
    comes back to Python at every split (``smartboost.dask``) would pay several times per split.
    The first call goes through the dispatcher (compiling if need be); later calls go straight
    to the compiled version it chose, which unboxes the arguments by that version's types
    without checking them. So a ``BoundKernel`` serves one run of calls whose arguments keep
    the types of the first call's (make a new one where they may change).

    Parameters
    ----------
    dispatcher : numba CPUDispatcher
        The ``@njit`` function.
    """

    def __init__(self, dispatcher: CPUDispatcher) -> None:
        self.dispatcher = dispatcher
        self._call = None

    def __call__(self, *args: Any) -> Any:
        if self._call is not None:
            return self._call(*args)
        result = self.dispatcher(*args)
        self._call = compiled_version(self.dispatcher, args)
        return result


def compiled_version(dispatcher: CPUDispatcher, args: tuple) -> Any:
    """The entry point of the version of ``dispatcher`` compiled for ``args``' types (after a call
    with them): its only version, else the one for their exact types; the dispatcher itself when
    there is none (a call that converted an argument to an existing version's type)."""
    overloads = dispatcher.overloads
    if len(overloads) == 1:  # the call with ``args`` chose it
        return next(iter(overloads.values())).entry_point
    version = overloads.get(tuple(dispatcher.typeof_pyval(arg) for arg in args))
    return dispatcher if version is None else version.entry_point
