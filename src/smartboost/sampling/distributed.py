"""Sampler decisions over rows spread over machines: the importance samplers' scale, and the
largest values (trimming).

A proportional sampler keeps row ``i`` with ``p_i = min(1, c a_i)``, where ``c`` solves
``sum_i min(1, c a_i) = s N`` over *every* row (docs/concepts/sampling.md). On one machine
:func:`~smartboost.sampling.scale.solve_scale` finds ``c`` by quickselect. Over several
machines, :func:`solve_scale_by_radix` finds the same ``c`` from sums that each machine computes
on its own rows, in three rounds of O(N) work and small messages:

1. each machine counts and sums its positive ``a_i`` by their float64 exponent (2,048
   buckets; for non-negative floats the bit pattern orders like the value). The threshold
   ``mu = 1/c`` lies in the highest bucket ``b`` whose lower bound ``L`` still gives an expected
   count ``#{a >= L} + sum_{a < L} a / L`` of at least ``s N``: rows in higher buckets are kept
   surely, rows in lower ones only add to the sum below;
2. the same inside bucket ``b``, by the next 12 bits of the pattern (4,096 buckets of relative
   width 2^-12);
3. the machines send the values of the chosen bucket (distinct values with their counts), and
   the quickselect of the one-machine solver finishes on them with the sure count and the sum
   below carried over.

The result equals the one-machine solution up to the rounding of sums taken in another order.

Trimming keeps the ``k`` largest values (``k`` given, or the fewest whose sum reaches a target):
:func:`kth_largest_by_radix` and :func:`count_top_for_sum_by_radix` walk the same buckets from
the largest values down, counting or summing, and finish with the one-machine kernels on the
values of the bucket where the walk stops. GOSS's top rows are found the same way;
:func:`top_and_rest_by_machine` then carries its draw of the other rows over the chunks that
span machines (:mod:`smartboost.sampling.chunks`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._kernels.draws import draw_top_and_rest
from .._kernels.records import DrawPieces
from .._kernels.scale import quickselect_scale
from .chunks import chunk_sizes, draw_chunks, draw_pieces, ends_inside, lone_piece, top_and_rest_chunks
from .topk import count_top_for_sum, kth_largest

__all__ = ["RADIX_LEVELS", "count_top_for_sum_by_radix", "kth_largest_by_radix", "solve_scale_by_radix",
           "top_and_rest_by_machine", "total_by_radix"]

RADIX_LEVELS = ((52, 11), (40, 12))
"""``(shift, bits)`` of the two bucketing rounds: the exponent (11 bits above the 52-bit
mantissa), then the mantissa's top 12 bits."""

BucketSums = Callable[[int, int, int, int], tuple[np.ndarray, np.ndarray]]
Members = Callable[[int, int], np.ndarray]


def solve_scale_by_radix(bucket_sums: BucketSums, members: Members, target: float, key: np.uint64) -> float:
    """The scale ``c`` with ``sum_i min(1, c a_i) = target`` over rows held by many machines.

    Parameters
    ----------
    bucket_sums : callable
        ``bucket_sums(prefix, prefix_shift, shift, n_buckets)`` returns ``(counts, sums)`` over
        every machine: :func:`~smartboost._kernels.scale.radix_buckets` of each machine's
        importances, added up.
    members : callable
        ``members(prefix, prefix_shift)`` returns every machine's positive importances whose bit
        pattern shifted right by ``prefix_shift`` equals ``prefix``, concatenated.
    target : float
        Expected sample size ``s N``.
    key : uint64
        Random stream of the final quickselect's pivots.

    Returns
    -------
    float
        ``c``; ``inf`` when ``target`` reaches the number of positive importances, 0 when there
        are none (as :func:`~smartboost.sampling.scale.solve_scale`).
    """
    sure, below = 0, 0.0
    prefix, prefix_shift = 0, 64
    for level, (shift, bits) in enumerate(RADIX_LEVELS):
        n_buckets = 1 << bits
        counts, sums = bucket_sums(prefix, prefix_shift, shift, n_buckets)
        if level == 0:
            n_positive = int(counts.sum())
            if n_positive == 0:
                return 0.0
            if target >= n_positive:
                return np.inf
        base = np.uint64(prefix) << np.uint64(prefix_shift) if prefix_shift < 64 else np.uint64(0)
        lower = (base | (np.arange(n_buckets, dtype=np.uint64) << np.uint64(shift))).view(np.float64)
        at_or_above = sure + np.cumsum(counts[::-1])[::-1]
        sum_below = below + np.concatenate([[0.0], np.cumsum(sums)[:-1]])
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.where(lower > 0.0, at_or_above + sum_below / lower, np.inf)
        b = int(np.flatnonzero(expected >= target)[-1])
        sure = int(at_or_above[b] - counts[b])
        below = float(sum_below[b])
        prefix, prefix_shift = (prefix << bits) | b, shift
    values = np.ascontiguousarray(members(prefix, prefix_shift), dtype=np.float64)
    return float(quickselect_scale(values, target, sure, below, key))


def total_by_radix(bucket_sums: BucketSums) -> tuple[int, float]:
    """Count and sum of every machine's positive values."""
    shift, bits = RADIX_LEVELS[0]
    counts, sums = bucket_sums(0, 64, shift, 1 << bits)
    return int(counts.sum()), float(sums.sum())


