"""Distributed training on Dask (:func:`train`, :func:`predict` and the scikit-learn estimators);
:mod:`smartboost.dask._train` holds the implementation."""

from ._train import (
    DaskSmartBoostClassifier,
    DaskSmartBoostRanker,
    DaskSmartBoostRegressor,
    __all__,  # noqa: F401
    predict,
    train,
)
