"""Process-level settings: the ``smartboost`` logger, verbosity and the numba thread count."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

import numba
from numba.core import event

__all__ = ["logger", "set_verbosity", "threads"]

logger = logging.getLogger("smartboost")
"""Every message smartboost emits goes through this logger.

It writes to stderr through its own handler, so evaluation lines show up in a plain script as
they do with LightGBM. To route them elsewhere, remove that handler and let the records
propagate: ``logger.handlers.clear(); logger.propagate = True``.
"""
if not logger.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("[smartboost] %(message)s"))
    logger.addHandler(_handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)


class _CompileNotice(event.Listener):
    """Says, once per process, that smartboost's kernels are being compiled.

    Numba signals a compilation only on a cache miss, so the notice shows on the first use on a
    machine (or after an upgrade), before the wait, and never when the kernels load from the
    cache. It goes to :data:`logger` at the info level.
    """

    def __init__(self) -> None:
        self.shown = False

    def on_start(self, ev: event.Event) -> None:
        """Log the notice at the first compilation of a smartboost function."""
        if self.shown:
            return
        function = getattr(ev.data["dispatcher"], "py_func", None)
        if getattr(function, "__module__", "").startswith("smartboost."):
            self.shown = True
            logger.info("compiling the kernels for this machine: about a minute on first use, cached afterwards "
                        "(smartboost.compile_kernels() does it ahead of time)")

    def on_end(self, ev: event.Event) -> None:
        """Nothing to do when a compilation ends."""


compile_notice = _CompileNotice()
event.register("numba:compile", compile_notice)


def set_verbosity(verbosity: int) -> None:
    """Map the ``verbosity`` parameter onto the logger level.

    Parameters
    ----------
    verbosity : int
        < 0: errors only, 0: warnings, 1: info, >= 2: debug.
    """
    if verbosity < 0:
        level = logging.ERROR
    elif verbosity == 0:
        level = logging.WARNING
    elif verbosity == 1:
        level = logging.INFO
    else:
        level = logging.DEBUG
    logger.setLevel(level)


@contextlib.contextmanager
def threads(num_threads: int) -> Iterator[int]:
    """Run numba parallel kernels on ``num_threads`` threads inside the block.

    Parameters
    ----------
    num_threads : int
        0 or -1: every thread numba was started with; otherwise at most that many.

    Yields
    ------
    int
        The thread count in effect.
    """
    previous = numba.get_num_threads()
    available = numba.config.NUMBA_NUM_THREADS
    n = available if num_threads <= 0 else min(num_threads, available)
    if n == previous:  # the usual case: no setting to change and restore around a short call
        yield n
        return
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)
