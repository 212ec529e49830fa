"""Binning: per-feature bin edges, and raw matrices turned into bins (uint8, or uint16 when a
feature has more than 255 bins).

:class:`BinMapper` learns the edges from a seeded row sample of the training data (at most
``bin_construct_sample_cnt`` rows), cut where LightGBM cuts them (zero a bin of its own,
``min_data_in_bin``; ``docs/concepts/boosting.md``, "Binning"), and belongs to the model: validation, test
and prediction data are binned with the training edges. Feature ``f`` has ``n_bins[f]`` value
bins (``<= max_bin``) and one missing-value bin, numbered ``n_bins[f]``; NaN is missing, and
-inf and +inf fall into the outer value bins. A feature with one distinct value and no missing
value in the training data is constant and never split on.

A categorical feature (:class:`CategoryBins`; docs/howto/categorical.md) has a bin per category
up to ``max_bin``; its missing-value bin also takes the categories the training data does not
have.

:class:`BinnedData` holds a binned matrix twice, row-major for histograms and column-major for
partitioning (docs/internals.md, "Bin layouts"): each kernel reads its rows in its own layout's
order. Bins are one byte while every feature's bins, the missing-value bin included, fit one
(always with ``max_bin <= 255``), else two (``max_bin`` up to 65535: each of up to 65534
distinct non-zero values of a feature a bin of its own, so that the split search is exact;
:attr:`BinMapper.bin_dtype`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import get_num_threads

from . import _schema as schema
from ._common import CELL_DTYPE, X_BINNED_DTYPE, X_BINNED_WIDE_DTYPE
from ._config import logger
from ._data import Features, issparse, to_features
from ._kernels import binning as kernels
from ._kernels import histogram as kernels_hist
from ._kernels.records import HistogramArrays
from .errors import DataError

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["BinMapper", "BinnedData", "CategoryBins", "HistogramLayout"]

_BIN_BLOCK_ROWS = 1024
"""Fewest rows of a block of :func:`_kernels.binning.bin_dense` (its unit of parallel work), so
that a few thousand rows already bin on every thread; blocks grow with the rows above
:data:`_BIN_BLOCKS_PER_THREAD` blocks a thread."""

_BIN_BLOCKS_PER_THREAD = 4

_PARALLEL_TRANSPOSE_VALUES = 1 << 20
"""From this many values, :meth:`BinMapper.fit` transposes a C-ordered sample by the compiled
:func:`_kernels.binning.transpose` (a9a's 4 million: 1.4-1.8 ms against numpy's 14 ms), and
sorts its features on every thread (:func:`_sort_rows`); smaller ones by numpy on the calling
thread, so that small data does not compile the kernel or start threads."""

MAX_BIN = int(np.iinfo(X_BINNED_WIDE_DTYPE).max)
"""Most value bins a feature may have: with its missing-value bin, every bin fits the uint16 bins."""

NARROW_MAX_BIN = int(np.iinfo(X_BINNED_DTYPE).max)
"""Most value bins of the features of one-byte bins (with the missing-value bin, 256 codes)."""

CATEGORY_MAX_BIN = NARROW_MAX_BIN
"""Most value bins of a categorical feature, whatever ``max_bin``: a categorical split's set of
left bins is 256 bits (``tree.py``)."""

MAX_FEATURES = 1 << 24
"""Features must be fewer: the binned tree walk packs a split's feature into 24 bits
(``_kernels.predict.pack_bin_decisions``)."""

SPARSE_DEFAULT_FRACTION = 0.5
"""A feature whose most frequent bin holds at least this fraction of the rows may be stored sparse
for histograms (:func:`sparse_feature_mask`): its other rows are listed, and that bin's cell is
completed from the node's totals. At one half, a9a's 123 one-hot columns are all sparse (9.9
listed cells a row instead of 18 dense bins and 4.6 listed cells) and train in 0.77-0.80x the
time they took at 0.8, LightGBM's ``sparse_threshold`` (LightGBM bundles such exclusive features
instead); 0.3 measured no faster there."""


MAX_CATEGORY = int(np.iinfo(np.int32).max)
"""Integer categories are codes in ``[0, MAX_CATEGORY]`` (LightGBM's int32 codes); negative ones
are missing values."""


@dataclass(eq=False)
class CategoryBins:
    """The bins of a categorical feature.

    Attributes
    ----------
    values : ndarray of int64, or of str (object)
        The feature's training categories, sorted and distinct: integer codes, or texts.
    bins : ndarray of int64
        The value bin of each category. Categories rarer than the feature's bins allow share
        one bin (see :meth:`BinMapper.fit`); every other category and a missing value fall into
        the feature's missing-value bin.
    """

    values: np.ndarray
    bins: np.ndarray

    @property
    def is_text(self) -> bool:
        """Whether the categories are texts (else integer codes)."""
        return self.values.dtype == object

    @property
    def n_bins(self) -> int:
        """The feature's value bins."""
        return int(self.bins.max()) + 1 if self.bins.size else 1

    def indexes(self, column: np.ndarray, vocabulary: np.ndarray | None, name: str) -> np.ndarray:
        """The index in :attr:`values` of each row's category, -1 for a missing value or a
        category this feature does not have.

        ``column`` holds indexes into ``vocabulary`` (a text column), or else codes (integer
        categories; for a feature of text categories, only missing values).

        Raises
        ------
        DataError
            Text for a feature of integer categories, or numbers for one of text categories,
            naming the column (a feature without categories takes either).
        """
        if not self.values.size:
            # no category seen in training (the column was all missing): every value is unseen.
            # Texts or codes, either is taken: a model file's empty list of categories has no
            # type, and a model must take the same columns trained and loaded
            return np.full(column.shape, -1, np.int64)
        if vocabulary is not None:
            if not self.is_text:
                raise DataError(f"column {name} holds text, but the model's categorical feature {name} has integer "
                                "categories")
            position = np.searchsorted(self.values, vocabulary)
            found = position < self.values.size
            found[found] = self.values[position[found]] == vocabulary[found]
            own = np.where(found, position, -1)
            rows = ~np.isnan(column)
            out = np.full(column.shape, -1, np.int64)
            out[rows] = own[column[rows].astype(np.int64)]
            return out
        if self.is_text:
            # numbers cannot be matched to texts by value, and reading them as positions in
            # :attr:`values` (the categories seen in training, not the frame's category codes)
            # would silently pick arbitrary categories
            if not np.isnan(column).all():
                raise DataError(f"column {name} holds numbers, but the model's categorical feature {name} has text "
                                "categories; pass its texts (a string, object or category column of a DataFrame)")
            return np.full(column.shape, -1, np.int64)
        codes, present = category_codes(column, name)
        position = np.minimum(np.searchsorted(self.values, codes), self.values.size - 1)
        present &= self.values[position] == codes
        return np.where(present, position, -1)

    def to_dict(self, feature: int) -> dict:
        """JSON-ready representation."""
        return {"feature": feature, "values": self.values.tolist(), "bins": self.bins.tolist()}


def category_codes(column: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer categories: the codes (int64) and whether each row has one (NaN and negative
    codes are missing values, as in LightGBM).

    Raises
    ------
    DataError
        A code that is not an integer, or above ``MAX_CATEGORY``, naming the column and row.
    """
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(column) & ((column != np.round(column)) | (column > MAX_CATEGORY))
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"categorical column {name} has {column[row]} at row {row}; categories are integer codes "
                        f"in [0, {MAX_CATEGORY}] (negative codes and NaN are missing values) or texts")
    present = column >= 0
    return np.where(present, column, 0).astype(np.int64), present


def _category_bins(counts: np.ndarray, max_bin: int, min_data_in_bin: int) -> np.ndarray:
    """The bin of each category (in value order) from its row count.

    Categories are ranked by count (ties: value order). Each of the most frequent holds a bin
    of its own, at most ``max_bin`` of them, or ``max_bin - 1`` when the others need a bin to
    share: categories with fewer than ``min_data_in_bin`` rows, and those past the bins. Bins
    follow the categories' value order, the shared one last.
    """
    rank = np.argsort(-counts, kind="stable")
    frequent = counts[rank] >= min_data_in_bin
    n_own = int(frequent.sum())
    if n_own > max_bin or (n_own < counts.size and n_own == max_bin):
        n_own = max_bin - 1
    own = np.zeros(counts.size, np.bool_)
    own[rank[:n_own]] = True
    bins = np.full(counts.size, n_own, np.int64)  # the shared bin
    bins[own] = np.arange(n_own)
    return bins


def _sorted_csc(sample: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, values, n_zeros)`` of a CSC sample: each column's stored values sorted (NaN
    last), and its implicit zeros."""
    indptr = sample.indptr.astype(np.int64)
    lengths = np.diff(indptr)
    column = np.repeat(np.arange(lengths.size), lengths)
    values = sample.data.astype(np.float64, copy=False)
    return indptr, values[np.lexsort((values, column))], sample.shape[0] - lengths


class BinMapper:
    """Per-feature bin edges, and the bins of categorical features.

    Parameters
    ----------
    max_bin : int
        Maximum number of value bins per feature, 2 to 65535 (above 255, the bins of a feature
        that needs more than 255 take two bytes).
    sample_cnt : int
        Rows sampled to compute the edges.
    seed : int
        Seed of the row sample (its own random stream).
    min_data_in_bin : int
        Fewest sample rows a bin closes with (the last bin of a sign may hold fewer).

    Attributes
    ----------
    edges : list of ndarray of float64
        Bin edges of each feature (``n_bins[f] - 1`` values, increasing; none for a categorical
        feature).
    n_bins : ndarray of int64
        Value bins per feature; ``n_bins[f]`` is also the feature's missing-value bin.
    categories : dict of int to CategoryBins
        The categorical features and their bins.
    """

    _SAMPLE_STREAM = 0x42494E  # "BIN": the binning subsample's own random stream

    def __init__(self, max_bin: int = 255, sample_cnt: int = 200_000, seed: int = 0, min_data_in_bin: int = 3) -> None:
        self.max_bin = max_bin
        self.sample_cnt = sample_cnt
        self.min_data_in_bin = min_data_in_bin
        self.seed = seed
        self.edges: list[np.ndarray] = []
        self.n_bins = np.zeros(0, np.int64)
        self.categories: dict[int, CategoryBins] = {}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> BinMapper:
        """An unfitted mapper with the binning parameters of resolved ``params``
        (``max_bin``, ``bin_construct_sample_cnt``, ``seed``, ``min_data_in_bin``)."""
        return cls(params["max_bin"], params["bin_construct_sample_cnt"], params["seed"], params["min_data_in_bin"])

    @property
    def n_features(self) -> int:
        """Number of features."""
        return len(self.edges)

    @cached_property
    def categorical(self) -> np.ndarray:
        """Which features are categorical (bool, shape (n_features,))."""
        mask = np.zeros(self.n_features, np.bool_)
        mask[list(self.categories)] = True
        return mask

    def fit(self, X: Any, categorical: np.ndarray | None = None) -> BinMapper:
        """Learn the edges from the feature matrix ``X``, and the bins of its categorical
        features.

        Parameters
        ----------
        X : array-like, DataFrame, sparse matrix or Features
        categorical : ndarray of bool, shape (n_features,), optional
            The categorical features (default: the columns categorical by their type).

        Notes
        -----
        A categorical feature's categories and their counts are those of every row (not of the
        sample the edges are learned from). Each category holding at least ``min_data_in_bin``
        rows has a bin of its own, the most frequent first, up to ``max_bin`` bins; the rarer
        categories share one bin (:func:`_category_bins`).

        Raises
        ------
        DataError
            A text column that is not categorical, or integer categories that are not integers.
        """
        features = to_features(X)
        X = features.matrix
        categorical = features.from_dtype if categorical is None else np.asarray(categorical, np.bool_)
        check_text_categorical(features, categorical)
        n_rows, n_features = X.shape
        rows = None
        if n_rows > self.sample_cnt:
            rng = np.random.default_rng([self.seed, self._SAMPLE_STREAM])
            rows = np.sort(rng.choice(n_rows, self.sample_cnt, replace=False))
        sample = X if rows is None else X[rows]
        if issparse(sample):
            indptr, values, n_zeros = _sorted_csc(sample.tocsc())
        else:
            values = np.empty((n_features, sample.shape[0]))  # a copy: sorted in place
            if sample.flags.c_contiguous and sample.size >= _PARALLEL_TRANSPOSE_VALUES:
                kernels.transpose(sample, values)
            else:
                values[...] = sample.T
            _sort_rows(values)
            values = values.ravel()
            indptr = np.arange(n_features + 1, dtype=np.int64) * sample.shape[0]
            n_zeros = np.zeros(n_features, np.int64)
        # each feature's room for edges: at most one per distinct value (zero included), so the
        # table follows the data, not n_features x max_bin
        first_edge = np.zeros(n_features + 1, np.int64)
        np.cumsum(np.minimum(self.max_bin - 1, np.diff(indptr) + (n_zeros > 0)), out=first_edge[1:])
        edges = np.empty(first_edge[-1])
        n_edges = np.zeros(n_features, np.int64)
        kernels.find_edges(indptr, values, n_zeros, self.max_bin, self.min_data_in_bin, first_edge, edges, n_edges)
        self.categories = {}
        for f in np.flatnonzero(categorical):
            categories, counts = category_counts(features, int(f))
            self.categories[int(f)] = CategoryBins(categories, _category_bins(counts, self.category_max_bin,
                                                                             self.min_data_in_bin))
            n_edges[f] = self.categories[int(f)].n_bins - 1
        self.edges = [edges[first_edge[f]:first_edge[f] + n_edges[f]] for f in range(n_features)]  # views
        for f in self.categories:
            self.edges[f] = np.zeros(0)
        self.n_bins = n_edges + 1
        for name in ("_edge_table", "threshold_table", "categorical"):
            self.__dict__.pop(name, None)
        return self

    def set_categories(self, categories: dict[int, tuple[np.ndarray, np.ndarray]]) -> None:
        """The bins of categorical features from their categories and row counts over every
        machine's rows (``smartboost.dask``), ``{feature: (values, counts)}``, each as
        :meth:`fit` makes them."""
        for f, (values, counts) in categories.items():
            self.categories[f] = CategoryBins(values, _category_bins(counts, self.category_max_bin,
                                                                       self.min_data_in_bin))
            self.edges[f] = np.zeros(0)
            self.n_bins[f] = self.categories[f].n_bins
        for name in ("_edge_table", "threshold_table", "categorical"):
            self.__dict__.pop(name, None)

    @property
    def category_max_bin(self) -> int:
        """Most value bins of a categorical feature: ``max_bin``, at most ``CATEGORY_MAX_BIN``."""
        return min(self.max_bin, CATEGORY_MAX_BIN)

    @property
    def bin_dtype(self) -> type:
        """The dtype of the bins: uint8 when every feature's bins and its missing-value bin
        (numbered ``n_bins[f]``) fit one byte, else uint16."""
        return X_BINNED_DTYPE if self.n_bins.max(initial=0) <= NARROW_MAX_BIN else X_BINNED_WIDE_DTYPE

    @cached_property
    def _edge_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Every feature's edges, concatenated, and each feature's first one in them: the
        binning kernels' edges, as large as the edges (not features x ``max_bin``)."""
        sizes = np.array([e.size for e in self.edges], np.int64)
        first = np.zeros(sizes.size, np.int64)
        np.cumsum(sizes[:-1], out=first[1:])
        return np.concatenate([np.zeros(0), *self.edges]), first

    def transform(self, X: Any) -> BinnedData:
        """Bin the feature matrix ``X`` with these edges (categories by value: see
        :meth:`category_bins`)."""
        features = to_features(X)
        X = features.matrix
        n_rows, n_features = X.shape
        if n_features != self.n_features:
            raise DataError(f"data has {n_features} features but the bins were made for {self.n_features}")
        self.check_text_columns(features)
        n_edges = np.where(self.categorical, 0, self.n_bins - 1)
        if issparse(X):
            column_major = np.empty((n_features, n_rows), self.bin_dtype)
            missing = np.zeros(n_features, np.int64)
            kernels.bin_csc(X.indptr, X.indices, X.data, *self._edge_table, n_edges, column_major, missing)
            for f in self.categories:
                column_major[f] = self.category_bins(features, f)
                missing[f] = np.count_nonzero(column_major[f] == self.n_bins[f])
            return BinnedData(self, None, missing, column_major=column_major)
        row_major = np.empty((n_rows, n_features), self.bin_dtype)
        n_blocks = min(-(-n_rows // _BIN_BLOCK_ROWS), _BIN_BLOCKS_PER_THREAD * get_num_threads())
        missing_blocks = np.zeros((max(n_blocks, 1), n_features), np.int64)
        kernels.bin_dense(X, *self._edge_table, n_edges, row_major, missing_blocks)
        missing = missing_blocks.sum(axis=0)
        for f in self.categories:
            row_major[:, f] = self.category_bins(features, f)
            missing[f] = np.count_nonzero(row_major[:, f] == self.n_bins[f])
        return BinnedData(self, row_major, missing)

    def categories_in(self, feature: int, bins: np.ndarray) -> np.ndarray:
        """The categories of categorical ``feature`` that fall into ``bins`` (a split's left
        bins: what it sends left)."""
        table = self.categories[feature]
        return table.values[np.isin(table.bins, bins)]

    def check_text_columns(self, features: Features) -> None:
        """Refuse text in a column of a numeric feature, naming the column."""
        text = sorted(j for j in features.vocabularies if j not in self.categories)
        if text:
            raise DataError(f"column {features.column_name(text[0])} holds text, but the model's feature "
                            f"{features.column_name(text[0])} is numeric")

    def category_bins(self, features: Features, f: int) -> np.ndarray:
        """The bins (:attr:`bin_dtype`) of categorical feature ``f`` in column ``f`` of
        ``features``: each category's bin, the missing-value bin for a missing value or a
        category the feature does not have (matched by value: a text column through its
        vocabulary)."""
        column = _dense_column(features.matrix, f)
        table = self.categories[f]
        index = table.indexes(column, features.vocabularies.get(f), features.column_name(f))
        bins = np.where(index >= 0, table.bins[np.maximum(index, 0)] if table.bins.size else 0, self.n_bins[f])
        return bins.astype(self.bin_dtype)

    def thresholds(self, feature: int) -> np.ndarray:
        """Float threshold of every bin split of ``feature``: bins ``<= b`` hold values ``<= t[b]``.

        The last value bin's threshold is +inf (the split "all values left, missing right"). A
        categorical feature's are all 0 (its splits are sets of bins).
        """
        if feature in self.categories:
            return np.zeros(self.n_bins[feature])
        return np.append(self.edges[feature], np.inf)

    def to_dict(self) -> dict:
        """JSON-ready representation (edges as lists of floats; ``categorical``, the bins of the
        categorical features, only when there are some, so that other files are as before)."""
        out = {"max_bin": self.max_bin, "sample_cnt": self.sample_cnt, "seed": self.seed,
               "min_data_in_bin": self.min_data_in_bin, "edges": [e.tolist() for e in self.edges]}
        if self.categories:
            out["categorical"] = [self.categories[f].to_dict(f) for f in sorted(self.categories)]
        return out

    @cached_property
    def threshold_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Every feature's :meth:`thresholds`, concatenated, and each feature's start in them:
        feature ``f``'s bin ``b`` splits at ``table[offsets[f] + b]`` (read-only, made once)."""
        edges, first_edge = self._edge_table
        n_edges = np.diff(np.append(first_edge, edges.size))
        offsets = np.zeros(self.n_features, np.int64)
        np.cumsum(self.n_bins[:-1], out=offsets[1:])
        table = np.zeros(int(self.n_bins.sum()))  # categorical features' stay 0
        owner = np.repeat(np.arange(self.n_features), n_edges)
        table[offsets[owner] + np.arange(edges.size) - first_edge[owner]] = edges
        numeric = ~self.categorical
        table[offsets[numeric] + n_edges[numeric]] = np.inf
        return table, offsets

    @classmethod
    def from_dict(cls, data: Any, path: str = "bin_mapper") -> BinMapper:
        """Inverse of :meth:`to_dict`, checking every field.

        ``max_bin`` is at most 65535 and each feature has at most ``max_bin - 1`` strictly
        increasing finite edges, so every bin, the missing-value bin included, fits a uint16
        (a uint8 when ``max_bin <= 255``).

        Raises
        ------
        ModelFormatError
            A field missing, of the wrong type or out of range, naming its path (e.g.
            ``bin_mapper.edges[2][5]``).
        """
        schema.known_keys(schema.of_type(data, dict, path), ("max_bin", "sample_cnt", "seed", "min_data_in_bin",
                                                              "edges", "categorical"), path)

        def integer(key: str, low: int, high: int = schema.INT64_MAX, default: Any = schema.MISSING) -> int:
            return schema.integer(schema.member(data, key, path, default=default), schema.child(path, key), low, high)

        max_bin = integer("max_bin", 2, MAX_BIN)
        # min_data_in_bin is absent from files written before it existed; they were binned with 1.
        mapper = cls(max_bin, integer("sample_cnt", 1), integer("seed", 0), integer("min_data_in_bin", 1, default=1))
        edges_path = schema.child(path, "edges")
        edges = schema.member(data, "edges", path, list)
        if not 0 < len(edges) < MAX_FEATURES:
            schema.fail(edges_path, f"has {len(edges)} features, not 1 to {MAX_FEATURES - 1}")
        for f, values in enumerate(edges):
            feature_path = schema.child(edges_path, f)
            e = schema.numbers(values, feature_path, np.float64)
            if e.size > max_bin - 1:
                schema.fail(feature_path, f"has {e.size} edges; max_bin {max_bin} allows at most {max_bin - 1}")
            bad = np.flatnonzero(np.diff(e) <= 0)
            if bad.size:
                i = int(bad[0]) + 1
                schema.fail(schema.child(feature_path, i), f"is {e[i]}, not above the edge before it ({e[i - 1]})")
            mapper.edges.append(e)
        mapper.n_bins = np.array([e.size + 1 for e in mapper.edges], np.int64)
        for item_path, f, table in _categories_from_dict(data, path, min(max_bin, CATEGORY_MAX_BIN), len(edges)):
            if mapper.edges[f].size:
                schema.fail(schema.child(edges_path, f), f"must be empty: feature {f} is categorical ({item_path})")
            mapper.categories[f] = table
            mapper.n_bins[f] = table.n_bins
        return mapper

    def same_edges(self, other: BinMapper) -> bool:
        """Whether two mappers bin every value identically."""
        return self is other or (len(self.edges) == len(other.edges) and all(
            np.array_equal(a, b) for a, b in zip(self.edges, other.edges)) and self.categories.keys() ==
            other.categories.keys() and all(np.array_equal(t.values, other.categories[f].values) and
                                            np.array_equal(t.bins, other.categories[f].bins)
                                            for f, t in self.categories.items()))


def _categories_from_dict(data: dict, path: str, max_bin: int, n_features: int):
    """The ``categorical`` field of a bin mapper's dict: ``(path, feature, CategoryBins)`` of
    each entry, every field checked (features increasing; categories sorted, distinct, integer
    codes or texts; bins in ``[0, max_bin)``, every one of ``0 .. max`` used)."""
    items = schema.member(data, "categorical", path, list, default=[])
    previous = -1
    for i, item in enumerate(items):
        item_path = schema.child(schema.child(path, "categorical"), i)
        schema.known_keys(schema.of_type(item, dict, item_path), ("feature", "values", "bins"), item_path)
        f = schema.integer(schema.member(item, "feature", item_path), schema.child(item_path, "feature"), previous + 1,
                           n_features - 1)
        previous = f
        values_path = schema.child(item_path, "values")
        raw = schema.member(item, "values", item_path, list)
        if raw and type(raw[0]) is str:
            values = np.array(schema.strings(raw, values_path), dtype=object)
        else:
            values = schema.numbers(raw, values_path, np.int64, 0, MAX_CATEGORY)
        if values.size > 1:
            order = values[1:] > values[:-1]
            if not order.all():
                k = int(np.argmin(order)) + 1
                schema.fail(schema.child(values_path, k), f"is {schema.describe(values[k])}, not after the category "
                                                          f"before it ({schema.describe(values[k - 1])})")
        bins_path = schema.child(item_path, "bins")
        bins = schema.numbers(schema.member(item, "bins", item_path), bins_path, np.int64, 0, max_bin - 1)
        if bins.size != values.size:
            schema.fail(bins_path, f"has {bins.size} entries, not {values.size} (one per category)")
        if bins.size and np.unique(bins).size != bins.max() + 1:
            schema.fail(bins_path, "must use every bin from 0 to its largest")
        yield item_path, f, CategoryBins(values, bins)


def check_text_categorical(features: Features, categorical: np.ndarray) -> None:
    """Raise unless every text column is categorical."""
    text = sorted(j for j in features.vocabularies if not categorical[j])
    if text:
        raise DataError(f"column {features.column_name(text[0])} holds text but is not a categorical feature; "
                        "declare it in categorical_feature (or encode it as numbers)")


def check_categorical_columns(features: Features, categorical: np.ndarray) -> None:
    """The checks of :meth:`BinMapper.fit` on the columns, whatever the binning parameters: every
    text column is categorical and the integer categories are integer codes (a DataError naming
    the column and row)."""
    check_text_categorical(features, categorical)
    for f in np.flatnonzero(categorical):
        if int(f) not in features.vocabularies:
            category_codes(_dense_column(features.matrix, int(f)), features.column_name(int(f)))


def _dense_column(matrix: Any, j: int) -> np.ndarray:
    """Column ``j`` of a converted matrix as float64 (a sparse one's implicit entries: 0)."""
    if issparse(matrix):
        return np.asarray(matrix[:, j].toarray()).ravel().astype(np.float64)
    return np.asarray(matrix[:, j], np.float64)


def category_counts(features: Features, f: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct categories of column ``f`` (sorted: integer codes, or texts) and their row
    counts over every row (negative codes are missing values; a warning says so)."""
    column = _dense_column(features.matrix, f)
    name = features.column_name(f)
    vocabulary = features.vocabularies.get(f)
    if vocabulary is not None:
        rows = ~np.isnan(column)
        counts = np.bincount(column[rows].astype(np.int64), minlength=vocabulary.size)
        used = counts > 0
        return vocabulary[used], counts[used]
    codes, present = category_codes(column, name)
    negative = int(np.count_nonzero(column < 0))
    if negative:
        logger.warning("categorical column %s has %d negative codes: read as missing values (as LightGBM does)",
                       name, negative)
    return np.unique(codes[present], return_counts=True)


def splittable(n_bins: np.ndarray, cell_counts: np.ndarray, n_rows: int, min_data_in_leaf: int) -> np.ndarray:
    """Features (bool) that some split could give ``min_data_in_leaf`` rows on each side.

    A split puts a feature's most populated bin on one side, so the other side holds at most
    the rows outside that bin; when they are fewer than ``min_data_in_leaf``, no split of the
    feature is valid in any node, whose rows are a subset of the training rows.

    Parameters
    ----------
    n_bins : ndarray of int64, shape (n_features,)
        The features' value bins.
    cell_counts : ndarray of int64
        Training rows in every histogram cell (laid out as :func:`histogram_cells`; summed
        over every machine's rows in distributed training).
    n_rows : int
        Training rows.
    min_data_in_leaf : int
    """
    return n_rows - most_populated_bins(cell_counts, n_bins)[1] >= min_data_in_leaf


_MOST_FREQUENT_SHARE = 0.7
"""LightGBM's ``kSparseThreshold``: a feature's most frequent bin is the bin of value 0 unless
another bin holds at least this share of the rows (:func:`missing_right_from_top`)."""


def missing_right_from_top(mapper: BinMapper, cell_counts: np.ndarray, n_rows: int) -> np.ndarray:
    """Features (bool) whose split scan sending missing values right counts its rows from the top
    (``_kernels.split``): LightGBM's count where the feature's most frequent bin is its first.

    LightGBM leaves a feature's most frequent bin out of its histograms; where that is the first
    bin, its scan sending missing values right starts from the node's rows less every other
    cell's, the missing one's included, so that the right side's rows are counted and the left
    side holds the others, as in its scans from the top. It takes the bin of value 0 as the most
    frequent unless another bin holds at least ``_MOST_FREQUENT_SHARE`` of the rows, and counts
    them in its binning sample (every row up to ``bin_construct_sample_cnt``); here in every
    training row.

    Parameters
    ----------
    mapper : BinMapper
    cell_counts : ndarray of int64
        Training rows in every histogram cell (:func:`histogram_cells`; summed over every
        machine's rows in distributed training).
    n_rows : int
        Training rows.
    """
    top, rows = most_populated_bins(cell_counts, mapper.n_bins)
    zero = np.array([np.searchsorted(edges, 0.0, side="left") for edges in mapper.edges], np.int64)
    most = np.where(rows >= _MOST_FREQUENT_SHARE * n_rows, top, zero)
    return (most == 0) & ~mapper.categorical


def search_features(n_bins: np.ndarray, missing_count: np.ndarray, cell_counts: np.ndarray | None = None,
                    n_rows: int = 0, min_data_in_leaf: int | None = None) -> np.ndarray:
    """Features the split search reads (bool): those with more than one value bin or with
    missing values, and, given ``min_data_in_leaf`` (``feature_pre_filter``), of those the
    :func:`splittable` ones. One rule for one machine's :class:`BinnedData` and for distributed
    training, which gives it the counts summed over every machine.

    Parameters
    ----------
    n_bins : ndarray of int64, shape (n_features,)
        The features' value bins.
    missing_count : ndarray of int64, shape (n_features,)
        Missing values per feature.
    cell_counts : ndarray of int64, optional
        Rows in every histogram cell (read with ``min_data_in_leaf`` only).
    n_rows : int
        Training rows (read with ``min_data_in_leaf`` only).
    min_data_in_leaf : int or None
        None: no pre-filter.
    """
    usable = (n_bins > 1) | (missing_count > 0)
    if min_data_in_leaf is None:
        return usable
    return usable & splittable(n_bins, cell_counts, n_rows, min_data_in_leaf)


class BinnedData:
    """A matrix binned by a :class:`BinMapper`.

    Parameters
    ----------
    mapper : BinMapper
    row_major : ndarray of the mapper's ``bin_dtype``, shape (n_rows, n_features), or None
    missing_count : ndarray of int64, shape (n_features,)
        NaN values per feature.
    column_major : ndarray of the mapper's ``bin_dtype``, shape (n_features, n_rows), optional
        Given when binning produced it first (sparse input).
    """

    def __init__(self, mapper: BinMapper, row_major: np.ndarray | None, missing_count: np.ndarray,
                 column_major: np.ndarray | None = None) -> None:
        self.mapper = mapper
        self.missing_count = missing_count
        # the layout binning produced; the other one is made when first needed (a sparse
        # training set's layouts read the column-major bins only)
        if row_major is not None:
            self.row_major = row_major
        if column_major is not None:
            self.column_major = column_major

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.column_major.shape[1] if "column_major" in self.__dict__ else self.row_major.shape[0]

    @cached_property
    def row_major(self) -> np.ndarray:
        """Row-major bins (shape (n_rows, n_features)), made when first needed."""
        out = np.empty(self.column_major.shape[::-1], self.column_major.dtype)
        kernels.transpose(self.column_major, out)
        return out

    @cached_property
    def column_major(self) -> np.ndarray:
        """Column-major copy (shape (n_features, n_rows)), made when first needed."""
        out = np.empty(self.row_major.shape[::-1], self.row_major.dtype)
        kernels.transpose(self.row_major, out)
        return out

    @cached_property
    def usable_features(self) -> np.ndarray:
        """Features a split may use (bool): more than one value bin, or missing values."""
        return search_features(self.mapper.n_bins, self.missing_count)

    def splittable_features(self, min_data_in_leaf: int) -> np.ndarray:
        """:attr:`usable_features` with at least ``min_data_in_leaf`` rows outside their most
        populated bin (``feature_pre_filter``; see :func:`search_features`)."""
        return search_features(self.mapper.n_bins, self.missing_count, self.cell_counts, self.n_rows, min_data_in_leaf)

    @cached_property
    def cell_counts(self) -> np.ndarray:
        """Rows in every histogram cell (int64, laid out as :func:`histogram_cells`)."""
        offsets, n_cells = histogram_cells(self.mapper.n_bins)
        counts = np.zeros(n_cells, np.int64)
        kernels_hist.bin_counts(self.column_major, offsets, counts)
        return counts

    @cached_property
    def histogram_layout(self) -> HistogramLayout:
        """The training layout of these bins for histogram building, made when first needed."""
        return HistogramLayout(self)


def _sort_rows(values: np.ndarray) -> None:
    """Sort each row of ``values`` in place; from ``_PARALLEL_TRANSPOSE_VALUES`` values, the rows
    shared among the run's threads (numpy's sort releases the GIL, and its vectorised sort is
    faster than a compiled one)."""
    n_threads = min(get_num_threads(), values.shape[0]) if values.size >= _PARALLEL_TRANSPOSE_VALUES else 1
    if n_threads <= 1:
        values.sort(axis=1)
        return
    bounds = np.linspace(0, values.shape[0], n_threads + 1).astype(np.int64)
    with ThreadPoolExecutor(n_threads) as pool:
        for done in [pool.submit(values[a:b].sort, axis=1) for a, b in zip(bounds[:-1], bounds[1:])]:
            done.result()


def sparse_feature_mask(default_fraction: np.ndarray, bin_bytes: int) -> np.ndarray:
    """Which features histograms read sparse (a bool mask), from the fraction of the rows in each
    feature's most populated bin.

    Candidates hold at least ``SPARSE_DEFAULT_FRACTION`` of the rows in that bin; the most
    concentrated are taken first, as many as keep the listed cells (4 bytes each) within the bytes
    of the dense bins they replace (``bin_bytes`` a row each). Features at a fraction of 0.75 or
    more save bytes; those between one half and 0.75 read faster sparse but take more, so they go
    sparse only on the bytes the others saved: a9a's one-hot columns all go sparse, while 28
    features of 60% zeros stay dense (sparse, 800,000 such rows trained 3-12% faster in two runs
    but held 37% more memory at their peak).
    """
    sparse = np.zeros(default_fraction.shape[0], np.bool_)
    candidates = np.flatnonzero(default_fraction >= SPARSE_DEFAULT_FRACTION)
    order = candidates[np.argsort(-default_fraction[candidates], kind="stable")]
    # bytes a row beyond the dense bins', of the first k candidates: falls, then rises
    excess = np.cumsum(np.dtype(CELL_DTYPE).itemsize * (1.0 - default_fraction[order]) - bin_bytes)
    within = np.flatnonzero(excess <= 0.0)
    if within.size:
        sparse[order[:within[-1] + 1]] = True
    return sparse


def most_populated_bins(counts: np.ndarray, n_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's most populated bin (the lowest of tied ones) and its rows, from the rows
    in every histogram cell (``counts``, laid out as :func:`histogram_cells`)."""
    sizes = n_bins + 1
    first = np.zeros(n_bins.size, np.int64)
    np.cumsum(sizes[:-1], out=first[1:])
    if counts.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = np.maximum.reduceat(counts, first)
    at_most = np.where(counts == np.repeat(rows, sizes), np.arange(counts.size), counts.size)
    return np.minimum.reduceat(at_most, first) - first, rows


def histogram_cells(n_bins: np.ndarray) -> tuple[np.ndarray, int]:
    """First histogram cell of each feature (``CELL_DTYPE``) and the number of cells: feature
    ``f`` owns ``n_bins[f] + 1`` cells, its value bins then its missing-value bin."""
    offsets = np.concatenate([[0], np.cumsum(n_bins + 1)[:-1]]).astype(CELL_DTYPE)
    return offsets, int((n_bins + 1).sum())


class HistogramLayout:
    """How histograms read a binned training set.

    Histogram cells: feature ``f`` owns cells ``offsets[f] .. offsets[f] + n_bins[f]`` (its
    value bins, then its missing-value bin), ``n_cells`` in all.

    Features whose most frequent ("default") bin holds at least ``SPARSE_DEFAULT_FRACTION`` of
    the rows are sparse: each row lists the cells of its non-default sparse bins (CSR arrays
    ``sparse_indptr``/``sparse_cells``), and a histogram's default cells are completed from the
    node's totals. The other features are dense: a row-major copy of their bins
    (``dense_bins``; the full row-major bins themselves when no feature is sparse).

    Parameters
    ----------
    data : BinnedData
        Training data.
    """

    def __init__(self, data: BinnedData) -> None:
        n_bins = data.mapper.n_bins
        self.offsets, self.n_cells = histogram_cells(n_bins)
        default_bins, default_rows = most_populated_bins(data.cell_counts, n_bins)
        sparse = sparse_feature_mask(default_rows / max(data.n_rows, 1), data.column_major.dtype.itemsize)
        dense_features = np.flatnonzero(~sparse)
        sparse_features = np.flatnonzero(sparse)
        self.dense_features = dense_features
        self.dense_offsets = self.offsets[dense_features]
        if sparse_features.size == 0:
            self.dense_bins = data.row_major
            self.sparse_indptr = np.zeros(1, np.int64)
            self.sparse_cells = np.zeros(0, CELL_DTYPE)
        else:
            # from the column-major bins: a sparse training set has no row-major copy
            self.dense_bins = np.empty((data.n_rows, dense_features.size), data.column_major.dtype)
            kernels.transpose(data.column_major[dense_features], self.dense_bins)
            self.sparse_indptr = np.zeros(data.n_rows + 1, np.int64)
            defaults = default_bins[sparse_features].astype(data.column_major.dtype)
            kernels_hist.sparse_row_lengths(data.column_major, sparse_features, defaults, self.sparse_indptr)
            np.cumsum(self.sparse_indptr, out=self.sparse_indptr)
            self.sparse_cells = np.empty(int(self.sparse_indptr[-1]), CELL_DTYPE)
            kernels_hist.fill_sparse_rows(data.column_major, sparse_features, defaults, self.offsets[sparse_features],
                                          self.sparse_indptr, self.sparse_cells)
        self.sparse_first = self.offsets[sparse_features].astype(np.int64)
        self.sparse_last = self.sparse_first + n_bins[sparse_features] + 1
        self.default_cells = self.sparse_first + default_bins[sparse_features]

    def dense_columns(self, features: np.ndarray) -> np.ndarray | None:
        """The dense columns (uint32) of the features selected by the bool mask ``features``;
        None when that is all of them (the histogram kernels' fast path)."""
        columns = np.flatnonzero(features[self.dense_features]).astype(np.uint32)
        return None if columns.size == self.dense_features.size else columns

    @property
    def arrays(self) -> HistogramArrays:
        """The layout as the histogram kernels take it, every cell written."""
        return HistogramArrays(self.dense_bins, self.dense_offsets, self.sparse_indptr, self.sparse_cells,
                               self.sparse_first, self.sparse_last, self.default_cells, None)
