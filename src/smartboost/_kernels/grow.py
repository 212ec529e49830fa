"""Growth of one tree: the loop that chooses, splits and scans its nodes, compiled.

The loop (docs/concepts/boosting.md, "Trees"):

- the root's histogram is built and its best split found, if it may split;
- the open leaf to split next is the one with the largest gain (leaf-wise), or the shallowest,
  then the largest gain (depth-wise); ties go to the lowest node id. A depth-wise tree takes a
  whole level at once, in that order, which grows the same tree;
- a chosen leaf's rows are partitioned into its children, node ids ``n_nodes`` (left) and
  ``n_nodes + 1``;
- when a child may still be split (room for more leaves, depth left, and enough hessian on one
  side), the child with fewer rows gets its histogram built into a free histogram slot, the
  other one inherits the parent's slot and becomes parent minus it, and both are scanned
  (:func:`~smartboost._kernels.split.subtract_and_find_splits`); otherwise the parent's slot is
  freed;
- a child with a valid split stays open, holding its histogram; the others free theirs.

Constraints act where a node is made and where its candidates are read: a child inherits its
parent's output bounds and the interaction groups its path allows, narrowed to those of the
split feature (:func:`_inherit`); a node's candidates are the features sharing a group with its
path (:func:`_candidates_of`). A split on a monotone feature bounds its children by LightGBM's
"intermediate" method (docs/howto/constraints.md): each child by its sibling's output, and
every leaf on the other side of a monotone split above whose region may touch the new leaves
along that feature by their outputs, its best split found again when its bounds narrow
(:func:`_tighten_contiguous`); or by the "basic" method, both children at the midpoint of their
outputs. Without constraints the state's arrays for them are left as they are and numba
compiles none of this code (the records' fields are None).

One loop serves every row source. It is a resumable state machine over a
:class:`~smartboost._kernels.records.GrowthState`: :func:`grow_tree` advances the tree as far as
it can and returns what it needs to go on. On rows held by this process (a ``LocalRows`` record)
it partitions the nodes and builds their histograms itself, and runs to the end in one call. On
rows held elsewhere (``rows`` None: ``smartboost.dask``'s workers), it stops where it needs them,
for the root's histogram (:data:`NEED_ROOT`) and for the splits it chose (:data:`NEED_SPLITS`);
``grower.TreeGrower`` has the row source do them and resumes it. When each worker holds the
summed histograms of a share of the features only (``SplitChoices.partial``, whose ``built``
are that share), it scans that share and stops after every scan (:data:`NEED_AGREEMENT`) for
the workers to agree on each scanned node's best split before the node is opened. It also stops
when the state has too few histogram slots or node records (:data:`NEED_SPACE`), to be enlarged
and resumed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from .histogram import node_histogram
from .partition import partition_node
from .records import Candidates, NodeSums, ThresholdRule
from .selection import draw_key, draw_node_candidates
from .split import find_best_split, gain_exponent, leaf_output, leaf_values, subtract_and_find_splits

DONE, NEED_ROOT, NEED_SPLITS, NEED_SPACE, NEED_AGREEMENT = 0, 1, 2, 3, 4
"""What :func:`grow_tree` returns: the tree is complete; the root's histogram is wanted in its
slot; the pending splits (the rows of ``state.splits``) are wanted (rows partitioned, the chosen
child's histogram built); the state needs more slots or nodes (``counts.need_slots``,
``counts.need_nodes``); the splits the loop found in the nodes it just scanned (the rows of
``state.splits``) want to be replaced by the best over every worker's share of the features."""

_START, _SCAN_ROOT, _CHOOSE, _FINISH, _OPEN, _END = 0, 1, 2, 3, 4, 5
"""The loop's phases, kept in ``counts.phase`` so that it resumes where it stopped."""


@njit(cache=True, nogil=True)
def can_split(depth, n_rows, h_fixed, h_unit, limits):
    """Whether a node may be split at all: depth left, and enough rows and hessian for two
    children (``h_unit``: ``Units.h``, ``limits`` in the tree's scale)."""
    return depth < limits.max_depth and n_rows >= limits.min_rows_to_split and \
        h_fixed * h_unit >= limits.min_hess_to_split


@njit(cache=True, nogil=True)
def _wants_histogram(room, child_depth, hl_fixed, hr_fixed, h_unit, limits):
    """Whether a split should build a child's histogram: unless no child can be split, whatever
    the row counts turn out to be (``room``: whether the tree may grow after this split)."""
    return room and child_depth < limits.max_depth and max(hl_fixed, hr_fixed) * h_unit >= limits.min_hess_to_split


