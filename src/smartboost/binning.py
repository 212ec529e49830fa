"""Binning: per-feature bin edges, and raw matrices turned into uint8 bins.

:class:`BinMapper` learns the edges from a seeded row sample of the training data (at most
``bin_construct_sample_cnt`` rows), cut where LightGBM cuts them (zero a bin of its own,
``min_data_in_bin``; ``docs/concepts/boosting.md``, "Binning"), and belongs to the model: validation, test
and prediction data are binned with the training edges. Feature ``f`` has ``n_bins[f]`` value
bins (``<= max_bin``) and one missing-value bin, numbered ``n_bins[f]``; NaN is missing, and
-inf and +inf fall into the outer value bins. A feature with one distinct value and no missing
value in the training data is constant and never split on.

:class:`BinnedData` holds a binned matrix twice, row-major for histograms and column-major for
partitioning (docs/internals.md, "Bin layouts"): each kernel reads its rows in its own layout's
order.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _schema as schema
from ._common import X_BINNED_DTYPE
from ._data import issparse, to_matrix
from ._kernels import binning as kernels
from ._kernels import histogram as kernels_hist
from ._kernels.records import HistogramArrays
from .errors import DataError

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["BinMapper", "BinnedData", "HistogramLayout"]

_BIN_BLOCK_ROWS = 16384

MAX_BIN = int(np.iinfo(X_BINNED_DTYPE).max)
"""Most value bins a feature may have: with its missing-value bin, every bin fits the uint8 bins."""

MAX_FEATURES = 1 << 24
"""Features must be fewer: the binned tree walk packs a split's feature into 24 bits
(``_kernels.predict.pack_bin_decisions``)."""

SPARSE_DEFAULT_FRACTION = 0.8
"""A feature whose most frequent bin holds at least this fraction of the rows is stored sparse
for histograms (LightGBM's ``sparse_threshold`` is 0.8 too; see ``HistogramLayout``)."""


def _sorted_csc(sample: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, values, n_zeros)`` of a CSC sample: each column's stored values sorted (NaN
    last), and its implicit zeros."""
    indptr = sample.indptr.astype(np.int64)
    lengths = np.diff(indptr)
    column = np.repeat(np.arange(lengths.size), lengths)
    values = sample.data.astype(np.float64, copy=False)
    return indptr, values[np.lexsort((values, column))], sample.shape[0] - lengths


class BinMapper:
    """Per-feature bin edges.

    Parameters
    ----------
    max_bin : int
        Maximum number of value bins per feature, at most 255.
    sample_cnt : int
        Rows sampled to compute the edges.
    seed : int
        Seed of the row sample (its own random stream).
    min_data_in_bin : int
        Fewest sample rows a bin closes with (the last bin of a sign may hold fewer).

    Attributes
    ----------
    edges : list of ndarray of float64
        Bin edges of each feature (``n_bins[f] - 1`` values, increasing).
    n_bins : ndarray of int64
        Value bins per feature; ``n_bins[f]`` is also the feature's missing-value bin.
    """

    _SAMPLE_STREAM = 0x42494E  # "BIN": the binning subsample's own random stream

    def __init__(self, max_bin: int = 255, sample_cnt: int = 200_000, seed: int = 0, min_data_in_bin: int = 3) -> None:
        self.max_bin = max_bin
        self.sample_cnt = sample_cnt
        self.min_data_in_bin = min_data_in_bin
        self.seed = seed
        self.edges: list[np.ndarray] = []
        self.n_bins = np.zeros(0, np.int64)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> BinMapper:
        """An unfitted mapper with the binning parameters of resolved ``params``
        (``max_bin``, ``bin_construct_sample_cnt``, ``seed``, ``min_data_in_bin``)."""
        return cls(params["max_bin"], params["bin_construct_sample_cnt"], params["seed"], params["min_data_in_bin"])

    @property
    def n_features(self) -> int:
        """Number of features."""
        return len(self.edges)

    def fit(self, X: Any) -> BinMapper:
        """Learn the edges from the feature matrix ``X``."""
        X, _ = to_matrix(X)
        n_rows, n_features = X.shape
        rows = None
        if n_rows > self.sample_cnt:
            rng = np.random.default_rng([self.seed, self._SAMPLE_STREAM])
            rows = np.sort(rng.choice(n_rows, self.sample_cnt, replace=False))
        sample = X if rows is None else X[rows]
        if issparse(sample):
            indptr, values, n_zeros = _sorted_csc(sample.tocsc())
        else:
            values = np.array(sample.T, np.float64, order="C")  # a copy: sorted in place
            values.sort(axis=1)
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
        self.edges = [edges[first_edge[f]:first_edge[f] + n_edges[f]].copy() for f in range(n_features)]
        self.n_bins = n_edges + 1
        self.__dict__.pop("_padded_edges", None)
        self.__dict__.pop("threshold_table", None)
        return self

    @cached_property
    def _padded_edges(self) -> np.ndarray:
        padded = np.zeros((self.n_features, max(1, int(self.n_bins.max()) - 1)))
        for f, e in enumerate(self.edges):
            padded[f, :e.size] = e
        return padded

    def transform(self, X: Any) -> BinnedData:
        """Bin the feature matrix ``X`` with these edges."""
        X, _ = to_matrix(X)
        n_rows, n_features = X.shape
        if n_features != self.n_features:
            raise DataError(f"data has {n_features} features but the bins were made for {self.n_features}")
        n_edges = self.n_bins - 1
        if issparse(X):
            column_major = np.empty((n_features, n_rows), X_BINNED_DTYPE)
            missing = np.zeros(n_features, np.int64)
            kernels.bin_csc(X.indptr, X.indices, X.data, self._padded_edges, n_edges, column_major, missing)
            return BinnedData(self, None, missing, column_major=column_major)
        row_major = np.empty((n_rows, n_features), X_BINNED_DTYPE)
        missing_blocks = np.zeros(((n_rows + _BIN_BLOCK_ROWS - 1) // _BIN_BLOCK_ROWS, n_features), np.int64)
        kernels.bin_dense(X, self._padded_edges, n_edges, row_major, missing_blocks)
        return BinnedData(self, row_major, missing_blocks.sum(axis=0))

    def thresholds(self, feature: int) -> np.ndarray:
        """Float threshold of every bin split of ``feature``: bins ``<= b`` hold values ``<= t[b]``.

        The last value bin's threshold is +inf (the split "all values left, missing right").
        """
        return np.append(self.edges[feature], np.inf)

    def to_dict(self) -> dict:
        """JSON-ready representation (edges as lists of floats)."""
        return {"max_bin": self.max_bin, "sample_cnt": self.sample_cnt, "seed": self.seed,
                "min_data_in_bin": self.min_data_in_bin, "edges": [e.tolist() for e in self.edges]}

    @cached_property
    def threshold_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Every feature's :meth:`thresholds`, concatenated, and each feature's start in them:
        feature ``f``'s bin ``b`` splits at ``table[offsets[f] + b]`` (read-only, made once)."""
        thresholds = [self.thresholds(f) for f in range(self.n_features)]
        return np.concatenate(thresholds), np.cumsum([0] + [t.size for t in thresholds[:-1]])

    @classmethod
    def from_dict(cls, data: Any, path: str = "bin_mapper") -> BinMapper:
        """Inverse of :meth:`to_dict`, checking every field.

        ``max_bin`` is at most 255 and each feature has at most ``max_bin - 1`` strictly
        increasing finite edges, so every bin, the missing-value bin included, fits a uint8.

        Raises
        ------
        ModelFormatError
            A field missing, of the wrong type or out of range, naming its path (e.g.
            ``bin_mapper.edges[2][5]``).
        """
        schema.known_keys(schema.of_type(data, dict, path), ("max_bin", "sample_cnt", "seed", "min_data_in_bin",
                                                              "edges"), path)

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
        return mapper

    def same_edges(self, other: BinMapper) -> bool:
        """Whether two mappers bin every value identically."""
        return self is other or (len(self.edges) == len(other.edges) and all(
            np.array_equal(a, b) for a, b in zip(self.edges, other.edges)))


