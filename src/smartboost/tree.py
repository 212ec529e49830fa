"""The packed tree structure every grower produces, and the packing of many trees for prediction.

A tree is a struct of arrays indexed by node id, root first. A node is a leaf when
``left[node] < 0``. Internal node ``i`` sends a row left when its value is ``<= threshold[i]``
(raw data) or its bin is ``<= bin_threshold[i]`` (binned data), and a missing value left when
``missing_left[i]``. ``value`` holds every node's Newton value times the shrinkage: the leaves'
are the tree's output, the internal nodes' are kept for inspection.

A node splitting a categorical feature sends the bins of its left set left (``left_sets``: 256
bits in four uint64 words per node; the model file lists them, ``left_bins``), and the rest,
missing values and categories unseen in training among them, right; its ``threshold`` and
``bin_threshold`` are 0 and ``missing_left`` False. Trees of a model without categorical
features have no ``left_sets``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _schema as schema
from ._common import WALK_PREFETCH_ROWS, WALK_STEP_COST, WIDE_ROW_BYTES, X_BINNED_DTYPE
from ._kernels.predict import LEAF_WORD, add_tree_to_rows, pack_bin_decisions
from ._kernels.records import CategoricalNodes
from .binning import CATEGORY_MAX_BIN, MAX_BIN, BinMapper

__all__ = ["Tree", "PackedTrees", "bins_in_set"]

MAX_NODES = 1 << 24
"""A tree has fewer nodes: the binned tree walk packs a child's index into 24 bits
(``_kernels.predict.pack_bin_decisions``)."""

_NODE_DTYPES = {
    "feature": np.int32,
    "threshold": np.float64,
    "bin_threshold": np.int32,
    "missing_left": np.bool_,
    "left": np.int32,
    "right": np.int32,
    "value": np.float64,
    "gain": np.float64,
    "hessian": np.float64,
    "count": np.int64,
}


@dataclass(eq=False)
class Tree:
    """One regression tree.

    Attributes
    ----------
    feature : ndarray of int32
        Split feature (-1 for leaves).
    threshold : ndarray of float64
        Float threshold (+inf for "values left, missing right"; 0 for leaves).
    bin_threshold : ndarray of int32
        Bin threshold (0 for leaves).
    missing_left : ndarray of bool
    left, right : ndarray of int32
        Children (-1 for leaves).
    value : ndarray of float64
        Node value times the shrinkage (the output at leaves).
    gain : ndarray of float64
        Split gain (0 for leaves).
    hessian : ndarray of float64
        Sum of the weighted hessians of the node's rows.
    count : ndarray of int64
        Rows the tree was grown on that reached the node.
    left_sets : ndarray of uint64, shape (n_nodes, 4), or None
        The left bins of each categorical split (bin ``b`` is bit ``b % 64`` of word ``b // 64``;
        empty for other nodes); None in a model without categorical features.
    shrinkage : float or None
        The learning rate the tree's values were multiplied by (LightGBM's ``shrinkage``), which
        a learning-rate schedule changes from tree to tree; None where it is not known (a model
        file written without it). ``value / shrinkage`` is the tree's step before shrinkage,
        which the samplers read from the last trees (also of a model training resumes from).
    """

    feature: np.ndarray
    threshold: np.ndarray
    bin_threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    hessian: np.ndarray
    count: np.ndarray
    left_sets: np.ndarray | None = None
    shrinkage: float | None = None

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return self.feature.shape[0]

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.left < 0))

    @property
    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves."""
        return self.left < 0

    def depth(self) -> int:
        """Length of the longest root-to-leaf path (0 for a single leaf)."""
        return int(self._node_depths().max())

    def _node_depths(self) -> np.ndarray:
        """Each node's distance from the root (int64), level by level."""
        depth = np.zeros(self.n_nodes, np.int64)
        level = np.zeros(1, np.int64)
        d = 0
        while level.size:
            depth[level] = d
            inner = level[self.left[level] >= 0]
            level = np.concatenate([self.left[inner], self.right[inner]])
            d += 1
        return depth

    @property
    def categorical_nodes(self) -> np.ndarray:
        """Boolean mask of the nodes that split a categorical feature."""
        if self.left_sets is None:
            return np.zeros(self.n_nodes, np.bool_)
        return (self.left >= 0) & self.left_sets.any(axis=1)

    def left_bins(self, node: int) -> np.ndarray:
        """The bins a categorical split at ``node`` sends left (int64, increasing)."""
        return bins_in_set(self.left_sets[node])

    def left_bin_sets(self, missing_bin: np.ndarray) -> np.ndarray:
        """Every node's set of left bins, numeric splits' included (bins ``<= bin_threshold``,
        and the missing-value bin when ``missing_left``), and every bin for a leaf (its own left
        child): what the binned walk of a tree with categorical splits tests
        (``_kernels.predict.add_tree_to_rows``)."""
        b = np.arange(4 * 64)
        internal = self.left >= 0
        missing = missing_bin[np.where(internal, self.feature, 0)]
        left = (b <= self.bin_threshold[:, None]) | (self.missing_left[:, None] & (b == missing[:, None]))
        sets = _sets_of_masks((left & internal[:, None]) | ~internal[:, None])
        categorical = self.categorical_nodes
        sets[categorical] = self.left_sets[categorical]
        return sets

    def add_to_binned_rows(self, bins: np.ndarray, rows: np.ndarray, missing_bin: np.ndarray,
                           scores: np.ndarray | None, leaf_nodes: np.ndarray | None = None,
                           leaves_out: np.ndarray | None = None) -> None:
        """Add the tree's output to ``scores[rows]`` by walking it on the rows' bins
        (``_kernels.predict.add_tree_to_rows``).

        Parameters
        ----------
        bins : ndarray of uint8 or uint16, shape (n_rows, n_features)
            Row-major bins, binned with the edges the tree was grown on.
        rows : ndarray of uint32
            Rows to update.
        missing_bin : ndarray of int64, shape (n_features,)
            Each feature's missing-value bin (``BinMapper.n_bins``).
        scores : ndarray of float64 or None
            Updated in place; None: the rows' leaves are only recorded (``leaves_out``).
        leaf_nodes, leaves_out : ndarray, optional
            When given, ``leaves_out[row]`` receives the position in ``leaf_nodes`` of the
            row's leaf.
        """
        leaf_of_node = np.full(self.n_nodes, -1, np.int32)
        if leaf_nodes is not None:
            leaf_of_node[leaf_nodes] = np.arange(leaf_nodes.size, dtype=np.int32)
        widths = None if bins.dtype == X_BINNED_DTYPE else np.empty(self.n_nodes, bins.dtype)
        decisions = pack_bin_decisions(self.feature, self.bin_threshold, self.missing_left, missing_bin, self.left,
                                       widths)
        ahead = WALK_PREFETCH_ROWS if bins.shape[1] * bins.itemsize >= WIDE_ROW_BYTES else None
        left_sets = None
        if self.categorical_nodes.any():  # two-byte bins: the numeric nodes keep their range tests
            left_sets = self.left_bin_sets(missing_bin) if widths is None else self.left_sets
        add_tree_to_rows(bins, rows, decisions, widths, left_sets, self.value, leaf_of_node, scores, leaves_out,
                         self._walk_steps(), ahead)

    def _walk_steps(self) -> int:
        """Levels the binned walk takes for every row of a group before it tests which rows
        are at their leaves (``_kernels.predict.add_tree_to_rows``): the least depth with at
        most ``1 / WALK_STEP_COST`` of the rows deeper, the rows counted by the leaves' ``count``
        (the rows the tree was grown on) plus one for each leaf."""
        leaves = self.left < 0
        rows = np.bincount(self._node_depths()[leaves], weights=self.count[leaves] + 1.0)
        deeper = rows.sum() - np.cumsum(rows)
        return int(np.argmax(deeper * WALK_STEP_COST <= rows.sum()))

    def to_dict(self) -> dict[str, list]:
        """JSON-ready representation; non-finite thresholds become strings ('inf', '-inf'), and a
        model with categorical features lists each node's left bins (``left_bins``)."""
        out = {name: getattr(self, name).tolist() for name in _NODE_DTYPES}
        out["threshold"] = [t if np.isfinite(t) else repr(t) for t in out["threshold"]]
        if self.left_sets is not None:
            out["left_bins"] = [bins.tolist() for bins in _bins_of_sets(self.left_sets)]
        if self.shrinkage is not None:
            out["shrinkage"] = self.shrinkage
        return out

    @classmethod
    def from_dict(cls, data: Any, bin_mapper: BinMapper, path: str = "tree") -> Tree:
        """Inverse of :meth:`to_dict`, checking that the arrays form a valid tree of ``bin_mapper``'s features.

        Raises
        ------
        ModelFormatError
            A missing, mistyped or ragged array, an entry out of its range, or nodes that do not
            form a tree, naming the field (e.g. ``trees[3].left[7]``).
        """
        keys = (*_NODE_DTYPES, "shrinkage", "left_bins") if bin_mapper.categories else (*_NODE_DTYPES, "shrinkage")
        schema.known_keys(schema.of_type(data, dict, path), keys, path)
        n = len(schema.member(data, "left", path, list))
        if not 0 < n < MAX_NODES:
            schema.fail(schema.child(path, "left"), f"has {n} nodes, not 1 to {MAX_NODES - 1}")
        # Ranges checked on the parsed integers, before they are narrowed to int32.
        ranges = {"feature": (-1, bin_mapper.n_features - 1), "bin_threshold": (0, MAX_BIN - 1),
                  "left": (-1, n - 1), "right": (-1, n - 1), "count": (0, schema.INT64_MAX)}
        arrays = {}
        for name, dtype in _NODE_DTYPES.items():
            field = schema.child(path, name)
            arrays[name] = schema.numbers(schema.member(data, name, path), field, dtype, *ranges.get(name, ()),
                                          infinities=name == "threshold")
            if arrays[name].size != n:
                schema.fail(field, f"has {arrays[name].size} entries, not {n} (one per node, as 'left')")
        if bin_mapper.categories:
            arrays["left_sets"] = _left_sets_from_dict(schema.member(data, "left_bins", path, list), n,
                                                       schema.child(path, "left_bins"))
        shrinkage = schema.member(data, "shrinkage", path, default=None)
        if shrinkage is not None:
            field = schema.child(path, "shrinkage")
            if schema.number(shrinkage, field) <= 0.0:
                schema.fail(field, f"is {schema.describe(shrinkage)}: a learning rate is positive")
            arrays["shrinkage"] = float(shrinkage)
        tree = cls(**arrays)
        tree._check(bin_mapper, path)
        return tree

    def _check(self, bin_mapper: BinMapper, path: str) -> None:
        """The structure checks of :meth:`from_dict`, on arrays already in their dtypes' ranges."""
        internal = self.left >= 0
        ids = np.arange(self.n_nodes)

        def refuse(name: str, bad: np.ndarray, problem: str) -> None:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                schema.fail(schema.child(schema.child(path, name), i), f"is {getattr(self, name)[i]}: {problem}")

        # Children come after their parent (so there is no cycle) and the right child is next to
        # the left one, which the binned walk assumes (_kernels.predict.pack_bin_decisions).
        refuse("left", internal & (self.left <= ids), "a child must come after its parent")
        refuse("right", self.right != np.where(internal, self.left + 1, -1),
               "a split's right child is its left child + 1, a leaf's is -1")
        # Children lie in [1, n) by now: n - 1 of them, none twice, are each non-root node once.
        children = np.concatenate([self.left[internal], self.right[internal]])
        if children.size != self.n_nodes - 1 or np.bincount(children, minlength=1).max() > 1:
            schema.fail(schema.child(path, "left"), "does not form a tree (a node with two parents or none)")
        features = self.feature[internal]
        refuse("feature", internal & (self.feature < 0), "a split node needs a feature")
        # The counts are the cover TreeSHAP weighs a split's children by (smartboost.explain): a
        # split shares its rows between its children and has some (else its children's shares
        # are 0 / 0). Compared without adding, so that counts near the int64 limit cannot wrap.
        refuse("count", internal & (self.count == 0), "a split node covers at least one row of its tree's sample")
        left_count = self.count[np.where(internal, self.left, 0)]
        right_count = self.count[np.where(internal, self.right, 0)]
        shared = (right_count <= self.count) & (left_count == self.count - right_count)
        if not shared[internal].all():
            i = int(np.flatnonzero(internal & ~shared)[0])
            schema.fail(schema.child(schema.child(path, "count"), i),
                        f"is {self.count[i]}, not the sum of its children's counts ({left_count[i]} + "
                        f"{right_count[i]}): the rows of a split are its children's")
        bins = self.bin_threshold[internal]
        refuse("bin_threshold", internal & (self.bin_threshold >= bin_mapper.n_bins[self.feature]),
               "outside its feature's value bins")
        if self.left_sets is not None:
            self._check_categorical(bin_mapper, path, internal, refuse)
        # The float threshold must be the one bin_mapper gives the bin split, or raw and binned
        # data (continued training, validation sets) would take different paths.
        table, offsets = bin_mapper.threshold_table
        expected = np.zeros(self.n_nodes)
        expected[internal] = table[offsets[features] + bins]
        refuse("threshold", internal & (self.threshold != expected),
               "not the threshold bin_mapper gives this node's feature and bin_threshold")

    def _check_categorical(self, bin_mapper: BinMapper, path: str, internal: np.ndarray, refuse: Any) -> None:
        """A split of a categorical feature sends some of its value bins left (never its missing
        bin) and has bin_threshold 0 and missing_left false; no other node has left bins."""
        categorical = internal & bin_mapper.categorical[np.where(internal, self.feature, 0)]
        refuse("bin_threshold", categorical & (self.bin_threshold != 0), "a categorical split's must be 0")
        refuse("missing_left", categorical & self.missing_left, "a categorical split sends missing values right")
        left_bins = _bins_of_sets(self.left_sets)
        sizes = np.array([bins.size for bins in left_bins])
        highest = np.array([bins[-1] if bins.size else -1 for bins in left_bins])
        where = schema.child(path, "left_bins")
        for bad, problem in ((categorical & (sizes == 0), "is empty: a categorical split sends some bins left"),
                             (categorical & (highest >= bin_mapper.n_bins[self.feature]),
                              "holds a bin outside its feature's value bins"),
                             (~categorical & (sizes > 0), "must be empty: no categorical split there")):
            if bad.any():
                schema.fail(schema.child(where, int(np.flatnonzero(bad)[0])), problem)