@njit(cache=True, nogil=True)
def _comes_first(nodes, a, b, depthwise):
    """Whether open node ``a`` is split before open node ``b``."""
    if depthwise and nodes[a].depth != nodes[b].depth:
        return nodes[a].depth < nodes[b].depth
    if nodes[a].gain != nodes[b].gain:
        return nodes[a].gain > nodes[b].gain
    return a < b


@njit(cache=True, nogil=True)
def _draw(node, row, draws, packed_row):
    """Draw the candidates of ``node`` into row ``row`` of the draws' buffers (Type 1 pairs into
    ``packed_row`` too, unless it is None); return the row of features."""
    draw_node_candidates(draw_key(draws.stream, draws.iteration, node), draws.t, draws.pool, draws.n_thresholds,
                         draws.features[row], packed_row, draws.chosen, draws.rest)
    return draws.features[row]


def _drawn_candidates(node, row, choices):
    """The :class:`Candidates` of ``node`` before interaction constraints: the tree's, or
    (``choices.per_node``) the node's own draw into row ``row`` of the draws' buffers.

    Which applies is decided by the types when numba compiles the caller
    (:func:`_drawn_candidates_types`): a branch on ``per_node is None`` would return the
    thresholds as an optional array, which the split kernels' parallel loops misread as None."""


@overload(_drawn_candidates, jit_options={"cache": True, "nogil": True})
def _drawn_candidates_types(node, row, choices):
    """The implementation of :func:`_drawn_candidates` for the argument types."""
    per_node = choices.types[choices.fields.index("per_node")]
    if isinstance(per_node, types.NoneType):
        return lambda node, row, choices: choices.tree
    packed = per_node.types[per_node.fields.index("packed")]
    if isinstance(packed, types.NoneType):  # Types 2 and 3: features only
        return lambda node, row, choices: Candidates(_draw(node, row, choices.per_node, None), None)
    return lambda node, row, choices: Candidates(
        _draw(node, row, choices.per_node, choices.per_node.packed[row]), choices.per_node.packed[row])


@njit(cache=True, nogil=True)
def _allowed(state, node, row, interactions, drawn):
    """``drawn`` narrowed to the features that share an interaction group with the path of
    ``node`` (written into row ``row`` of the constraint's buffer); ``drawn`` itself without
    interaction constraints (``interactions`` None)."""
    if interactions is None:
        return drawn
    groups = state.groups[node]
    out = interactions.features[row]
    for f in range(out.shape[0]):
        shared = False
        if drawn.features[f]:
            for w in range(groups.shape[0]):
                shared |= (interactions.feature_groups[f, w] & groups[w]) != 0
        out[f] = shared
    return Candidates(out, drawn.thresholds)


@njit(cache=True, nogil=True)
def _candidates_of(state, node, row, choices):
    """The :class:`Candidates` of ``node`` (row ``row``, 0 or 1, of the buffers of two nodes'
    candidates): RGBM's (:func:`_drawn_candidates`) among those its interaction constraints
    allow (:func:`_allowed`)."""
    return _allowed(state, node, row, choices.interactions, _drawn_candidates(node, row, choices))


@njit(cache=True, nogil=True)
def _node_sums(state, node, monotone):
    """The :class:`NodeSums` of ``node``, with its output bounds: those the state holds with
    monotone constraints (``monotone``: ``Cells.monotone``), unbounded without (the state's
    bounds are then not kept)."""
    record = state.nodes[node]
    if monotone is None:
        return NodeSums(record.g, record.h, record.n_rows, -np.inf, np.inf)
    return NodeSums(record.g, record.h, record.n_rows, state.bounds[node, 0], state.bounds[node, 1])


@njit(cache=True, nogil=True)
def _inherit(state, parent, child, params, units, monotone, intermediate, interactions):
    """Give the children ``child`` (left) and ``child + 1`` of ``parent`` their output bounds
    and interaction groups (only what the constraints in use need)."""
    _inherit_bounds(state, parent, child, params, units, monotone, intermediate)
    _inherit_groups(state, parent, child, interactions)