class BinnedData:
    """A matrix binned by a :class:`BinMapper`.

    Parameters
    ----------
    mapper : BinMapper
    row_major : ndarray of uint8, shape (n_rows, n_features), or None
    missing_count : ndarray of int64, shape (n_features,)
        NaN values per feature.
    column_major : ndarray of uint8, shape (n_features, n_rows), optional
        Given when binning produced it first (sparse input).
    """

    def __init__(self, mapper: BinMapper, row_major: np.ndarray | None, missing_count: np.ndarray,
                 column_major: np.ndarray | None = None) -> None:
        self.mapper = mapper
        self.missing_count = missing_count
        if row_major is None:
            row_major = np.empty(column_major.shape[::-1], X_BINNED_DTYPE)
            kernels.transpose_bins(column_major, row_major)
        self.row_major = row_major
        if column_major is not None:
            self.column_major = column_major

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return self.row_major.shape[0]

    @cached_property
    def column_major(self) -> np.ndarray:
        """Column-major copy (uint8, shape (n_features, n_rows)), made when first needed."""
        out = np.empty(self.row_major.shape[::-1], X_BINNED_DTYPE)
        kernels.transpose_bins(self.row_major, out)
        return out

    @cached_property
    def usable_features(self) -> np.ndarray:
        """Features a split may use (bool): more than one value bin, or missing values."""
        return (self.mapper.n_bins > 1) | (self.missing_count > 0)

    @cached_property
    def histogram_layout(self) -> HistogramLayout:
        """The training layout of these bins for histogram building, made when first needed."""
        return HistogramLayout(self)


def histogram_cells(n_bins: np.ndarray) -> tuple[np.ndarray, int]:
    """First histogram cell of each feature (uint32) and the number of cells: feature ``f`` owns
    ``n_bins[f] + 1`` cells, its value bins then its missing-value bin."""
    offsets = np.concatenate([[0], np.cumsum(n_bins + 1)[:-1]]).astype(np.uint32)
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
        counts = [np.bincount(column, minlength=int(nb) + 1) for column, nb in zip(data.column_major, n_bins)]
        default_bins = np.array([c.argmax() for c in counts], np.int64)
        default_share = np.array([c.max() for c in counts]) / max(data.n_rows, 1)
        sparse = default_share >= SPARSE_DEFAULT_FRACTION
        dense_features = np.flatnonzero(~sparse)
        sparse_features = np.flatnonzero(sparse)
        self.dense_features = dense_features
        self.dense_offsets = self.offsets[dense_features]
        if sparse_features.size == 0:
            self.dense_bins = data.row_major
            self.sparse_indptr = np.zeros(1, np.int64)
            self.sparse_cells = np.zeros(0, np.uint32)
        else:
            self.dense_bins = np.ascontiguousarray(data.row_major[:, dense_features])
            self.sparse_indptr = np.zeros(data.n_rows + 1, np.int64)
            defaults = default_bins[sparse_features].astype(np.uint8)
            kernels_hist.sparse_row_lengths(data.row_major, sparse_features, defaults, self.sparse_indptr)
            np.cumsum(self.sparse_indptr, out=self.sparse_indptr)
            self.sparse_cells = np.empty(int(self.sparse_indptr[-1]), np.uint32)
            kernels_hist.fill_sparse_rows(data.row_major, sparse_features, defaults, self.offsets[sparse_features],
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
