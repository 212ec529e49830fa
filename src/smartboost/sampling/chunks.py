"""Fixed row chunks of the exact-count draws, and how many rows each chunk draws.

The exact-count draws (uniform's selection sampling, GOSS's top rows and uniform rest:
:mod:`smartboost._kernels.draws`) run over fixed chunks of rows in parallel. How many rows each
chunk draws is decided here first, with numpy's multivariate hypergeometric draw, so that every
``k``-subset of the rows stays equally likely.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import _COMPACT_CHUNKS
from .._kernels.topk import _chunk_top_counts

_DRAW_CHUNK_ROWS = 4096
"""Rows per chunk of the exact-count draws below 64 chunks (:func:`draw_chunks`)."""


def draw_chunks(n):
    """Fixed row chunks of the exact-count draws
    (:func:`~smartboost._kernels.draws.draw_exact_parallel`,
    :func:`~smartboost._kernels.draws.draw_top_and_rest`): 64, or one per ``_DRAW_CHUNK_ROWS``
    rows on fewer rows, so that small data draws in one pass without the hypergeometric split.
    Depends on ``n`` only, not on the thread count. Returns ``(n_chunks, rows per chunk)``."""
    chunks = max(1, min(_COMPACT_CHUNKS, n // _DRAW_CHUNK_ROWS))
    return chunks, (n + chunks - 1) // chunks


def _chunk_sizes(n):
    """Rows of each of :func:`draw_chunks`' chunks."""
    chunks, size = draw_chunks(n)
    first = np.arange(chunks, dtype=np.int64) * size
    return np.minimum(first + size, n) - first


def _split_count(key, sizes, k):
    """How many of ``k`` rows drawn uniformly without replacement from chunks of ``sizes`` rows
    fall in each: one multivariate hypergeometric draw (numpy, seeded by ``key``), so that every
    ``k``-subset stays equally likely (no draw for a single chunk)."""
    if sizes.shape[0] == 1:
        return np.array([k], np.int64)
    return np.random.Generator(np.random.PCG64(int(key))).multivariate_hypergeometric(sizes, k)


def exact_chunk_counts(key, n, k):
    """How many of ``k`` rows drawn uniformly without replacement from ``range(n)`` fall in each
    of :func:`draw_chunks`' chunks."""
    return _split_count(key, _chunk_sizes(n), k)


def top_and_rest_counts(values, threshold, ties, k_top, k_rest, key):
    """Per chunk of :func:`draw_chunks`: the ties taken as top rows (the first ``ties`` rows
    equal to ``threshold``, in row order), the top rows (``k_top`` in all), and how many of a
    uniform draw of ``k_rest`` of the other rows fall there (:func:`_split_count` over the
    chunks' other rows). Returns the three int64 arrays of :func:`~smartboost._kernels.draws.draw_top_and_rest`."""
    chunks = draw_chunks(values.shape[0])[0]
    if chunks == 1:
        return np.array([ties], np.int64), np.array([k_top], np.int64), np.array([k_rest], np.int64)
    counts = _chunk_top_counts(values, threshold, chunks)
    equal_before = np.cumsum(counts[1]) - counts[1]
    chunk_ties = np.clip(ties - equal_before, 0, counts[1])
    chunk_top = counts[0] + chunk_ties
    chunk_rest = _split_count(key + np.uint64(1), _chunk_sizes(values.shape[0]) - chunk_top, k_rest)
    return chunk_ties, chunk_top, chunk_rest