@njit(cache=True, nogil=True)
def _inherit_groups(state, parent, child, interactions):
    """The children's interaction groups: the parent's that hold its split feature (nothing to
    do without interaction constraints)."""
    if interactions is None:
        return
    f = state.nodes[parent].feature
    for side in (child, child + 1):
        for w in range(state.groups.shape[1]):
            state.groups[side, w] = state.groups[parent, w] & interactions.feature_groups[f, w]


@njit(cache=True, nogil=True)
def _child_outputs(state, parent, params, units):
    """The outputs of the two children of ``parent``'s split, clamped to its bounds."""
    p = state.nodes[parent]
    lower, upper = state.bounds[parent, 0], state.bounds[parent, 1]
    l1, l2 = params.lambda_l1, params.lambda_l2
    return (leaf_output(p.gl * units.g, p.hl * units.h, l1, l2, lower, upper),
            leaf_output((p.g - p.gl) * units.g, (p.h - p.hl) * units.h, l1, l2, lower, upper))


@njit(cache=True, nogil=True)
def _inherit_bounds(state, parent, child, params, units, monotone, intermediate):
    """The children's output bounds: the parent's, and by a split on a monotone feature the
    lower child's upper bound and the higher child's lower bound cut at the sibling's output
    (``intermediate``) or at the midpoint of the two outputs (``monotone``: ``Cells.monotone``;
    nothing to do without it)."""
    if monotone is None:
        return
    p = state.nodes[parent]
    lower, upper = state.bounds[parent, 0], state.bounds[parent, 1]
    for side in (child, child + 1):
        state.bounds[side, 0], state.bounds[side, 1] = lower, upper
    direction = monotone[p.feature]
    if direction == 0:
        return
    w_left, w_right = _child_outputs(state, parent, params, units)
    low_side, high_side = (child, child + 1) if direction > 0 else (child + 1, child)
    w_low, w_high = (w_left, w_right) if direction > 0 else (w_right, w_left)
    if not intermediate:
        w_low = w_high = 0.5 * (w_left + w_right)
    state.bounds[low_side, 1] = min(upper, w_high)
    state.bounds[high_side, 0] = max(lower, w_low)


@njit(cache=True, nogil=True)
def _is_numeric(categorical, f):
    """Whether feature ``f`` splits by a threshold (``categorical``: ``Cells.categorical``)."""
    if categorical is not None:
        return not categorical[f]
    return True


@njit(cache=True, nogil=True)
def _tighten_contiguous(state, parent, params, units, monotone, categorical, changed):
    """LightGBM's intermediate method, after ``parent`` is split: the leaves whose outputs must
    stay ordered with the new children's get their bounds narrowed to those outputs. Returns how
    many leaves' bounds narrowed, written to ``changed``.

    Going up from ``parent``, each ancestor split on a monotone feature puts the new leaves on
    one side; the leaves of its other side must stay below them (the low side) or above them.
    Walking down that side skips the branches whose region cannot touch the new leaves': a
    branch on a feature the path up from ``parent`` split on, beyond that split's threshold on
    the other side; and below a split on the new split's feature, a branch beyond its
    threshold touches one of the new leaves only. An ancestor split on a feature the path up
    already split on, on the same side, is skipped: the leaves of its other side are separated
    from the new ones by that lower split. Categorical splits have no order and are not
    followed. A leaf's bounds only narrow, and never past its own output (its neighbours'
    outputs were clamped to bounds holding it), so every node's output stays within its bounds
    and the outputs stay ordered along every monotone feature.
    """
    nodes = state.nodes
    p = nodes[parent]
    w_left, w_right = _child_outputs(state, parent, params, units)
    path_feature = np.empty(p.depth, np.int64)
    path_bin = np.empty(p.depth, np.int64)
    path_right = np.empty(p.depth, np.bool_)
    stack = np.empty((state.counts[0].n_nodes, 3), np.int64)
    n_path = 0
    n_changed = 0
    node = parent
    while nodes[node].parent >= 0:
        up = nodes[node].parent
        u = nodes[up]
        f = u.feature
        in_right = node == u.left + 1
        node = up
        if not _is_numeric(categorical, f):
            continue
        separated = False
        for i in range(n_path):
            separated |= path_feature[i] == f and path_right[i] == in_right
        if separated:
            continue
        if monotone[f] != 0:
            update_upper = in_right if monotone[f] > 0 else not in_right  # the other side is the low one
            stack[0, 0], stack[0, 1], stack[0, 2] = u.left if in_right else u.left + 1, 1, 1
            top = 0
            while top >= 0:
                at, use_left, use_right = stack[top, 0], stack[top, 1] != 0, stack[top, 2] != 0
                top -= 1
                r = nodes[at]
                if r.left < 0:
                    if not (use_left or use_right):
                        continue
                    low = min(w_left, w_right) if use_left and use_right else w_left if use_left else w_right
                    high = max(w_left, w_right) if use_left and use_right else low
                    narrowed = False
                    if update_upper and low < state.bounds[at, 1]:
                        state.bounds[at, 1] = low
                        narrowed = True
                    elif not update_upper and high > state.bounds[at, 0]:
                        state.bounds[at, 0] = high
                        narrowed = True
                    if narrowed:
                        known = False
                        for k in range(n_changed):
                            known |= changed[k] == at
                        if not known:
                            changed[n_changed] = at
                            n_changed += 1
                    continue
                keep_left = keep_right = True
                left_touches_right = right_touches_left = True
                if _is_numeric(categorical, r.feature):
                    for i in range(n_path):
                        if path_feature[i] == r.feature:
                            keep_right &= not (r.bin >= path_bin[i] and not path_right[i])
                            keep_left &= not (r.bin <= path_bin[i] and path_right[i])
                    if r.feature == p.feature:
                        left_touches_right = r.bin < p.bin
                        right_touches_left = r.bin > p.bin
                if keep_left:
                    top += 1
                    stack[top, 0], stack[top, 1], stack[top, 2] = r.left, use_left, right_touches_left & use_right
                if keep_right:
                    top += 1
                    stack[top, 0], stack[top, 1], stack[top, 2] = r.left + 1, left_touches_right & use_left, use_right
        path_feature[n_path], path_bin[n_path], path_right[n_path] = f, u.bin, in_right
        n_path += 1
    return n_changed


