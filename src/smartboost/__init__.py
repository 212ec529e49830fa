"""smartboost: histogram gradient boosting built around fast row sampling.

Native API: :class:`Dataset`, :func:`train`, :class:`Booster`, callbacks.
"""

__version__ = "0.1.0"

from . import _cache, callback  # noqa: F401  (_cache first: it keys the numba cache of every kernel)
from ._warmup import compile_kernels
from .booster import Booster
from .callback import (Checkpoint, EarlyStopping, LogEvaluation, ProgressBar, RecordEvaluation, ResetParameter,
                       TrainingCallback, checkpoint, early_stopping, log_evaluation, progress_bar, record_evaluation,
                       reset_parameter)
from .crossval import CVBooster, cv
from .dataset import Dataset
from .engine import train
from .errors import DataError, ModelFormatError, ParameterError, SmartBoostError, TrainingInterrupted

__all__ = [
    "Booster", "CVBooster", "Dataset", "train", "cv", "callback",
    "TrainingCallback", "Checkpoint", "EarlyStopping", "LogEvaluation", "ProgressBar", "RecordEvaluation",
    "ResetParameter", "checkpoint", "early_stopping", "log_evaluation", "progress_bar", "record_evaluation",
    "reset_parameter",
    "SmartBoostError", "ParameterError", "DataError", "ModelFormatError", "TrainingInterrupted", "compile_kernels",
    "__version__",
]
