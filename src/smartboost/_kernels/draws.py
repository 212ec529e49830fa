"""Row draws: which rows an iteration's sample keeps.

Every draw writes the sampled row ids in increasing order into ``rows`` and the others into
``rest`` (both branch-free, in the same pass) and returns the number sampled, ``n``: the tree
grows on ``rows[:n]`` and the new tree is then added to ``rest[:n_rows - n]`` by traversal.

Each row's draw is :func:`~smartboost._kernels.random.uniform` of its id. The exact-count
draws run over fixed chunks of rows in parallel; how many rows each chunk draws is decided
first, in Python (:mod:`smartboost.sampling.chunks`), and so is where the draw stands where a
machine's rows start or end inside a chunk (:class:`~smartboost._kernels.records.DrawPieces`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .random import uniform

COMPACT_CHUNKS = 64
"""Fixed row chunks of the parallel passes (compaction, bracket counts, the exact-count draws
of :mod:`smartboost.sampling.chunks`): their results do not depend on the thread count."""


BRANCH_FREE_SHARE = 0.04
"""Kept share of the rows from which (up to one minus it) :func:`compact` writes without
branches: the branch mispredicts about once per row of the rarer kind, the branch-free writes
cost the same whatever the share, so they win except where nearly every row is of one kind."""


@njit(cache=True, nogil=True, parallel=True)
def compact(keep, rows, rest):
    """Split ``range(n)`` by the 0/1 array ``keep`` into ``rows`` (kept) and ``rest``, in order.

    Parallel over fixed chunks (a count pass, then a write pass at the chunks' offsets): the
    result does not depend on the thread count. Where the kept share is far from 0 and 1
    (:data:`BRANCH_FREE_SHARE`), each row is written to both lists and only its own cursor
    advances, as long as both cursors are inside the chunk's regions: a write past a region's
    end would land on the next chunk's first slot while that chunk fills it. The chunk's rows
    after either region fills are all of the other kind. Returns the number kept.
    """
    n = keep.shape[0]
    size = (n + COMPACT_CHUNKS - 1) // COMPACT_CHUNKS
    counts = np.zeros(COMPACT_CHUNKS + 1, np.int64)
    # unsigned indices: numba's negative-index wrap would keep the count pass scalar
    for c in prange(COMPACT_CHUNKS):
        total = 0
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            total += keep[i]
        counts[c + 1] = total
    for c in range(COMPACT_CHUNKS):
        counts[c + 1] += counts[c]
    share = counts[COMPACT_CHUNKS] / max(n, 1)
    branch_free = BRANCH_FREE_SHARE <= share <= 1.0 - BRANCH_FREE_SHARE
    one = np.uint64(1)
    for c in prange(COMPACT_CHUNKS):
        i = np.uint64(min(n, c * size))
        end = np.uint64(min(n, (c + 1) * size))
        k, k_end = np.uint64(counts[c]), np.uint64(counts[c + 1])
        r, r_end = i - k, end - k_end
        if branch_free:
            while k < k_end and r < r_end:
                rows[k] = i
                rest[r] = i
                kept = np.uint64(keep[i])
                k += kept
                r += one - kept
                i += one
        for j in range(i, end):
            if keep[j]:
                rows[k] = j
                k += one
            else:
                rest[r] = j
                r += one
    return counts[COMPACT_CHUNKS]


@njit(cache=True, nogil=True, parallel=True)
def draw_bernoulli(key, rate, rows, rest, keep, row_ids):
    """Keep each row independently with probability ``rate``; returns the count kept.

    ``keep`` (uint8, one per row) is scratch. Row ``i`` draws the number ``row_ids[i]`` of the
    stream (its id among every machine's rows), or ``i`` when ``row_ids`` is None.
    """
    for i in prange(keep.shape[0]):
        keep[i] = uniform(key, i if row_ids is None else row_ids[i]) < rate
    return compact(keep, rows, rest)


@njit(cache=True, nogil=True)
def draw_exact(key, k, rows, rest):
    """Knuth's selection sampling: exactly ``k`` rows without replacement, in one ordered pass.

    Each row is kept with probability (still needed) / (still left), which draws exactly ``k``
    rows with every subset equally likely. Returns ``k``.
    """
    n_rows = rows.shape[0]
    needed = k
    n = 0
    for i in range(n_rows):
        keep = uniform(key, i) * (n_rows - i) < needed
        rows[n] = i
        rest[i - n] = i
        n += keep
        needed -= keep
    return n


@njit(cache=True, nogil=True)
def _total(counts):
    """The sum of ``counts``, in a loop of its own: a ``sum()`` after a parallel loop that
    writes the array is fused into it, which numba's reduction analysis rejects."""
    total = 0
    for c in counts:
        total += c
    return total


_DRAW_BLOCK = 512
"""Rows whose random numbers the exact-count draws (:func:`draw_exact_parallel`,
:func:`draw_top_and_rest`) draw in one vectorised loop (:func:`_fill_uniform`) before they select
among them: the selection carries the counts from row to row, the hash of a row does not, and
inside the selection loop it kept the hash scalar."""


@njit(cache=True, nogil=True)
def _fill_uniform(out, key, first, n):
    """``out[j] = uniform(key, first + j)`` for ``j < n`` (no dependency between them: the loop
    vectorises)."""
    for j in range(n):
        out[j] = uniform(key, first + j)


@njit(cache=True, nogil=True, parallel=True)
def draw_exact_parallel(key, pieces, rows, rest):
    """:func:`draw_exact` over every machine's rows, in parallel: selection sampling inside
    each fixed chunk of rows (:func:`~smartboost.sampling.chunks.exact_pieces`), run here over
    this machine's ``pieces`` of the chunks (a ``DrawPieces``, left at their end states), each
    at its offset. Row ``i`` draws the number of its id among every machine's rows. Returns
    the count drawn."""
    n_pieces = pieces.start.shape[0]
    kept = np.zeros(n_pieces, np.int64)
    # the end states are written through these: a parallel loop loses writes through a record's field
    needed_at, left_at = pieces.needed, pieces.left
    for p in prange(n_pieces):
        start = pieces.start[p]
        first = pieces.first[p]
        # float counts (exact below 2**53): the comparison converts neither; unsigned indices:
        # numba's negative-index wrap costs a compare and a select per access
        still = np.float64(needed_at[p])
        candidates = np.float64(left_at[p])
        k = np.uint64(pieces.offset[p])
        draws = np.empty(_DRAW_BLOCK)
        for block in range(start, start + pieces.length[p], _DRAW_BLOCK):
            n_block = min(_DRAW_BLOCK, start + pieces.length[p] - block)
            _fill_uniform(draws, key, first + block - start, n_block)
            for j in range(np.uint64(n_block)):
                i = np.uint64(block) + j
                # branches, not draw_exact's double writes: those would spill into the next piece
                # (and the branch takes the count still needed out of the next row's comparison,
                # which the branch-free form would keep in its dependency chain)
                if draws[j] * candidates < still:
                    rows[k] = i
                    k += np.uint64(1)
                    still -= 1.0
                else:
                    rest[i - k] = i
                candidates -= 1.0
        needed_at[p] = np.int64(still)
        left_at[p] = np.int64(candidates)
        kept[p] = np.int64(k) - pieces.offset[p]
    return _total(kept)


@njit(cache=True, nogil=True, parallel=True)
def draw_proportional(key, importance, scale, weight, rows, rest, sample_weight, keep, row_ids):
    """Keep row ``i`` with probability ``p_i = min(1, scale * importance[i])``.

    Writes ``sample_weight[i] = weight[i] / p_i`` (inverse-probability weights; read only for
    kept rows; ``weight`` None: ones, not read). Rows of zero importance are never kept.
    ``keep`` (uint8) is scratch; row ``i`` draws the number ``row_ids[i]`` of the stream (``i``
    when None). Returns the count kept.
    """
    for i in prange(importance.shape[0]):
        p = min(1.0, scale * importance[i]) if importance[i] > 0.0 else 0.0
        keep[i] = uniform(key, i if row_ids is None else row_ids[i]) < p
        sample_weight[i] = (1.0 if weight is None else weight[i]) / p
    return compact(keep, rows, rest)


@njit(cache=True, nogil=True)
def select_above(values, threshold, segment_ends, segment_ties, rows, rest):
    """Ids of the ``values`` above ``threshold`` and, in each row segment, its first
    ``segment_ties[s]`` rows equal to it (segment ``s`` ends before row ``segment_ends[s]``),
    in increasing order. Returns their count; ``rows[:count]`` holds them.
    """
    n = 0
    start = 0
    for s in range(segment_ends.shape[0]):
        ties = segment_ties[s]
        for i in range(start, segment_ends[s]):
            tie = values[i] == threshold
            take = (values[i] > threshold) | (tie & (ties > 0))
            ties -= take & tie
            rows[n] = i
            rest[i - n] = i
            n += take
        start = segment_ends[s]
    return n


@njit(cache=True, nogil=True, parallel=True)
def draw_top_and_rest(values, threshold, pieces, key, weight, rest_weight, rows, rest, sample_weight):
    """GOSS's draw: the largest ``values`` surely, a uniform draw of the others, in parallel.

    The top rows are those above ``threshold`` and the first rows equal to it (ties go to the
    lowest row ids); in each fixed chunk of
    :func:`~smartboost.sampling.chunks.draw_chunks`, a number of its equal rows are top, and
    a number of its other rows are drawn by selection sampling
    (:func:`~smartboost.sampling.chunks.top_and_rest_pieces`). The draw runs here over this
    machine's ``pieces`` of the chunks (a ``DrawPieces``, left at their end states), each at
    its offset; row ``i`` draws the number of its id among every machine's rows.
    ``sample_weight[i]`` receives ``weight[i]`` (top) or ``weight[i] * rest_weight`` (the
    others; ``weight`` None: ones, not read). Returns the sample size.
    """
    n_pieces = pieces.start.shape[0]
    kept = np.zeros(n_pieces, np.int64)
    ties_at, needed_at, left_at = pieces.ties, pieces.needed, pieces.left  # see draw_exact_parallel
    for p in prange(n_pieces):
        start = pieces.start[p]
        first = pieces.first[p]
        ties = ties_at[p]
        # float counts (exact below 2**53): the comparison converts neither; unsigned indices:
        # numba's negative-index wrap cost a third of the loop's time
        needed = np.float64(needed_at[p])
        left = np.float64(left_at[p])
        k = np.uint64(pieces.offset[p])
        draws = np.empty(_DRAW_BLOCK)
        for block in range(start, start + pieces.length[p], _DRAW_BLOCK):
            n_block = min(_DRAW_BLOCK, start + pieces.length[p] - block)
            _fill_uniform(draws, key + np.uint64(1), first + block - start, n_block)
            for j in range(np.uint64(n_block)):
                i = np.uint64(block) + j
                w = 1.0 if weight is None else weight[i]
                # branches, as in draw_exact_parallel: a tenth of the rows are kept, and the
                # branch-free form put the count still needed into every row's dependency chain
                # (twice the time of this loop on 1M rows)
                v = values[i]
                if v >= threshold:
                    tie = v == threshold
                    if not tie or ties > 0:
                        ties -= tie
                        sample_weight[i] = w
                        rows[k] = i
                        k += np.uint64(1)
                        continue
                sample_weight[i] = w * rest_weight
                if draws[j] * left < needed:
                    needed -= 1.0
                    rows[k] = i
                    k += np.uint64(1)
                else:
                    rest[i - k] = i
                left -= 1.0
        ties_at[p] = ties
        needed_at[p] = np.int64(needed)
        left_at[p] = np.int64(left)
        kept[p] = np.int64(k) - pieces.offset[p]
    return _total(kept)