@njit(cache=True, nogil=True)
def _rescan_narrowed(state, parent, monotone, cells, choices, params, units, scan_scratch):
    """The intermediate method's updates after ``parent`` is split (:func:`_tighten_contiguous`),
    and a new best split for every open leaf whose bounds narrowed (closed when it has none).
    Nothing to do without monotone constraints (``monotone``: ``Cells.monotone``, None)."""
    if monotone is None:
        return
    c = state.counts[0]
    changed = np.empty(c.n_nodes, np.int64)
    n_changed = _tighten_contiguous(state, parent, params, units, monotone, cells.categorical, changed)
    for k in range(n_changed):
        node = changed[k]
        record = state.nodes[node]
        if record.feature < 0 or record.slot < 0:  # not scanned yet, or no valid split: not open
            continue
        _keep_split(state, node, find_best_split(state.pool[record.slot], cells,
                                                 _candidates_of(state, node, np.int64(0), choices),
                                                 _node_sums(state, node, monotone), units, params, scan_scratch))
        if record.feature < 0:
            for j in range(c.n_open):
                if state.open[j] == node:
                    c.n_open -= 1
                    state.open[j] = state.open[c.n_open]
                    break
            _release_slot(state, node)


@njit(cache=True, nogil=True)
def start_tree(state, g_root, h_root, n_root):
    """Make ``state`` the root of a new tree with the given fixed-point sums and rows."""
    c = state.counts[0]
    c.n_nodes, c.n_leaves, c.n_open, c.n_pending, c.phase = 1, 1, 0, 0, _START
    c.n_free = state.free.shape[0]
    for k in range(c.n_free):
        state.free[k] = c.n_free - 1 - k  # a stack: slot 0 is taken first
    _new_node(state.nodes, np.int64(0), g_root, h_root, np.int64(0), np.int64(-1))  # no literals: see _keep_split
    root = state.nodes[0]
    root.n_rows, root.start, root.end = n_root, 0, n_root
    state.bounds[0, 0], state.bounds[0, 1] = -np.inf, np.inf
    state.groups[0, :] = ~np.uint64(0)  # every group: a feature in none is never a candidate


@njit(cache=True, nogil=True)
def _new_node(nodes, node, g, h, depth, parent):
    """A node with sums ``(g, h)`` at ``depth`` under ``parent``, no split and no slot yet."""
    record = nodes[node]
    record.feature, record.bin, record.missing_left, record.gain, record.left = -1, 0, False, 0.0, -1
    record.gl, record.hl, record.g, record.h, record.depth, record.slot = 0, 0, g, h, depth, -1
    record.parent = parent


@njit(cache=True, nogil=True)
def _take_slot(state):
    c = state.counts[0]
    c.n_free -= 1
    return state.free[c.n_free]


