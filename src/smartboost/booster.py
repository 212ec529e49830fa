"""The trained model: trees, bin edges, objective; prediction, importance, saving and loading."""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator
from functools import cached_property
from typing import Any

import numpy as np

from . import io
from ._config import threads
from ._data import check_column_names, dense_rows, issparse, to_features
from ._kernels.predict import predict_trees
from ._params import _bool, model_params
from .binning import BinMapper, BinnedData
from .dataset import Dataset
from .errors import DataError, ModelFormatError, ParameterError
from .explain import explain_contributions, explain_interactions, explain_leaves, tree_table
from .objectives import Objective
from .tree import PackedTrees, Tree

__all__ = ["Booster"]

_PREDICT_CHUNK_BYTES = 1 << 24
"""Sparse or non-C-ordered input, or input with categorical features, is converted and predicted
in blocks of rows of at most this many bytes (at least one row), so that memory does not grow with
the rows, nor with a wide sparse matrix's columns times the rows."""


def _whole_number(name: str, value: Any, meaning: str) -> int:
    """``value`` as an int: a whole number, or a float of one.

    Raises
    ------
    ParameterError
        It is not one (``meaning`` says what its values mean).
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ParameterError(f"{name} must be an integer ({meaning}), got {value!r}")
    return int(value)


def _tree_block_rows(n_rows: int, n_features: int, itemsize: int, n_threads: int) -> int:
    """Rows the prediction kernel walks through one tree at a time: about 256 KB of features,
    and no more than an equal share of the rows for each thread.

    Blocks keep one tree's nodes in L1 cache and the block's rows in L2 while the tree is
    walked for every row of the block, instead of fetching every tree again for every row. A
    small batch is cut into a block per thread, so that every thread walks the trees.
    """
    cache_rows = max(64, min(4096, (1 << 18) // max(1, n_features * itemsize)))
    return max(1, min(cache_rows, -(-n_rows // n_threads)))


class Booster:
    """A gradient-boosted tree model.

    Created by :func:`smartboost.train`, or loaded from a model file or string.

    Parameters
    ----------
    model_file : str or path-like, optional
        Load the model saved at this path.
    model_str : str, optional
        Load the model from this string (as returned by :meth:`model_to_string`).

    Attributes
    ----------
    best_iteration : int
        Number of iterations :meth:`predict` uses by default: the best iteration when early
        stopping ran, otherwise all of them.
    best_score : dict
        ``{data_name: {metric: value}}`` at ``best_iteration``.
    evals_result : dict
        ``{data_name: {metric: [value per iteration]}}`` recorded during training.
    iteration_stats : dict
        Per-iteration training statistics: ``"seconds"`` (sampling, growing the tree and
        updating the training scores; evaluation excluded), ``"sample_size"`` (rows the tree was
        grown on), ``"sample_rate"`` (``sample_size / n_rows``; its mean is SMART's ASRI),
        ``"sampler"`` (the sampler that drew the rows: ``sampling='auto'`` chooses one per
        iteration, ``'none'`` for every row) and ``"target_rate"`` (the rate it drew at).
    data_format : dict or None
        How the training data file was read, so that later files are read the same way:
        ``{"svmlight_zero_based": bool}`` (set by the command line for svmlight files; saved
        with the model). None when unknown, as for models trained from arrays.
    """

    def __init__(self, model_file: str | os.PathLike | None = None, model_str: str | None = None) -> None:
        if (model_file is None) == (model_str is None):
            raise ParameterError("give exactly one of model_file and model_str (use smartboost.train to "
                                 "create a model)")
        if model_file is not None:
            model_str = io.read_model_text(model_file)
        try:
            content = io.model_from_string(model_str)
        except ModelFormatError as exc:  # name the file: a run may read several (a model, init_model, a CLI's)
            if model_file is None:
                raise
            raise ModelFormatError(f"{os.fspath(model_file)}: {exc}") from None
        self._init_from(content)

    @classmethod
    def _new(cls, *, objective: Objective, bin_mapper: BinMapper, base_score: float,
             feature_names: list[str], params: dict[str, Any], trees: list[Tree] | None = None) -> Booster:
        """A model with no trees yet (used by training)."""
        booster = cls.__new__(cls)
        booster._init_from(io.ModelContent(objective=objective, bin_mapper=bin_mapper, base_score=base_score,
                                           feature_names=feature_names, params=params,
                                           trees=list(trees or []), best_iteration=0, best_score={}))
        return booster

    def _init_from(self, content: io.ModelContent) -> None:
        self.objective = content.objective
        self.bin_mapper = content.bin_mapper
        self.base_score = content.base_score
        self.feature_names = content.feature_names
        self.params = content.params
        self.trees = content.trees
        self.best_iteration = content.best_iteration
        self.best_score = content.best_score
        self.data_format = content.data_format
        self.evals_result: dict[str, dict[str, list[float]]] = {}
        self.iteration_stats: dict[str, list] = {}

    # -- structure ---------------------------------------------------------------------------

    def num_trees(self) -> int:
        """Number of trees (``num_model_per_iteration()`` per iteration)."""
        return len(self.trees)

    def num_model_per_iteration(self) -> int:
        """Trees per iteration: the number of classes of a multiclass model, else 1."""
        return self.objective.num_outputs

    def current_iteration(self) -> int:
        """Number of boosting iterations in the model."""
        return len(self.trees) // self.objective.num_outputs

    def num_feature(self) -> int:
        """Number of features the model expects."""
        return self.bin_mapper.n_features

    def feature_name(self) -> list[str]:
        """Feature names (``Column_<i>`` unless given at training)."""
        return list(self.feature_names)

    def add_tree(self, tree: Tree) -> None:
        """Append a tree (training)."""
        self.trees.append(tree)
        self.__dict__.pop("_packed", None)

    def _drop_unfinished_iteration(self) -> None:
        """Remove the trees of an iteration that did not grow all its classes' trees (training
        stopped midway)."""
        del self.trees[self.current_iteration() * self.objective.num_outputs:]
        self.__dict__.pop("_packed", None)

    @cached_property
    def _packed(self) -> PackedTrees:
        return PackedTrees(self.trees)

    def _n_trees(self, num_iteration: int | None, name: str = "num_iteration") -> int:
        """Trees of the first ``num_iteration`` iterations (None: ``best_iteration``; <= 0: all).

        Raises
        ------
        ParameterError
            ``num_iteration`` (called ``name`` in the message) is not a whole number.
        """
        return self._tree_slice(0, num_iteration, name).stop

    def _tree_slice(self, start_iteration: int, num_iteration: int | None, name: str = "num_iteration") -> slice:
        """The trees of iterations ``start_iteration .. start_iteration + num_iteration - 1``, cut at
        the last iteration (LightGBM's rule: ``num_iteration`` None is ``best_iteration`` from
        iteration 0, else to the last one; <= 0 is to the last one).

        Raises
        ------
        ParameterError
            ``start_iteration`` or ``num_iteration`` (called ``name`` in the message) is not a
            whole number (a NaN or 2.5 would otherwise be truncated or fail inside numpy), or
            ``start_iteration`` is negative or beyond the last iteration (LightGBM clamps it: a
            prediction of no tree would pass silently for one of the model's).
        """
        start_iteration = _whole_number("start_iteration", start_iteration, "0: the first iteration")
        if not 0 <= start_iteration <= self.current_iteration():
            raise ParameterError(f"start_iteration must be in [0, {self.current_iteration()}] (the model's "
                                 f"iterations), got {start_iteration}")
        if num_iteration is None:
            num_iteration = self.best_iteration if start_iteration == 0 else 0
        num_iteration = _whole_number(name, num_iteration, "None: the best iteration, <= 0: all")
        stop = self.current_iteration() if num_iteration <= 0 else min(start_iteration + num_iteration,
                                                                       self.current_iteration())
        n_outputs = self.objective.num_outputs
        return slice(start_iteration * n_outputs, stop * n_outputs)

    def _start_scores(self, n_rows: int) -> np.ndarray:
        """Raw scores before any tree: ``base_score`` per row, shape (num_outputs, n_rows)."""
        base = np.asarray(self.base_score, np.float64).reshape(-1, 1)
        return np.repeat(base, n_rows, axis=1)

    # -- prediction --------------------------------------------------------------------------

    def predict(self, data: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False, pred_interactions: bool = False) -> np.ndarray:
        """Predict, or explain the predictions.

        Parameters
        ----------
        data : array-like, DataFrame or scipy sparse matrix, shape (n_rows, n_features)
            NaN marks a missing value. Categorical features are read as in training: texts and a
            DataFrame's categories by value (whatever the order of its categories), integer
            categories as codes; a category the model has not seen is a missing value.
        raw_score : bool
            Return raw scores (log-odds for ``binary``) instead of predictions.
        start_iteration : int
            The first iteration to use (LightGBM's): from 0 to :meth:`current_iteration`, else a
            ParameterError. A multiclass model's iteration is its ``num_class`` trees. From an
            iteration after the first, the raw scores leave out the model's ``base_score`` (the
            start score, which LightGBM's first tree holds), so that the raw scores of iterations
            ``[0, k)`` and ``[k, end)`` add up to the model's (see ``raw_score``).
        num_iteration : int, optional
            Use ``num_iteration`` iterations from ``start_iteration``, or as many as there are
            (LightGBM's rule). None: ``best_iteration`` iterations when ``start_iteration`` is 0
            (all of them unless early stopping ran), else all from ``start_iteration``; <= 0:
            all from ``start_iteration``.
        pred_leaf : bool
            Return the leaf each row reaches in each tree used (LightGBM's leaf indices, see
            :func:`smartboost.explain.leaf_numbers`).
        pred_contrib : bool
            Return each feature's SHAP value and the expected value, in raw-score space
            (path-dependent TreeSHAP, see :mod:`smartboost.explain`); ``raw_score`` is ignored.
            The expected value includes ``base_score`` only from the first iteration, as the raw
            score does. A dense output, refused as ``pred_interactions`` is when larger than the
            memory available.
        pred_interactions : bool
            Return the SHAP interaction values (XGBoost's ``pred_interactions``), in raw-score space.
            They take ``(n_features + 1)^2`` float64 per row and output: a request larger than the
            memory available is a DataError giving its size in GB, raised before any allocation;
            predict fewer rows per call.

        Returns
        -------
        ndarray
            Predictions (multiclass: class probabilities) or raw scores, float64 of shape
            (n_rows,), or (n_rows, num_class) for a multiclass model. With ``pred_leaf``: int32
            of shape (n_rows, n_trees), a column per tree used. With ``pred_contrib``: float64 of shape
            (n_rows, n_features + 1), the expected value last; for a multiclass model
            (n_rows, num_class * (n_features + 1)), one such block per class (LightGBM's
            layout). Each row's contributions sum to its raw score. With ``pred_interactions``:
            float64 of shape (n_rows, n_features + 1, n_features + 1), the expected value last on
            the diagonal; (n_rows, num_class, n_features + 1, n_features + 1) for a multiclass
            model.
        """
        if isinstance(data, Dataset):  # else refused as "non-numeric values", which would not say why
            raise DataError("predict takes the features (an array, DataFrame or sparse matrix), not a Dataset: pass "
                            "the data the Dataset was made from")
        # checked: a text such as "false" is truthy and would silently pick another output
        raw_score = _bool("raw_score", raw_score)
        explained = {"pred_leaf": explain_leaves, "pred_contrib": explain_contributions,
                     "pred_interactions": explain_interactions}
        asked = [name for name, flag in zip(explained, (pred_leaf, pred_contrib, pred_interactions))
                 if _bool(name, flag)]
        if len(asked) > 1:
            raise ParameterError(f"give at most one of pred_leaf, pred_contrib and pred_interactions, not {asked}")
        trees = self._tree_slice(start_iteration, num_iteration)
        if asked:
            X, chunks = self._prediction_rows(data)
            with threads(self.params.get("num_threads", 0)):
                return explained[asked[0]](self, X, trees, chunks)
        packed = self._packed
        X, chunks = self._prediction_rows(data, packed.used_features)
        n_outputs = self.objective.num_outputs
        class_roots = packed.output_roots(trees, n_outputs)
        out = self._start_scores(X.shape[0]) if trees.start == 0 else np.zeros((n_outputs, X.shape[0]))
        with threads(self.params.get("num_threads", 0)) as n_threads:
            for start, chunk in chunks:
                # a block holds every column, or only the used ones (fewer)
                words = packed.words if chunk.shape[1] == self.num_feature() else packed.compact_words
                block = _tree_block_rows(*chunk.shape, chunk.itemsize, n_threads)
                for k in range(n_outputs):
                    predict_trees(chunk, words, packed.threshold, packed.value, class_roots[k],
                                  out[k, start:start + chunk.shape[0]], block, packed.categorical)
        if n_outputs == 1:
            out = out[0]
        if not raw_score:
            out = self.objective.transform(out)
        return out.T.copy() if n_outputs > 1 else out

    def _prediction_rows(self, data: Any,
                         used: np.ndarray | None = None) -> tuple[Any, Iterator[tuple[int, np.ndarray]]]:
        """``data`` converted for prediction, its features checked against the model's, and its
        blocks of rows as the tree walks read them (:func:`_row_chunks`; ``used``: the only
        columns the walks read, or None for all of them)."""
        features = to_features(data, "data", allow_empty=True)
        X, names = features.matrix, features.names
        if X.shape[1] != self.num_feature():
            raise DataError(f"data has {X.shape[1]} features but the model was trained on {self.num_feature()}")
        check_column_names(names, self.feature_names, "model's")
        self.bin_mapper.check_text_columns(features)
        category_bins = {f: self.bin_mapper.category_bins(features, f) for f in self.bin_mapper.categories}
        return X, _row_chunks(X, category_bins, used)

    def predict_binned(self, data: BinnedData, out: np.ndarray, first_tree: int = 0,
                       last_tree: int | None = None, step: int = 1) -> None:
        """Add trees ``first_tree:last_tree:step`` to the raw scores ``out`` of binned rows.

        The training loop's path (evaluation sets, continued training): ``data`` must be binned
        with this model's edges. A multiclass model's class ``k`` owns trees
        ``k::num_model_per_iteration()``. Each tree is walked on every row in turn by the
        training loop's walk (:meth:`Tree.add_to_binned_rows`, several rows at once per thread,
        on one- or two-byte bins instead of float features), with the scores of :func:`predict_trees`
        bit for bit.
        """
        rows = np.arange(data.n_rows, dtype=np.uint32)
        for tree in self.trees[first_tree:last_tree:step]:
            tree.add_to_binned_rows(data.row_major, rows, self.bin_mapper.n_bins, out)

    def feature_importance(self, importance_type: str = "split", iteration: int | None = None) -> np.ndarray:
        """Per-feature importance.

        Parameters
        ----------
        importance_type : {'split', 'gain'}
            Number of splits on the feature, or the total gain of those splits.
        iteration : int, optional
            Use the first ``iteration`` iterations (as ``num_iteration`` in :meth:`predict`).

        Returns
        -------
        ndarray of float64, shape (n_features,)
        """
        if importance_type not in ("split", "gain"):
            raise ParameterError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        out = np.zeros(self.num_feature())
        for tree in self.trees[:self._n_trees(iteration, "iteration")]:
            internal = tree.left >= 0
            np.add.at(out, tree.feature[internal], 1.0 if importance_type == "split" else tree.gain[internal])
        return out

    def eval(self, data: Dataset, name: str, feval: Any = None) -> list[tuple[str, str, float, bool]]:
        """Evaluate the model on ``data`` (LightGBM's ``Booster.eval``).

        Parameters
        ----------
        data : Dataset
            With labels, binned with the model's edges (``Dataset(X, y, reference=booster)``,
            or ``reference=`` the training Dataset; a Dataset not binned yet without a reference
            is binned with them here); its weights, queries and init scores count.
        name : str
            The name the results give the data.
        feval : callable or list of callable, optional
            Custom metrics, as :func:`smartboost.train` takes them.

        Returns
        -------
        list of (str, str, float, bool)
            ``(name, metric, value, is_higher_better)`` for each metric the model was trained
            with (its ``metric`` parameter, else its objective's default metric), then each
            custom one, at all of the model's trees.
        """
        from .engine import evaluate_dataset

        return [(r.data_name, r.metric, r.value, r.higher_is_better) for r in evaluate_dataset(self, data, name, feval)]

    def trees_to_dataframe(self) -> Any:
        """Every node of every tree as a row of a pandas DataFrame (LightGBM's columns).

        Columns: ``tree_index`` (multiclass: class ``i % num_class`` of iteration
        ``i // num_class``); ``node_depth`` (the root is 1); ``node_index``, ``left_child``,
        ``right_child`` and ``parent_index`` as LightGBM names nodes (``<tree>-S<k>``: the tree's
        ``k``-th split in the order they were made; ``<tree>-L<leaf>``: a leaf, numbered as
        ``predict(pred_leaf=True)`` numbers it); ``split_feature`` (a name); ``split_gain``;
        ``threshold`` (a numeric split sends values ``<=`` it left; a categorical split, decision
        type ``==``, sends the categories listed, ``||``-separated, left); ``decision_type``;
        ``missing_direction`` (where missing values go: ``left`` or ``right``; a categorical
        split sends missing and unseen categories right); ``missing_type`` (``NaN``: smartboost's
        missing value); ``value`` (the node's output times the learning rate, without
        ``base_score``, which smartboost keeps apart from the trees where LightGBM adds it to its
        first tree's values); ``weight`` (the sum of the hessians of the node's rows) and
        ``count`` (the rows of the tree's sample that reached it). Leaves have None or NaN in the
        split columns.

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        ImportError
            Without pandas (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("trees_to_dataframe needs pandas: pip install pandas") from None
        return pd.DataFrame(tree_table(self))

    # -- persistence -------------------------------------------------------------------------

    def model_to_string(self, num_iteration: int | None = None) -> str:
        """The model as versioned JSON text (see ``docs/reference/model_format.md``).

        Parameters
        ----------
        num_iteration : int, optional
            Save only the first ``num_iteration`` iterations; None or <= 0 saves all.
        """
        n = self._n_trees(0 if num_iteration is None else num_iteration)
        iterations = n // self.objective.num_outputs
        # best_score is the score at best_iteration: a model cut before it has no such score
        best_score = self.best_score if self.best_iteration <= iterations else {}
        return io.model_to_string(io.ModelContent(
            objective=self.objective, bin_mapper=self.bin_mapper, base_score=self.base_score,
            feature_names=self.feature_names, params=model_params(self.params), trees=self.trees[:n],
            best_iteration=min(self.best_iteration, iterations), best_score=best_score,
            data_format=self.data_format))

    def save_model(self, filename: str | os.PathLike, num_iteration: int | None = None) -> Booster:
        """Write :meth:`model_to_string` to ``filename`` (atomically: write, then rename)."""
        io.write_model_text(filename, self.model_to_string(num_iteration))
        return self

    def __getstate__(self) -> dict[str, Any]:
        return {"model": self.model_to_string(), "evals_result": self.evals_result,
                "iteration_stats": self.iteration_stats}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._init_from(io.model_from_string(state["model"]))
        self.evals_result = state.get("evals_result", {})
        self.iteration_stats = state.get("iteration_stats", {})

    def __repr__(self) -> str:
        return (f"<smartboost.Booster objective={self.objective.name!r} iterations={self.current_iteration()} "
                f"trees={self.num_trees()} "
                f"features={self.num_feature()}>")


def _row_chunks(X: Any, category_bins: dict[int, np.ndarray],
                used: np.ndarray | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, rows)``: a converted matrix as C-ordered dense blocks of rows.

    The whole matrix when it is one already and has no categorical feature; else blocks of at
    most ``_PREDICT_CHUNK_BYTES``, which hold only the columns ``used`` when they are fewer than
    all (a sparse matrix of many columns is never made dense in full). A categorical feature's
    column holds the rows' bins (``category_bins[f]``), which the tree walks test against the
    nodes' left sets, in a float64 copy of each block.
    """
    if not category_bins and not issparse(X) and X.flags.c_contiguous:
        yield 0, X
        return
    columns = None
    if used is not None and used.size < X.shape[1]:
        columns = used
        if issparse(X):
            X = X[:, used]  # still sparse: the column selection reads its entries once
    width = X.shape[1] if columns is None else columns.size
    placed = category_bins  # each categorical feature's column in the blocks, and its rows' bins
    if columns is not None:
        at = {f: int(np.searchsorted(columns, f)) for f in category_bins}
        placed = {at[f]: bins for f, bins in category_bins.items() if at[f] < width and columns[at[f]] == f}
    step = max(1, _PREDICT_CHUNK_BYTES // (8 * max(1, width)))
    for start in range(0, X.shape[0], step):
        if columns is not None and not issparse(X):
            rows = np.ascontiguousarray(X[start:start + step, columns])
        else:
            rows = dense_rows(X, start, start + step)
        if category_bins:
            rows = np.array(rows, np.float64)
            for column, bins in placed.items():
                rows[:, column] = bins[start:start + rows.shape[0]]
        yield start, rows

