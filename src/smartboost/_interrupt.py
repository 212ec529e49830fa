"""Ctrl-C that keeps the work: signals during training stop it between iterations.

Python runs a signal handler in the main thread at the next bytecode it executes, and a compiled
kernel executes some Python of its own (numba unpickles constants through a Python function),
so the default SIGINT handler can raise ``KeyboardInterrupt`` inside a kernel: the kernel then
returns a result with an exception set, which surfaces as a ``SystemError`` and leaves the
model half-updated. :func:`deferred_interrupts` replaces the handlers while a training loop
runs: a first signal is only recorded, and :meth:`InterruptGuard.check`, called by the loop at
its safe point between iterations, raises :class:`TrainingInterrupted` there. A second signal
raises at once (a user who presses Ctrl-C twice does not want to wait for the iteration);
:func:`interrupt_of` recognises the ``SystemError`` that raising inside a kernel leaves, so
that the caller still sees a ``KeyboardInterrupt``.

SIGINT is always deferred. Another signal (the command line's SIGTERM) is deferred when its
handler is :func:`raise_interrupt`, which outside training raises :class:`TrainingInterrupted`
at once.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

from ._config import logger
from .errors import TrainingInterrupted

__all__ = ["InterruptGuard", "deferred_interrupts", "interrupt_of", "interruptible", "raise_interrupt"]


def raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """Signal handler that raises :class:`TrainingInterrupted`; during training it is deferred
    to the loop's safe point like SIGINT."""
    raise TrainingInterrupted(signum)


class InterruptGuard:
    """The signals recorded while a training loop runs (see :func:`deferred_interrupts`)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # the second signal: stop now
            self._restore()
            raise TrainingInterrupted(signum)
        self.signum = signum
        logger.warning("%s: training stops after the current iteration (again to stop at once)",
                       signal.Signals(signum).name)

    def _install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(signum)
            if signum == signal.SIGINT or handler is raise_interrupt:
                self._previous[signum] = handler
                signal.signal(signum, self._handle)

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def check(self) -> None:
        """Raise :class:`TrainingInterrupted` when a signal arrived since the loop started."""
        if self.signum is not None:
            raise TrainingInterrupted(self.signum)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[InterruptGuard]:
    """Within the block, SIGINT (and a SIGTERM handled by :func:`raise_interrupt`) waits for
    :meth:`InterruptGuard.check`. Signal handlers belong to the main thread: elsewhere the
    guard records nothing and the signals keep their handlers."""
    guard = InterruptGuard()
    if threading.current_thread() is threading.main_thread():
        guard._install()
    try:
        yield guard
    finally:
        guard._restore()


def interrupt_of(exc: BaseException) -> KeyboardInterrupt | None:
    """The ``KeyboardInterrupt`` behind ``exc``: itself, or the one a ``SystemError`` from a
    compiled kernel was caused by; None for any other exception."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        if not isinstance(exc, SystemError):
            return None
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def interruptible(function: Callable) -> Callable:
    """Decorator: a Ctrl-C that lands inside ``function``'s compiled kernels surfaces as the
    ``KeyboardInterrupt`` it is, not as the kernel's ``SystemError``."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except SystemError as exc:
            interrupt = interrupt_of(exc)
            if interrupt is None:
                raise
            raise interrupt from None

    return wrapper