@njit(cache=True, nogil=True)
def _release_slot(state, node):
    """Give the histogram slot of ``node`` back."""
    record = state.nodes[node]
    if record.slot >= 0:
        c = state.counts[0]
        state.free[c.n_free] = record.slot
        c.n_free += 1
        record.slot = -1


@njit(cache=True, nogil=True)
def _keep_split(state, node, split):
    """Record the best split of ``node`` (its left bins: a categorical split).

    Callers pass node ids as int64 (``np.int64(0)``, not ``0``): a literal argument makes numba
    compile a function once more, for the literal's own type."""
    record = state.nodes[node]
    record.feature, record.bin, record.missing_left = split.feature, split.bin, split.missing_left
    record.gain, record.gl, record.hl = split.gain, split.gl, split.hl
    for w in range(4):
        state.left_sets[node, w] = split.left_set[w]


@njit(cache=True, nogil=True)
def _open_or_release(state, node):
    """Keep ``node`` open when it has a valid split; else free its histogram."""
    c = state.counts[0]
    if state.nodes[node].feature >= 0:
        state.open[c.n_open] = node
        c.n_open += 1
    else:
        _release_slot(state, node)


@njit(cache=True, nogil=True)
def _pop_first_open(state, depthwise):
    """Remove and return the open node to split next."""
    c = state.counts[0]
    k_best = 0
    for k in range(1, c.n_open):
        if _comes_first(state.nodes, state.open[k], state.open[k_best], depthwise):
            k_best = k
    node = state.open[k_best]
    c.n_open -= 1
    state.open[k_best] = state.open[c.n_open]
    return node


@njit(cache=True, nogil=True)
def _choose(state, cells, choices, limits, params, units, scan_scratch):
    """Move the next split (leaf-wise), or every split of the shallowest open level the leaf
    budget allows (depth-wise), to ``pending``, with a histogram slot for one child unless no
    child can be split after it, and create the children. Returns how many, 0 when the tree is
    complete, -1 when the state lacks slots or nodes for them (``counts.need_*`` say how many;
    nothing changed)."""
    c = state.counts[0]
    nodes = state.nodes
    if c.n_open == 0 or c.n_leaves >= limits.max_leaves:
        return 0
    k = 1
    if limits.depthwise:
        level = nodes[state.open[0]].depth
        for j in range(1, c.n_open):
            level = min(level, nodes[state.open[j]].depth)
        k = 0
        for j in range(c.n_open):
            k += nodes[state.open[j]].depth == level
        k = min(k, limits.max_leaves - c.n_leaves)
    if c.n_free < k or c.n_nodes + 2 * k > nodes.shape[0]:
        c.need_slots = state.free.shape[0] - c.n_free + k
        c.need_nodes = c.n_nodes + 2 * k
        return -1
    for j in range(k):
        if c.n_open == 0:  # the intermediate method closed a leaf of the level
            k = j
            break
        parent = _pop_first_open(state, limits.depthwise)
        c.n_leaves += 1
        p = nodes[parent]
        gr, hr = p.g - p.gl, p.h - p.hl
        wanted = _wants_histogram(c.n_leaves < limits.max_leaves, p.depth + 1, p.hl, hr, units.h, limits)
        a = c.n_nodes
        c.n_nodes += 2
        p.left = a
        _new_node(nodes, a, p.gl, p.hl, p.depth + 1, parent)
        _new_node(nodes, a + 1, gr, hr, p.depth + 1, parent)
        _inherit(state, parent, a, params, units, cells.monotone, limits.intermediate, choices.interactions)
        if limits.intermediate:
            _rescan_narrowed(state, parent, cells.monotone, cells, choices, params, units, scan_scratch)
        state.pending[j, 0] = parent
        state.pending[j, 1] = _take_slot(state) if wanted else -1
        state.pending[j, 2] = 0
        state.pending[j, 3] = -1
    c.n_pending = k
    return k


@njit(cache=True, nogil=True)
def partition_by_split(rows, start, end, feature, bin_threshold, missing_left, left_set, n_bins, categorical):
    """Partition ``rows.rows[start:end]`` (a ``LocalRows``) by a split of ``feature``: its left
    bins ``left_set`` (uint64 words) when it splits a categorical feature (``categorical``:
    ``Cells.categorical``), else bins ``<= bin_threshold`` and, when ``missing_left``, missing
    values. Returns the rows sent left."""
    n_threads = rows.thread_hists.shape[0]
    if categorical is not None:
        if categorical[feature]:
            return partition_node(rows.rows, start, end, rows.columns, feature, left_set, rows.scratch, n_threads)
    return partition_node(rows.rows, start, end, rows.columns, feature,
                          ThresholdRule(bin_threshold, missing_left, n_bins[feature]), rows.scratch, n_threads)