def _sets_of_masks(masks: np.ndarray) -> np.ndarray:
    """Bit sets (uint64, shape (n, 4)) of boolean masks of 256 bins (shape (n, 256))."""
    bits = masks.reshape(-1, 4, 64).astype(np.uint64) << np.arange(64, dtype=np.uint64)
    return np.bitwise_or.reduce(bits, axis=2)


def bins_in_set(words: np.ndarray) -> np.ndarray:
    """The bins (int64, increasing) of one bit set of four uint64 words."""
    return _bins_of_sets(words.reshape(1, 4))[0]


def _bins_of_sets(sets: np.ndarray) -> list[np.ndarray]:
    """The bins (increasing) of each row of bit sets."""
    bits = (sets[:, :, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    return [np.flatnonzero(row) for row in bits.reshape(-1, 4 * 64)]


def _left_sets_from_dict(values: list, n: int, path: str) -> np.ndarray:
    """A tree's ``left_bins``: one list of increasing bins per node, as bit sets."""
    if len(values) != n:
        schema.fail(path, f"has {len(values)} entries, not {n} (one per node, as 'left')")
    masks = np.zeros((n, 4 * 64), np.bool_)
    for node, bins in enumerate(values):
        node_path = schema.child(path, node)
        array = schema.numbers(bins, node_path, np.int64, 0, CATEGORY_MAX_BIN - 1)
        if array.size > 1 and not (array[1:] > array[:-1]).all():
            k = int(np.argmin(array[1:] > array[:-1])) + 1
            schema.fail(schema.child(node_path, k), f"is {array[k]}, not above the bin before it ({array[k - 1]})")
        masks[node, array] = True
    return _sets_of_masks(masks)


def _raw_decision_words(feature: np.ndarray, missing_left: np.ndarray, left: np.ndarray) -> np.ndarray:
    """One uint64 per node for the raw walk (layout: :data:`~smartboost._kernels.predict.LEAF_WORD`).
    Children and features are int32, so they fit the word's 32 and 31 bits."""
    words = (left.astype(np.int64).astype(np.uint64) | (feature.astype(np.uint64) << np.uint64(32))
             | (missing_left.astype(np.uint64) << np.uint64(63)))
    words[left < 0] = LEAF_WORD
    return words


class PackedTrees:
    """Trees concatenated into flat node arrays, the form the prediction kernel reads.

    Parameters
    ----------
    trees : sequence of Tree

    Attributes
    ----------
    roots : ndarray of int64
        Global index of each tree's root; predicting with the first k trees uses ``roots[:k]``.
    used_features : ndarray of int64
        The features some split tests, in increasing order: the only columns a prediction reads.
    words : ndarray of uint64
        Each node's child, feature and missing-value direction in one word, as the prediction
        kernel reads them (layout: :data:`~smartboost._kernels.predict.LEAF_WORD`).
    compact_words : ndarray of uint64
        ``words`` with the features renumbered into ``used_features``: the words for rows that
        hold only the used columns.
    """

    def __init__(self, trees: list[Tree]) -> None:
        sizes = np.array([t.n_nodes for t in trees], np.int64)
        self.roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if trees else np.zeros(0, np.int64)

        def cat(name: str) -> np.ndarray:
            return np.concatenate([getattr(t, name) for t in trees]) if trees else np.zeros(0, _NODE_DTYPES[name])

        def cat_children(name: str) -> np.ndarray:
            parts = [np.where(t.left >= 0, getattr(t, name) + root, -1) for t, root in zip(trees, self.roots)]
            return np.concatenate(parts).astype(np.int32) if trees else np.zeros(0, np.int32)

        self.feature = cat("feature")
        self.threshold = cat("threshold")
        self.bin_threshold = cat("bin_threshold").astype(np.float64)
        self.missing_left = cat("missing_left")
        self.value = cat("value")
        self.left = cat_children("left")
        self.right = cat_children("right")
        self._output_roots: dict[tuple[int, int, int], list[np.ndarray]] = {}
        split = self.left >= 0
        self.used_features = np.unique(self.feature[split]).astype(np.int64)
        compact_feature = np.full(self.feature.size, -1, np.int32)
        compact_feature[split] = np.searchsorted(self.used_features, self.feature[split])
        self.words = _raw_decision_words(self.feature, self.missing_left, self.left)
        self.compact_words = _raw_decision_words(compact_feature, self.missing_left, self.left)
        self.categorical: CategoricalNodes | None = None
        """The categorical splits (None: there is none)."""
        if any(t.categorical_nodes.any() for t in trees):
            self.categorical = CategoricalNodes(np.concatenate([t.categorical_nodes for t in trees]),
                                                np.concatenate([t.left_sets for t in trees]))

    def output_roots(self, trees: slice, n_outputs: int) -> list[np.ndarray]:
        """The roots of each output's trees among ``trees`` (whose start is a whole iteration:
        output ``k`` owns trees ``k, k + n_outputs, ...``), kept for the next prediction."""
        key = (trees.start, trees.stop, n_outputs)
        if key not in self._output_roots:
            roots = self.roots[trees]
            self._output_roots[key] = [np.ascontiguousarray(roots[k::n_outputs]) for k in range(n_outputs)]
        return self._output_roots[key]
