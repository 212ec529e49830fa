"""Dataset: training or evaluation data, binned once, when first used.

The data are checked when the Dataset is made and binned when it is first used (LightGBM's lazy
Dataset): by ``train`` or ``cv``, with the binning parameters they are given over the Dataset's
own, or by :meth:`Dataset.construct`. The raw feature values are then let go; a Dataset keeps
the bins (uint8, or uint16 above 255 bins), the labels, weights and initial scores. Evaluation
sets are binned with the training set's edges (``reference=train_set``, which ``train`` sets for
an evaluation set without one), or a trained Booster's, to continue training it. Which features
are categorical is decided here too (``categorical_feature``), with their bins.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._data import Features, check_column_names, check_largest_weight, to_features, to_query_starts, to_vector
from ._params import explicit_params, resolve_params
from .binning import BinMapper, BinnedData, check_categorical_columns
from .errors import DataError, ParameterError

__all__ = ["Dataset"]


class Dataset:
    """Data for training or evaluation.

    Parameters
    ----------
    data : array-like, DataFrame, scipy sparse matrix, or str or path of a data file
        Features, shape (n_rows, n_features); NaN is a missing value, +-inf fall into the outer
        bins. A file (svmlight/LIBSVM, CSV, TSV or parquet, by its name) is read as
        ``smartboost train FILE`` reads one (docs/quickstart.md, "Data files"): its label (the
        first column of CSV/TSV/parquet), its header's names, its query ids (svmlight ``qid:``
        or a ``.query`` side file), the text of ``categorical_feature`` columns as categories;
        with a ``reference``, its columns matched to the reference's features by name (any
        order) or position. Read other layouts into memory first.
    label : array-like, shape (n_rows,), optional
        Targets (required for training and evaluation); default for a file: its label.
    weight : array-like, shape (n_rows,), optional
        Non-negative row weights. Their scale is free: weights multiplied by one factor grow the
        same trees when ``min_sum_hessian_in_leaf``, ``lambda_l1``, ``lambda_l2``,
        ``min_gain_to_split`` and ``cat_l2`` (absolute sums of weighted hessians, or gains) are
        multiplied by it too (``cat_smooth``, a row count and a hessian, only at 0), over the
        whole float range: from a largest weight of 2.2e-308, the least normal float, to weights
        whose sum, weighted gradients and losses stay below 1.8e308 (beyond either end,
        DataError).
    init_score : array-like, shape (n_rows,) or (n_rows, n_classes), optional
        Per-row raw scores that boosting starts from (added to the model's base score; not
        part of the model's predictions): one per row, or with a multiclass objective one per
        row and class (a column per class, as the raw scores ``predict(raw_score=True)`` gives).
    feature_name : list of str or 'auto', optional
        Feature names (default or 'auto': the DataFrame's columns, else ``Column_<i>``).
    group : array-like of int, optional
        Ranking: the number of rows of each query, in row order.
    qid : array-like, optional
        Ranking: the query id of every row (rows of a query contiguous, ids sorted); an
        alternative to ``group``.
    reference : Dataset or Booster, optional
        Bin with its edges instead of learning new ones (evaluation sets; continued training).
        A DataFrame's columns must have its feature names, in its order (columns are read by
        position), unless its features have no names of their own (``Column_<i>``).
    params : dict, optional
        Binning parameters (``max_bin``, ``bin_construct_sample_cnt``, ``min_data_in_bin``,
        ``seed``, ``categorical_feature``); other parameters are validated and ignored here. The
        parameters of the first ``train`` or ``cv`` run on this Dataset update them (LightGBM's
        rule), unless it is binned before (:meth:`construct`).
    categorical_feature : 'auto' or list of int or str
        The categorical features, by index or name (docs/howto/categorical.md). 'auto': a
        DataFrame's category, string, object and arrow dictionary columns. Their values are
        integer codes (NaN and negative codes: missing), texts or a DataFrame's categories. With
        a ``reference``, its categorical features (and their bins) are used.
    """

    def __init__(self, data: Any, label: Any = None, weight: Any = None, init_score: Any = None,
                 feature_name: list[str] | None = None, reference: Any = None,
                 params: dict[str, Any] | None = None, group: Any = None, qid: Any = None,
                 categorical_feature: Any = "auto") -> None:
        resolve_params(params)  # every parameter checked here, the binning ones used when binned
        self._params = explicit_params(params)
        declared = _declared_categorical(categorical_feature, self._params)
        self.data_format = None
        if isinstance(data, (str, os.PathLike)):
            file = _read_file(data, reference, declared)
            if file.zero_based is not None:  # validation files with this reference are read alike
                self.data_format = {"svmlight_zero_based": file.zero_based}
            data = file.X
            if feature_name is None or isinstance(feature_name, str) and feature_name == "auto":
                feature_name = file.feature_names
            label = file.label if label is None else label
            if group is None and qid is None:
                qid = file.qid
        features = to_features(data, "data")
        n_rows, n_features = features.matrix.shape
        if isinstance(feature_name, str):
            # a text would be split into one-letter names; 'auto' is LightGBM's "the data's own names"
            if feature_name != "auto":
                raise DataError(f"feature_name must be a list of names (or 'auto'), got the text {feature_name!r}")
            feature_name = None
        self._features: Features | None = features
        self._n_rows, self._n_features = n_rows, n_features
        self._declared = declared
        self._given_names = feature_name
        self._reference = None
        self._binned: BinnedData | None = None
        if reference is None:
            self.feature_name = _feature_names(feature_name if feature_name is not None else features.names,
                                               n_features)
            self._categorical = (features.from_dtype if declared == "auto"
                                 else categorical_mask(declared, self.feature_name, "categorical_feature"))
            check_categorical_columns(features, self._categorical)  # here, not when it is binned
        else:
            self._set_reference(reference)
        self.label = None if label is None else to_vector(label, n_rows, "label")
        self.weight = None if weight is None else to_vector(weight, n_rows, "weight", nonnegative=True)
        self.init_score = None if init_score is None else to_vector(init_score, n_rows, "init_score", columns=True)
        self.query_starts = to_query_starts(group, qid, n_rows)
        _check_weight_total(self.weight)

    def _set_reference(self, reference: Any) -> None:
        """Take the bins of ``reference`` (a Dataset or a Booster) when binned: check that this
        data's features are its features (count, a DataFrame's column names, the categorical
        ones) and take its feature names where this data has none."""
        n_features = _reference_n_features(reference)
        if n_features != self._n_features:
            raise DataError(f"data has {self._n_features} features but the reference has {n_features}")
        column_names = self._features.names
        if names := _reference_names(reference):
            check_column_names(column_names, names, "reference's")
            column_names = column_names or names
        given = self._given_names
        self.feature_name = _feature_names(given if given is not None else column_names, self._n_features)
        categorical = _reference_categorical(reference)
        if self._declared != "auto" and not np.array_equal(
                categorical_mask(self._declared, self.feature_name, "categorical_feature"), categorical):
            raise DataError(f"categorical_feature {list(self._declared)} differs from the reference's categorical "
                            f"features {np.flatnonzero(categorical).tolist()}; data binned with a reference takes its "
                            "bins")
        self._categorical = categorical
        self._reference = reference

    @property
    def binned(self) -> BinnedData:
        """The bins (made now with this Dataset's own parameters if it is not binned yet)."""
        if self._binned is None:
            self._bin({})
        return self._binned

    def construct(self) -> Dataset:
        """Bin the data now, with this Dataset's parameters or its reference's edges (LightGBM's
        ``Dataset.construct``); ``train`` and ``cv`` otherwise bin it with theirs. Returns self."""
        self.binned
        return self

    def _bin(self, given: dict[str, Any]) -> None:
        """Make the bins: the reference's edges, or edges learned with this Dataset's binning
        parameters updated by ``given`` (training parameters, as LightGBM's ``train`` updates an
        unconstructed Dataset's); the raw features are then let go."""
        if self._reference is not None:
            mapper = _reference_mapper(self._reference)
        else:
            declared = given.get("categorical_feature", "auto")
            if declared != "auto":
                self._categorical = categorical_mask(declared, self.feature_name, "categorical_feature")
            mapper = BinMapper.from_params(resolve_params({**self._params, **_binning_only(given)}))
            mapper.fit(self._features, self._categorical)
        self._binned = mapper.transform(self._features)
        self._features = None

    def bin_for_training(self, given: dict[str, Any], model: Any = None) -> None:
        """Bin this training set with the training parameters ``given`` (explicit ones, canonical
        names) unless it is binned already, or with the edges of ``model`` (a Booster whose
        training goes on) when it has no reference; then its bins must be those ``given`` asks
        for.

        Raises
        ------
        ParameterError
            Binning parameters in ``given`` other than those of its bins.
        """
        if self._binned is None:
            if model is not None and self._reference is None:
                self._set_reference(model)
            self._bin(given)
        self._check_binning_params(given)

    def bin_for_evaluation(self, reference: Any) -> None:
        """Bin this evaluation set, unless it is binned already, with its reference's edges or,
        without one, with ``reference``'s (the training set, or a model), as LightGBM's ``train``
        sets the reference of its evaluation sets.

        Raises
        ------
        DataError
            Features other than the reference's.
        """
        if self._binned is None:
            if self._reference is None and self is not reference:
                self._set_reference(reference)
            self._bin({})

    @property
    def bin_mapper(self) -> BinMapper:
        """The bin edges used for this data."""
        return self.binned.mapper

    def num_data(self) -> int:
        """Number of rows."""
        return self._n_rows

    def num_feature(self) -> int:
        """Number of features."""
        return self._n_features

    def num_queries(self) -> int:
        """Number of queries (0 without query information)."""
        return 0 if self.query_starts is None else self.query_starts.size - 1

    def get_label(self) -> np.ndarray | None:
        """The labels."""
        return self.label

    def get_weight(self) -> np.ndarray | None:
        """The row weights (None: every row weighs 1)."""
        return self.weight

    def get_init_score(self) -> np.ndarray | None:
        """The initial raw scores (None: none)."""
        return self.init_score

    def get_group(self) -> np.ndarray | None:
        """The number of rows of each query, in row order, as ``group`` gives them (None without
        queries)."""
        return None if self.query_starts is None else np.diff(self.query_starts)

    def subset(self, used_indices: Any) -> Dataset:
        """The Dataset of some of these rows, with their bins, labels, weights, init scores and
        queries: nothing is binned again (LightGBM's ``Dataset.subset``).

        Parameters
        ----------
        used_indices : array-like of int, or of bool with one entry per row
            The rows, in the order the subset holds them. With queries, each query's rows must
            stay together and queries keep their order (whole queries, or parts of them).

        Returns
        -------
        Dataset
            Binned with this Dataset's edges (a valid set of it, or training data of a model
            whose evaluation sets were binned with them); equal to ``Dataset(X[used_indices],
            ..., reference=self)``.
        """
        rows = np.asarray(used_indices)
        if rows.dtype == np.bool_:
            if rows.shape != (self.num_data(),):
                raise DataError(f"a boolean used_indices needs one entry per row ({self.num_data()}), got shape "
                                f"{rows.shape}")
            rows = np.flatnonzero(rows)
        if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
            raise DataError("used_indices must be a 1-dimensional array of row indices (or a boolean mask)")
        if rows.size == 0:
            raise DataError("used_indices selects no row")
        bad = (rows < 0) | (rows >= self.num_data())
        if bad.any():
            raise DataError(f"used_indices holds {rows[np.argmax(bad)]}, outside [0, {self.num_data()})")
        out = Dataset.__new__(Dataset)
        row_major = np.ascontiguousarray(self.binned.row_major[rows])
        missing = (row_major == self.bin_mapper.n_bins.astype(row_major.dtype)).sum(axis=0, dtype=np.int64)
        out._binned = BinnedData(self.bin_mapper, row_major, missing)
        out._features, out._reference, out._params = None, None, dict(self._params)
        out._n_rows, out._n_features = rows.size, self._n_features
        out._declared, out._given_names, out._categorical = self._declared, self._given_names, self._categorical
        out.label, out.weight, out.init_score = (None if v is None else v[rows]
                                                 for v in (self.label, self.weight, self.init_score))
        out.query_starts = None if self.query_starts is None else _subset_queries(self.query_starts, rows)
        _check_weight_total(out.weight)
        out.feature_name = list(self.feature_name)
        out.data_format = self.data_format
        return out

    def _check_binning_params(self, given: dict[str, Any]) -> None:
        """Raise when training parameters ask for other bins than this Dataset was binned with."""
        mapper = self.bin_mapper
        for name, used in (("max_bin", mapper.max_bin), ("bin_construct_sample_cnt", mapper.sample_cnt),
                           ("min_data_in_bin", mapper.min_data_in_bin)):
            if name in given and given[name] != used:
                raise ParameterError(
                    f"parameter '{name}'={given[name]} differs from the Dataset's ({used}), which is binned "
                    f"already (used by an earlier training run, construct() or a reference): pass it as "
                    f"Dataset(..., params={{'{name}': {given[name]}}}) or give it to the first run")
        declared = given.get("categorical_feature", "auto")
        if declared != "auto" and not np.array_equal(
                categorical_mask(declared, self.feature_name, "categorical_feature"), mapper.categorical):
            raise ParameterError(
                f"parameter 'categorical_feature'={list(declared)} differs from the Dataset's categorical features "
                f"{np.flatnonzero(mapper.categorical).tolist()}, which is binned already: pass it as "
                "Dataset(..., categorical_feature=...)")

    def __repr__(self) -> str:
        return f"<smartboost.Dataset rows={self.num_data()} features={self.num_feature()}>"


def categorical_mask(declared: Any, names: list[str], parameter: str) -> np.ndarray:
    """The categorical features (bool mask) a list of indices or names declares.

    Raises
    ------
    DataError
        An index beyond the features, or a name that is not a feature, naming it.
    """
    mask = np.zeros(len(names), np.bool_)
    for ref in declared:
        if isinstance(ref, str):
            if ref not in names:
                raise DataError(f"{parameter} names column {ref!r}, which is not a feature (features: "
                                f"{', '.join(map(repr, names[:10]))}{' ...' if len(names) > 10 else ''})")
            mask[names.index(ref)] = True
        elif not 0 <= ref < len(names):
            raise DataError(f"{parameter} names feature {ref}, but the data has {len(names)} features")
        else:
            mask[ref] = True
    return mask


def _declared_categorical(argument: Any, given: dict[str, Any]) -> Any:
    """The categorical features declared by the Dataset's argument or its params (they must
    agree when both are given): 'auto' or a tuple of indices or names."""
    declared = resolve_params({"categorical_feature": argument})["categorical_feature"]
    in_params = given.get("categorical_feature", "auto")
    if declared != "auto" and in_params != "auto" and declared != in_params:
        raise ParameterError(f"categorical_feature={list(declared)} and params' categorical_feature="
                             f"{list(in_params)} differ; give one")
    return declared if declared != "auto" else in_params


def _feature_names(names: list[str] | None, n_features: int) -> list[str]:
    """The features' names (default ``Column_<i>``), checked: one per feature, all different."""
    if names is None:
        return [f"Column_{i}" for i in range(n_features)]  # unique by construction
    names = [str(n) for n in names]
    if len(names) != n_features:
        raise DataError(f"feature_name has {len(names)} names but the data has {n_features} features")
    if len(set(names)) != len(names):
        seen: dict[str, int] = {}
        for j, name in enumerate(names):
            if name in seen:
                raise DataError(f"feature names must be unique: {name!r} names features {seen[name]} and {j}")
            seen[name] = j
    return names


def _check_weight_total(weight: np.ndarray | None) -> None:
    """Raise when row weights sum to zero or overflow, or are all below the least normal float
    (:func:`~smartboost._data.check_largest_weight`)."""
    if weight is None:
        return
    with np.errstate(over="ignore"):
        total = weight.sum()
    if not total > 0:
        raise DataError("weight sums to zero: no row carries any weight")
    if not np.isfinite(total):
        raise DataError(f"weight sums to more than the largest float (largest weight {weight.max():g} "
                        f"at row {int(weight.argmax())}); rescale the weights")
    check_largest_weight(float(weight.max()))


def _subset_queries(query_starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Query starts of the subset ``rows`` (each query's rows together, queries in order)."""
    query = np.repeat(np.arange(query_starts.size - 1), np.diff(query_starts))[rows]
    if (np.diff(query) < 0).any():
        row = int(np.argmax(np.diff(query) < 0)) + 1
        raise DataError(f"used_indices must keep each query's rows together and the queries in order; entry {row} "
                        f"(row {rows[row]}) is in query {query[row]}, after query {query[row - 1]}")
    return to_query_starts(None, query, rows.size)


def _read_file(path: str | os.PathLike, reference: Any, categorical: Any) -> Any:
    """The data file ``path`` read as ``smartboost train`` reads its training file (``reference``
    None) or its validation files (with ``reference``'s features, text categories and svmlight
    index base): a :class:`~smartboost.datafile.DataFile`."""
    from ._data import default_names
    from .datafile import ReadOptions, read_for_model, read_training, text_refs

    if reference is None:
        return read_training(path, ReadOptions(), categorical)
    mapper = _reference_mapper(reference)
    names = _reference_names(reference)
    names = None if names is None or default_names(names) else names
    zero_based = (getattr(reference, "data_format", None) or {}).get("svmlight_zero_based")
    return read_for_model(path, ReadOptions(), mapper.n_features, names, zero_based, text_refs(mapper, names))


_BINNING_PARAMS = ("max_bin", "bin_construct_sample_cnt", "min_data_in_bin", "seed", "categorical_feature")


def _binning_only(given: dict[str, Any]) -> dict[str, Any]:
    """The parameters of ``given`` that shape the bins."""
    return {name: value for name, value in given.items() if name in _BINNING_PARAMS}


def _reference_n_features(reference: Any) -> int:
    if isinstance(reference, Dataset):
        return reference.num_feature()
    return _reference_mapper(reference).n_features


def _reference_categorical(reference: Any) -> np.ndarray:
    """The categorical features of ``reference`` (an unbinned Dataset's declared ones)."""
    if isinstance(reference, Dataset) and reference._binned is None:
        return reference._categorical
    return _reference_mapper(reference).categorical


def _reference_mapper(reference: Any) -> BinMapper:
    mapper = getattr(reference, "bin_mapper", None)
    if not isinstance(mapper, BinMapper):
        raise DataError(f"reference must be a Dataset or a Booster, got {type(reference).__name__}")
    return mapper


def _reference_names(reference: Any) -> list[str] | None:
    names = getattr(reference, "feature_name", None)
    if callable(names):  # Booster.feature_name()
        names = names()
    return list(names) if names is not None else None