def _descend(bucket_sums: BucketSums, wanted: float, by_sum: bool) -> tuple[tuple[int, int] | None, int, float]:
    """Walk the buckets from the largest values down to the one where the running count (or
    sum) of the values reaches ``wanted``.

    Returns ``(bucket, count_above, sum_above)``: the bucket's ``(prefix, prefix_shift)`` and
    the count and sum of the values in higher buckets; ``bucket`` is None when every positive
    value together falls short (then the totals are those of every positive value).
    """
    count_above, sum_above = 0, 0.0
    prefix, prefix_shift = 0, 64
    for level, (shift, bits) in enumerate(RADIX_LEVELS):
        counts, sums = bucket_sums(prefix, prefix_shift, shift, 1 << bits)
        column = sums if by_sum else counts
        through = (sum_above if by_sum else count_above) + np.cumsum(column[::-1])[::-1]
        if level == 0 and not through[0] >= wanted:
            return None, int(counts.sum()), float(sums.sum())
        hits = np.flatnonzero(through >= wanted)
        b = int(hits[-1]) if hits.size else 0  # rounding of a sum can leave none at the second level
        count_above += int(counts[b + 1:].sum())
        sum_above += float(sums[b + 1:].sum())
        prefix, prefix_shift = (prefix << bits) | b, shift
    return (prefix, prefix_shift), count_above, sum_above


def kth_largest_by_radix(bucket_sums: BucketSums, members: Members, k: int, key: np.uint64) -> tuple[float, int]:
    """The ``k``-th largest of every machine's non-negative values, and how many exceed it (as
    :func:`~smartboost.sampling.topk.kth_largest`); ``k >= 1``."""
    bucket, count_above, _ = _descend(bucket_sums, k, by_sum=False)
    if bucket is None:  # the k-th largest is a zero
        return 0.0, count_above
    values = np.ascontiguousarray(members(*bucket), dtype=np.float64)
    threshold, greater = kth_largest(values, k - count_above, key)
    return float(threshold), count_above + int(greater)


def count_top_for_sum_by_radix(bucket_sums: BucketSums, members: Members, target_sum: float,
                               key: np.uint64) -> int:
    """Fewest of the largest values of every machine whose sum reaches ``target_sum`` (as
    :func:`~smartboost.sampling.topk.count_top_for_sum`)."""
    bucket, count_above, sum_above = _descend(bucket_sums, target_sum, by_sum=True)
    if bucket is None:
        return count_above
    values = np.ascontiguousarray(members(*bucket), dtype=np.float64)
    return count_above + int(count_top_for_sum(values, target_sum - sum_above, key))


def top_and_rest_by_machine(layouts: list[tuple], counts: list[np.ndarray], codes: list[np.ndarray], ties: int,
                            k_rest: int, key: np.uint64, total_rows: int) -> list[DrawPieces]:
    """GOSS's draw over rows held by many machines, the draw of one machine holding every row:
    each machine's pieces with the draw's state where each starts.

    A chunk's counts are those of its pieces added up. Where a piece ends inside its chunk, the
    draw runs on its codes (what the draw reads: top or not, and the ids) for the state the
    next piece, on another machine, starts from.

    Parameters
    ----------
    layouts : list of tuple
        Each machine's pieces (:func:`~smartboost.sampling.chunks.chunk_layout`).
    counts : list of ndarray
        Each machine's values above the threshold and equal to it, per piece, shape (2, n_pieces).
    codes : list of ndarray of int8
        Each machine's rows of its pieces that end inside their chunk
        (:func:`~smartboost.sampling.chunks.ends_inside`), in order: 2 above the threshold, 1
        equal to it, 0 below.
    ties : int
        Rows equal to the threshold taken as top rows (the first, by row id).
    k_rest : int
        Rows drawn from the others.
    key : uint64
        The iteration's random stream.
    total_rows : int
        Every machine's rows together.

    Returns
    -------
    list of DrawPieces
        For :func:`~smartboost._kernels.draws.draw_top_and_rest` on each machine.
    """
    chunks, size = draw_chunks(total_rows)
    chunk_counts = np.zeros((2, chunks), np.int64)
    for layout, c in zip(layouts, counts):
        for row in range(2):
            np.add.at(chunk_counts[row], layout[3], c[row])
    chunk_ties, chunk_top, chunk_rest = top_and_rest_chunks(chunk_counts, ties, k_rest, key, total_rows)
    chunk_left = chunk_sizes(total_rows) - chunk_top
    states = [np.zeros((3, layout[0].shape[0]), np.int64) for layout in layouts]  # needed, left, ties at the start
    kept = [c[0].copy() for c in counts]  # rows above the threshold, then the ties and rest drawn
    code_at = []  # where each piece's codes start in its machine's codes
    for layout in layouts:
        inside = ends_inside(layout, total_rows)
        code_at.append(np.cumsum(np.where(inside, layout[2], 0)) - np.where(inside, layout[2], 0))
    owner = np.concatenate([np.full(layout[0].shape[0], m) for m, layout in enumerate(layouts)])
    index = np.concatenate([np.arange(layout[0].shape[0]) for layout in layouts])
    state = np.zeros(3, np.int64)
    for j in np.argsort(np.concatenate([layout[1] for layout in layouts]), kind="stable"):
        m, p = owner[j], index[j]
        first, length, c = (int(layouts[m][q][p]) for q in (1, 2, 3))
        if first == c * size:
            state = np.array([chunk_rest[c], chunk_left[c], chunk_ties[c]])
        states[m][:, p] = state
        if first + length < min((c + 1) * size, total_rows):
            piece = lone_piece(first, length, *state)
            values = codes[m][code_at[m][p]:code_at[m][p] + length].astype(np.float64)
            scratch = np.empty(length, np.uint32)
            draw_top_and_rest(values, 1.0, piece, key, None, 1.0, scratch, scratch, np.empty(length))
            end = np.array([piece.needed[0], piece.left[0], piece.ties[0]])
            kept[m][p] += state[0] - end[0] + state[2] - end[2]
            state = end
        else:
            kept[m][p] += state[0] + state[2]
    return [draw_pieces(layout, k, *s) for layout, k, s in zip(layouts, kept, states)]