@njit(cache=True, nogil=True)
def _partition_split(state, parent, rows, n_bins, categorical):
    """Partition the rows of ``parent`` by its split (:func:`partition_by_split`)."""
    p = state.nodes[parent]
    return partition_by_split(rows, p.start, p.end, p.feature, p.bin, p.missing_left, state.left_sets[parent], n_bins,
                              categorical)


@njit(cache=True, nogil=True)
def _split_rows(state, rows, cells):
    """Do the pending splits on local rows: partition each parent's rows, and build the smaller
    child's histogram into the split's slot."""
    c = state.counts[0]
    nodes = state.nodes
    for j in range(c.n_pending):
        p = nodes[state.pending[j, 0]]
        n_left = _partition_split(state, state.pending[j, 0], rows, cells.n_bins, cells.categorical)
        state.pending[j, 2] = n_left
        slot = state.pending[j, 1]
        if slot < 0:
            continue
        a = np.int64(p.left)
        n_right = p.n_rows - n_left
        small, start, end = (a, p.start, p.start + n_left) if n_left <= n_right else (a + 1, p.start + n_left, p.end)
        state.pending[j, 3] = small
        if not _built_in_scans(rows, end - start):
            node_histogram(rows.rows, start, end, rows.histogram, rows.gh, nodes[small].g, nodes[small].h,
                           state.pool[slot], rows.thread_hists, rows.column_blocks)


@njit(cache=True, nogil=True)
def _built_in_scans(rows, n_rows):
    """Whether a smaller child of ``n_rows`` rows has its histogram built by the parallel loop
    that scans it (``LocalRows.scan_build_rows``; :func:`_finish`) instead of in
    :func:`_split_rows`."""
    return rows is not None and n_rows < rows.scan_build_rows


@njit(cache=True, nogil=True)
def _finish(state, rows, cells, choices, limits, params, units, scan_scratch):
    """Complete the pending splits whose rows are split: place the children's rows, derive the
    larger child's histogram by subtraction and scan both (:func:`_open_scanned` then opens
    those with a valid split); ``rows``: this process's rows, which build a small child's
    histogram in the scans' loop (:func:`_built_in_scans`), or None."""
    c = state.counts[0]
    nodes = state.nodes
    for j in range(c.n_pending):
        parent, slot, n_left, small = state.pending[j, 0], state.pending[j, 1], state.pending[j, 2], state.pending[j, 3]
        p = nodes[parent]
        a = np.int64(p.left)
        left, right = nodes[a], nodes[a + 1]
        left.start, left.end, left.n_rows = p.start, p.start + n_left, n_left
        right.start, right.end, right.n_rows = p.start + n_left, p.end, p.n_rows - n_left
        if slot < 0:
            _release_slot(state, parent)
            continue
        large = 2 * a + 1 - small
        nodes[small].slot, nodes[large].slot, p.slot = slot, p.slot, -1
        s, g = nodes[small], nodes[large]
        scan_small = can_split(s.depth, s.n_rows, s.h, units.h, limits)
        scan_large = can_split(g.depth, g.n_rows, g.h, units.h, limits)
        parent_hist, small_hist = state.pool[g.slot], state.pool[s.slot]
        small_candidates, small_sums = _candidates_of(state, small, np.int64(0), choices), _node_sums(state, small,
                                                                                                     cells.monotone)
        large_candidates, large_sums = _candidates_of(state, large, np.int64(1), choices), _node_sums(state, large,
                                                                                                     cells.monotone)
        split_small, split_large = subtract_and_find_splits(
            parent_hist, small_hist, cells, choices.built, small_candidates, small_sums, scan_small, large_candidates,
            large_sums, scan_large, units, params, scan_scratch, rows, _built_in_scans(rows, s.n_rows), s.start, s.end)
        if scan_small:
            _keep_split(state, small, split_small)
        if scan_large:
            _keep_split(state, large, split_large)


