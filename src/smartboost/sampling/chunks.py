"""Fixed row chunks of the exact-count draws, and how many rows each chunk draws.

The exact-count draws (uniform's selection sampling, GOSS's top rows and uniform rest:
:mod:`smartboost._kernels.draws`) run over fixed chunks of rows in parallel. How many rows each
chunk draws is decided here first, with numpy's multivariate hypergeometric draw, so that every
``k``-subset of the rows stays equally likely.

The chunks are those of every machine's rows together, by their ids; a machine runs the draw
over its pieces of them (:func:`chunk_layout`, :class:`~smartboost._kernels.records.DrawPieces`),
each from the draw's state where the piece starts: on one machine the pieces are the chunks,
over several the draw of a chunk that spans machines is carried from one to the next
(:func:`exact_pieces`; GOSS: :func:`~smartboost.sampling.distributed.top_and_rest_by_machine`).
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import COMPACT_CHUNKS, draw_exact_parallel
from .._kernels.records import DrawPieces
from .._kernels.topk import piece_top_counts

_DRAW_CHUNK_ROWS = 4096
"""Rows per chunk of the exact-count draws below 64 chunks (:func:`draw_chunks`)."""


def draw_chunks(n):
    """Fixed row chunks of the exact-count draws
    (:func:`~smartboost._kernels.draws.draw_exact_parallel`,
    :func:`~smartboost._kernels.draws.draw_top_and_rest`): 64, or one per ``_DRAW_CHUNK_ROWS``
    rows on fewer rows, so that small data draws in one pass without the hypergeometric split.
    Depends on ``n`` only, not on the thread count. Returns ``(n_chunks, rows per chunk)``."""
    chunks = max(1, min(COMPACT_CHUNKS, n // _DRAW_CHUNK_ROWS))
    return chunks, (n + chunks - 1) // chunks


def _chunk_size(n, size):
    """``size``, or :func:`draw_chunks`' rows per chunk of ``n`` rows when None."""
    return max(1, draw_chunks(n)[1] if size is None else size)


