"""Exceptions raised by smartboost.

Every error a user can trigger with bad input derives from :class:`SmartBoostError`, and the
value-like ones also from :class:`ValueError`, so ``except ValueError`` keeps working for code
written against scikit-learn, LightGBM or XGBoost.
"""

from __future__ import annotations

import difflib
import signal
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The hint an error about an unknown ``name`` ends with: ``"; did you mean 'a' or 'b'?"`` for
    the closest of the ``known`` names, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(known), n=3)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


class SmartBoostError(Exception):
    """Base class of every error raised deliberately by smartboost."""


class ParameterError(SmartBoostError, ValueError):
    """An unknown parameter, a value of the wrong type or out of range, or a bad combination."""


class DataError(SmartBoostError, ValueError):
    """Training or prediction data that cannot be used: wrong shape, bad labels, empty, ..."""


class ModelFormatError(SmartBoostError, ValueError):
    """A model file or string that is not a valid smartboost model (corrupt, truncated, newer),
    or a model that no valid file can hold (a non-finite number), refused before it is written."""


class DatasetNotFoundError(SmartBoostError, FileNotFoundError):
    """A named public dataset is neither in the local cache nor downloadable."""


class DistributedError(SmartBoostError, RuntimeError):
    """Distributed training lost a worker, or a step took longer than its timeout."""


class RawScoreWarning(UserWarning):
    """Predictions that are raw scores, or class labels read off raw scores, where class
    probabilities or labels were asked for: a classifier trained with a custom objective (a
    gradient function) does not know the link from its raw scores to probabilities. LightGBM's
    ``LGBMClassifier`` warns alike; ``warnings.filterwarnings("ignore", category=RawScoreWarning)``
    silences it."""


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped by a signal (Ctrl-C, or SIGTERM on the command line).

    A ``KeyboardInterrupt``, so ``except KeyboardInterrupt`` catches it; it is raised after
    the callbacks have seen the model of the finished iterations (``CallbackEnv.interrupted``).

    Parameters
    ----------
    signum : int
        The signal number (``signal.SIGINT`` for Ctrl-C).
    """

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