@njit(cache=True, nogil=True)
def _export_split(state, row, node):
    """Write the split of ``node`` into row ``row`` of ``state.splits`` (``records.SPLIT_ROW``)."""
    r, p = state.splits[row], state.nodes[node]
    r[0], r[1], r[2], r[3], r[4] = node, p.left, p.feature, p.bin, p.missing_left
    r[5:6].view(np.float64)[0] = p.gain
    r[6], r[7], r[8], r[9] = p.gl, p.hl, p.g, p.h
    for w in range(4):
        r[10 + w] = np.int64(state.left_sets[node, w])


@njit(cache=True, nogil=True)
def _export_pending(state):
    """The pending splits into ``state.splits``, a row for each parent, for a row source elsewhere."""
    c = state.counts[0]
    for j in range(c.n_pending):
        _export_split(state, j, state.pending[j, 0])
    c.n_splits = c.n_pending


@njit(cache=True, nogil=True)
def _list_scanned(state):
    """List the nodes just scanned in column 0 of ``state.splits`` (``counts.n_splits`` rows):
    the root, or the children of the pending splits that built a histogram."""
    c = state.counts[0]
    if c.n_nodes == 1:
        state.splits[0, 0] = 0
        c.n_splits = 1
        return
    c.n_splits = 0
    for j in range(c.n_pending):
        if state.pending[j, 1] >= 0:
            a = np.int64(state.nodes[state.pending[j, 0]].left)
            state.splits[c.n_splits, 0] = a
            state.splits[c.n_splits + 1, 0] = a + 1
            c.n_splits += 2


@njit(cache=True, nogil=True)
def _export_scanned(state):
    """The splits found in the nodes just scanned (:func:`_list_scanned`) into their rows of
    ``state.splits``."""
    for row in range(state.counts[0].n_splits):
        _export_split(state, row, state.splits[row, 0])


@njit(cache=True, nogil=True)
def _import_agreed(state):
    """Replace the splits of the nodes of ``state.splits`` by the rows' (the agreed ones)."""
    for row in range(state.counts[0].n_splits):
        r = state.splits[row]
        p = state.nodes[r[0]]
        p.feature, p.bin, p.missing_left = r[2], r[3], r[4] != 0
        p.gain = r[5:6].view(np.float64)[0]
        p.gl, p.hl = r[6], r[7]
        for w in range(4):
            state.left_sets[r[0], w] = np.uint64(r[10 + w])


@njit(cache=True, nogil=True)
def _open_scanned(state):
    """Open the nodes just scanned (:func:`_list_scanned`) that have a valid split, free the
    others' histograms; the pending splits are then done."""
    c = state.counts[0]
    for row in range(c.n_splits):
        _open_or_release(state, state.splits[row, 0])
    c.n_splits = 0
    c.n_pending = 0


@njit(cache=True, nogil=True)
def grow_tree(state, rows, cells, choices, limits, params, units, scan_scratch):
    """Grow the tree of ``state`` (after :func:`start_tree`) as far as it can go.

    Parameters
    ----------
    state : GrowthState
        The tree so far; updated in place.
    rows : LocalRows or None
        The rows, when this process holds them (their row list is partitioned in place, node by
        node); None when the caller has them split and their histograms built elsewhere.
    cells : Cells
        The histogram cells.
    choices : SplitChoices
        The features whose histograms are built and what each node may split on.
    limits : GrowthLimits
        In the tree's scale (``min_hess_to_split``).
    params : SplitParams
        In the tree's scale (``_kernels.split.in_units``).
    units : Units
        The tree's scale: its fixed-point units, in which the node records' gains and output
        bounds are kept too.
    scan_scratch : ndarray of float64
        ``_kernels.split.split_scratch`` of the bin counts.

    Returns
    -------
    int
        :data:`DONE`, :data:`NEED_ROOT`, :data:`NEED_SPLITS`, :data:`NEED_SPACE` or
        :data:`NEED_AGREEMENT`.
    """
    c = state.counts[0]
    nodes = state.nodes
    while True:
        if c.phase == _START:
            root = nodes[0]
            if not (limits.max_leaves > 1 and can_split(root.depth, root.n_rows, root.h, units.h, limits)):
                c.phase = _END
                continue
            root.slot = _take_slot(state)
            c.phase = _SCAN_ROOT
            if rows is None:
                return NEED_ROOT
            node_histogram(rows.rows, root.start, root.end, rows.histogram, rows.gh, root.g, root.h,
                           state.pool[root.slot], rows.thread_hists, rows.column_blocks)
        elif c.phase == _SCAN_ROOT:
            root = nodes[0]
            candidates = _candidates_of(state, np.int64(0), np.int64(0), choices)
            if choices.partial:  # the root's scan reads the candidates, not the built features
                candidates = Candidates(candidates.features & choices.built, candidates.thresholds)
            _keep_split(state, np.int64(0), find_best_split(state.pool[root.slot], cells, candidates,
                                                            _node_sums(state, np.int64(0), cells.monotone), units,
                                                            params, scan_scratch))
            _list_scanned(state)
            c.phase = _OPEN
            if choices.partial:
                _export_scanned(state)
                return NEED_AGREEMENT
        elif c.phase == _CHOOSE:
            chosen = _choose(state, cells, choices, limits, params, units, scan_scratch)
            if chosen < 0:
                return NEED_SPACE
            if chosen == 0:
                c.phase = _END
                continue
            c.phase = _FINISH
            if rows is None:
                _export_pending(state)
                return NEED_SPLITS
            _split_rows(state, rows, cells)
        elif c.phase == _FINISH:
            _finish(state, rows, cells, choices, limits, params, units, scan_scratch)
            _list_scanned(state)
            c.phase = _OPEN
            if choices.partial:
                _export_scanned(state)
                return NEED_AGREEMENT
        elif c.phase == _OPEN:
            if choices.partial:
                _import_agreed(state)
            _open_scanned(state)
            c.phase = _CHOOSE
        else:
            for node in range(c.n_nodes):  # leaves scanned but not split: no split to keep
                record = nodes[node]
                if record.left < 0:
                    record.feature, record.bin, record.missing_left, record.gain = -1, 0, False, 0.0
                    state.left_sets[node, :] = 0
            return DONE