def chunk_sizes(n, size=None):
    """Rows of each chunk of ``size`` rows (None: :func:`draw_chunks`' chunks)."""
    size = _chunk_size(n, size)
    chunks = max(1, (n + size - 1) // size)
    first = np.arange(chunks, dtype=np.int64) * size
    return np.minimum(first + size, n) - first


def _split_count(key, sizes, k):
    """How many of ``k`` rows drawn uniformly without replacement from chunks of ``sizes`` rows
    fall in each: one multivariate hypergeometric draw (numpy, seeded by ``key``), so that every
    ``k``-subset stays equally likely (no draw for a single chunk)."""
    if sizes.shape[0] == 1:
        return np.array([k], np.int64)
    return np.random.Generator(np.random.PCG64(int(key))).multivariate_hypergeometric(sizes, k)


def chunk_layout(total_rows, row_ids=None, size=None):
    """This machine's rows cut into the pieces of the exact-count draws over every machine's
    ``total_rows`` rows: each run of consecutive row ids (``row_ids``, None: every row, ids
    0 .. ``total_rows`` - 1) cut where the chunks of ``size`` rows end (None:
    :func:`draw_chunks`' chunks). Returns the int64 arrays ``(start, first, length, chunk)``
    of the pieces in row order: rows ``start .. start + length`` here, the id of the first,
    and the chunk that holds them."""
    size = _chunk_size(total_rows, size)
    if row_ids is None:
        lengths = chunk_sizes(total_rows, size)
        first = np.arange(lengths.shape[0], dtype=np.int64) * size
        return first, first.copy(), lengths, np.arange(lengths.shape[0], dtype=np.int64)
    ids = np.asarray(row_ids, np.int64)
    breaks = np.flatnonzero(np.diff(ids) != 1) + 1
    parts = []
    for begin, end in zip(np.r_[0, breaks], np.r_[breaks, ids.shape[0]]):
        if end > begin:
            g0, g1 = ids[begin], ids[begin] + (end - begin)
            bounds = np.r_[g0, np.arange(g0 // size + 1, (g1 - 1) // size + 1, dtype=np.int64) * size, g1]
            parts.append((begin + bounds[:-1] - g0, bounds[:-1], np.diff(bounds), bounds[:-1] // size))
    if not parts:
        return tuple(np.zeros(0, np.int64) for _ in range(4))
    return tuple(np.concatenate(column).astype(np.int64) for column in zip(*parts))


def ends_inside(layout, total_rows, size=None):
    """Which pieces of ``layout`` (:func:`chunk_layout`, chunks of ``size`` rows) end before
    their chunk does: the draw goes on over another machine's rows."""
    _, first, length, chunk = layout
    size = _chunk_size(total_rows, size)
    return first + length < np.minimum((chunk + 1) * size, total_rows)


def draw_pieces(layout, kept, needed, left, ties):
    """The ``DrawPieces`` of ``layout`` (:func:`chunk_layout`) with these start states, each
    piece at the offset of the rows kept before it."""
    start, first, length, _ = layout
    offset = np.cumsum(kept) - kept
    return DrawPieces(start, first, length, offset.astype(np.int64), np.asarray(needed, np.int64),
                      np.asarray(left, np.int64), np.asarray(ties, np.int64))


def lone_piece(first, length, needed, left, ties=0):
    """A one-piece ``DrawPieces`` of ``length`` rows from id ``first``, to run a draw kernel on
    rows that another machine holds, only for its state at the piece's end."""
    return DrawPieces(*(np.array([v], np.int64) for v in (0, first, length, 0, needed, left, ties)))


def exact_pieces(key, k, total_rows, layout, size=None):
    """Uniform's draw of ``k`` of ``total_rows`` rows, over this machine's pieces ``layout``
    (:func:`chunk_layout`, chunks of ``size`` rows): how many rows each chunk draws
    (:func:`_split_count`), and the draw's state where a piece starts or ends inside its chunk
    (found by running the draw over the ids of the chunk's rows before it, which is all that
    draw reads)."""
    _, first, length, chunk = layout
    size = _chunk_size(total_rows, size)
    counts = _split_count(key, chunk_sizes(total_rows, size), k)
    chunk_first = chunk * size
    chunk_stop = np.minimum(chunk_first + size, total_rows)
    needed = counts[chunk]
    scratch = np.empty(max(1, size), np.uint32)
    for p in np.flatnonzero(first > chunk_first):
        before = lone_piece(chunk_first[p], first[p] - chunk_first[p], needed[p], chunk_stop[p] - chunk_first[p])
        draw_exact_parallel(key, before, scratch, scratch)
        needed[p] = before.needed[0]
    left = chunk_stop - first
    kept = needed.copy()
    for p in np.flatnonzero(ends_inside(layout, total_rows, size)):
        kept[p] = draw_exact_parallel(key, lone_piece(first[p], length[p], needed[p], left[p]), scratch, scratch)
    return draw_pieces(layout, kept, needed, left, np.zeros_like(needed))


def top_and_rest_chunks(counts, ties, k_rest, key, total_rows):
    """Per chunk of :func:`draw_chunks` over ``total_rows`` rows, from the values above GOSS's
    threshold and equal to it in each (``counts``, shape (2, chunks)): the ties taken as top
    rows (the first ``ties`` rows equal to the threshold, in row order), the top rows, and how
    many of a uniform draw of ``k_rest`` of the other rows fall there (:func:`_split_count`
    over the chunks' other rows). Three int64 arrays."""
    equal_before = np.cumsum(counts[1]) - counts[1]
    chunk_ties = np.clip(ties - equal_before, 0, counts[1])
    chunk_top = counts[0] + chunk_ties
    chunk_rest = _split_count(key + np.uint64(1), chunk_sizes(total_rows) - chunk_top, k_rest)
    return chunk_ties, chunk_top, chunk_rest


def top_and_rest_pieces(values, threshold, ties, k_top, k_rest, key):
    """GOSS's draw over one machine's rows (every row): the ``DrawPieces`` of the chunks, with
    :func:`top_and_rest_chunks`' counts (no count pass for a single chunk)."""
    n = values.shape[0]
    layout = chunk_layout(n)
    if layout[0].shape[0] == 1:
        chunk_ties, chunk_top, chunk_rest = np.array([ties]), np.array([k_top]), np.array([k_rest])
    else:
        counts = piece_top_counts(values, threshold, layout[0], layout[2])
        chunk_ties, chunk_top, chunk_rest = top_and_rest_chunks(counts, ties, k_rest, key, n)
    return draw_pieces(layout, chunk_top + chunk_rest, chunk_rest, layout[2] - chunk_top, chunk_ties)