@njit(cache=True, nogil=True)
def pack_tree(nodes, thresholds, threshold_offsets, units, params):
    """The arrays of a grown tree from its node records ``nodes`` (the state's first nodes), in
    one call: a tree's dozen small arrays made by numpy calls cost more than the growth of a
    small tree.

    Parameters
    ----------
    nodes : ndarray of NODE records
        The tree's nodes.
    thresholds, threshold_offsets : ndarray
        The bin mapper's threshold table: bin ``b`` of feature ``f`` splits at
        ``thresholds[threshold_offsets[f] + b]``.
    units : Units
        The tree's scale.
    params : SplitParams
        As the tree was grown with (in its scale): ``lambda_l1``, ``lambda_l2`` of the Newton
        values, ``sign_leaves`` for the scale of the gains.

    Returns
    -------
    tuple of ndarray
        ``feature``, ``threshold``, ``bin_threshold``, ``missing_left``, ``left``, ``right``,
        ``value`` (Newton values), ``gain``, ``hessian``, ``count`` (as :class:`smartboost.tree.Tree`
        holds them: values, out of the tree's scale) and the node ids of the leaves, increasing.
    """
    n = nodes.shape[0]
    feature = np.empty(n, np.int32)
    threshold = np.zeros(n, np.float64)
    bin_threshold = np.empty(n, np.int32)
    missing_left = np.empty(n, np.bool_)
    left = np.empty(n, np.int32)
    right = np.empty(n, np.int32)
    value = np.empty(n, np.float64)
    gain = np.empty(n, np.float64)
    hessian = np.empty(n, np.float64)
    g_sum = np.empty(n, np.int64)
    h_sum = np.empty(n, np.int64)
    count = np.empty(n, np.int64)
    gain_shift = gain_exponent(params, units)
    n_leaves = 0
    for i in range(n):
        record = nodes[i]
        feature[i], bin_threshold[i], missing_left[i] = record.feature, record.bin, record.missing_left
        left[i], count[i] = record.left, record.n_rows
        gain[i] = math.ldexp(record.gain, gain_shift)
        hessian[i] = math.ldexp(record.h * units.h, units.h_exp)
        g_sum[i], h_sum[i] = record.g, record.h
        if record.left >= 0:
            right[i] = record.left + 1
            threshold[i] = thresholds[threshold_offsets[record.feature] + record.bin]
        else:
            right[i] = -1
            n_leaves += 1
    leaf_values(g_sum, h_sum, units, params.lambda_l1, params.lambda_l2, value)
    leaves = np.empty(n_leaves, np.int64)
    k = 0
    for i in range(n):
        if left[i] < 0:
            leaves[k] = i
            k += 1
    return feature, threshold, bin_threshold, missing_left, left, right, value, gain, hessian, count, leaves
