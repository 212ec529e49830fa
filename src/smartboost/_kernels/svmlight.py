"""svmlight/LETOR text parsing: labels, ``qid:`` fields and ``index:value`` pairs of a byte buffer.

:func:`parse_svmlight` reads what scikit-learn's ``load_svmlight_file`` reads, with the same
values (``smartboost.datafile`` falls back to scikit-learn for anything outside the grammar
below, and the tests compare both value for value), in two passes over blocks of whole lines,
parallel over blocks: the first counts each block's rows and pairs, the second writes them at
the block's offsets. scikit-learn appends every ``qid`` with ``np.append``, quadratic in the
rows; here nothing grows.

Grammar (scikit-learn's reading of it): a line is cut at its first ``#``; lines without
tokens are skipped; tokens are separated by ASCII whitespace. The first token is the label,
an optional second one ``qid:<integer>``, the others ``<index>:<value>`` with decimal indices
strictly increasing within the line, below 2^31. A number is
``[+-]digits[.digits][(e|E)[+-]digits]`` (at least one digit). Its digits form an integer
``m`` and its decimal point and exponent a power ``10^e``; when ``m <= 2^53`` and
``|e| <= 22``, both are exact doubles and ``m * 10^e`` (or ``m / 10^-e``) is one correctly
rounded operation, so the value is the correctly rounded one, as ``float()`` and ``strtod``
give (Clinger's fast path). Other values are "slow": their position is returned for
``float()``; other labels, indices or ``qid`` fields, a NUL byte, or a ``qid`` on some rows
only, end the fast path (``STRUCTURE``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

OK = 0
STRUCTURE = 1  # outside the fast grammar: read the whole file with scikit-learn

_POW10 = np.array([10.0 ** i for i in range(23)])  # exact doubles
_MANTISSA_LIMIT = (2 ** 53 - 9) // 10  # m * 10 + digit stays <= 2^53
_INDEX_LIMIT = 2 ** 31


@njit(cache=True, nogil=True)
def _is_space(c):
    """ASCII whitespace as ``bytes.split`` sees it: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or (c >= 9 and c <= 13)


@njit(cache=True, nogil=True)
def _is_digit(c):
    return c >= 48 and c <= 57


@njit(cache=True, nogil=True)
def parse_number(buf, start, end):
    """``(value, exact)`` of the number in ``buf[start:end]``; ``exact`` False: not on the fast path."""
    i = start
    negative = False
    if i < end and (buf[i] == 43 or buf[i] == 45):  # + -
        negative = buf[i] == 45
        i += 1
    mantissa = 0
    digits = 0
    exponent = 0
    while i < end and _is_digit(buf[i]):
        if mantissa > _MANTISSA_LIMIT:
            return 0.0, False
        mantissa = mantissa * 10 + (buf[i] - 48)
        digits += 1
        i += 1
    if i < end and buf[i] == 46:  # .
        i += 1
        while i < end and _is_digit(buf[i]):
            if mantissa > _MANTISSA_LIMIT:
                return 0.0, False
            mantissa = mantissa * 10 + (buf[i] - 48)
            digits += 1
            exponent -= 1
            i += 1
    if digits == 0:
        return 0.0, False
    if i < end and (buf[i] == 101 or buf[i] == 69):  # e E
        i += 1
        exponent_negative = False
        if i < end and (buf[i] == 43 or buf[i] == 45):
            exponent_negative = buf[i] == 45
            i += 1
        given = 0
        exponent_digits = 0
        while i < end and _is_digit(buf[i]):
            given = min(given * 10 + (buf[i] - 48), 100_000)
            exponent_digits += 1
            i += 1
        if exponent_digits == 0:
            return 0.0, False
        exponent += -given if exponent_negative else given
    if i != end:
        return 0.0, False
    if mantissa == 0:
        value = 0.0
    elif exponent > 22 or exponent < -22:
        return 0.0, False
    elif exponent >= 0:
        value = mantissa * _POW10[exponent]
    else:
        value = mantissa / _POW10[-exponent]
    return (-value if negative else value), True


@njit(cache=True, nogil=True)
def _parse_integer(buf, start, end, signed, limit):
    """``(ok, value)`` of the decimal integer ``buf[start:end]`` (a ``-`` allowed when ``signed``);
    ``ok`` False when it is not one or not below ``limit`` in absolute value."""
    i = start
    negative = False
    if signed and i < end and buf[i] == 45:
        negative = True
        i += 1
    if i == end:
        return False, 0
    value = 0
    while i < end:
        if not _is_digit(buf[i]):
            return False, 0
        value = value * 10 + (buf[i] - 48)
        if value >= limit:
            return False, 0
        i += 1
    return True, -value if negative else value


@njit(cache=True, nogil=True)
def _scan_block(buf, start, end, fill, row0, pair0, label, qid, has_qid, indptr, indices, data, slow):
    """Walk the lines of ``buf[start:end]``: count rows and pairs, or (``fill``) parse them into the
    arrays at rows ``row0 ..`` and pairs ``pair0 ..``. Returns ``(rows, pairs, status, slow values)``.

    A slow value gets ``slow[k] = 1`` and its byte offset in ``data[k]`` (for ``float()``).
    """
    rows = 0
    pairs = 0
    n_slow = 0
    pos = start
    while pos < end:
        line_end = pos
        while line_end < end and buf[line_end] != 10:
            line_end += 1
        stop = pos  # the comment starts at the first '#'
        while stop < line_end and buf[stop] != 35:
            if buf[stop] == 0:  # scikit-learn's strchr would stop here
                return rows, pairs, STRUCTURE, n_slow
            stop += 1
        i = pos
        token = 0
        previous_index = -1
        while True:
            while i < stop and _is_space(buf[i]):
                i += 1
            if i >= stop:
                break
            t0 = i
            while i < stop and not _is_space(buf[i]):
                i += 1
            if token == 0:
                if fill:
                    value, exact = parse_number(buf, t0, i)
                    if not exact:
                        return rows, pairs, STRUCTURE, n_slow
                    label[row0 + rows] = value
            elif token == 1 and i - t0 >= 3 and buf[t0] == 113 and buf[t0 + 1] == 105 and buf[t0 + 2] == 100:
                if i - t0 < 5 or buf[t0 + 3] != 58:  # 'qid' not followed by ':' and a value
                    return rows, pairs, STRUCTURE, n_slow
                ok, q = _parse_integer(buf, t0 + 4, i, True, 10 ** 18)
                if not ok:
                    return rows, pairs, STRUCTURE, n_slow
                if fill:
                    qid[row0 + rows] = q
                    has_qid[row0 + rows] = 1
            else:
                if fill:
                    colon = t0
                    while colon < i and buf[colon] != 58:
                        colon += 1
                    ok, index = _parse_integer(buf, t0, colon, False, _INDEX_LIMIT)
                    if colon == i or not ok or index <= previous_index:
                        return rows, pairs, STRUCTURE, n_slow
                    previous_index = index
                    k = pair0 + pairs
                    value, exact = parse_number(buf, colon + 1, i)
                    indices[k] = index
                    if exact:
                        data[k] = value
                    else:
                        data[k] = colon + 1
                        slow[k] = 1
                        n_slow += 1
                pairs += 1
            token += 1
        if token > 0:
            rows += 1
            if fill:
                indptr[row0 + rows] = pair0 + pairs
        pos = line_end + 1
    return rows, pairs, OK, n_slow


@njit(cache=True, nogil=True, parallel=True)
def parse_svmlight(buf, n_blocks):
    """Parse a whole svmlight/LETOR buffer (uint8) in ``n_blocks`` blocks of lines.

    Returns
    -------
    status : int
        ``OK``, or ``STRUCTURE`` (the other outputs are then empty).
    label : ndarray of float64, shape (n_rows,)
    qid, has_qid : ndarray of int64 and uint8, shape (n_rows,)
        Each row's ``qid`` value and whether it has one.
    indptr, indices, data : ndarray of int64, int64, float64
        CSR arrays (indices as written, not shifted).
    slow : ndarray of uint8, shape (n_pairs,)
        1 where ``data`` holds the byte offset of a value for ``float()`` instead of the value.
    n_slow : int
        Number of slow values.
    """
    n = buf.shape[0]
    bounds = np.empty(n_blocks + 1, np.int64)
    bounds[0] = 0
    bounds[n_blocks] = n
    for b in range(1, n_blocks):
        p = max(b * n // n_blocks, bounds[b - 1])
        while 0 < p < n and buf[p - 1] != 10:  # start each block at the start of a line
            p += 1
        bounds[b] = p
    rows = np.zeros(n_blocks + 1, np.int64)
    pairs = np.zeros(n_blocks + 1, np.int64)
    status = np.zeros(n_blocks, np.int64)
    n_slow = np.zeros(n_blocks, np.int64)
    none_f, none_i, none_u = np.empty(0), np.empty(0, np.int64), np.empty(0, np.uint8)
    for b in prange(n_blocks):
        r, k, s, _ = _scan_block(buf, bounds[b], bounds[b + 1], False, 0, 0, none_f, none_i, none_u, none_i,
                                 none_i, none_f, none_u)
        rows[b + 1] = r
        pairs[b + 1] = k
        status[b] = s
    if status.max() != OK:
        return STRUCTURE, none_f, none_i, none_u, none_i, none_i, none_f, none_u, 0
    rows = np.cumsum(rows)
    pairs = np.cumsum(pairs)
    label = np.empty(rows[n_blocks])
    qid = np.zeros(rows[n_blocks], np.int64)
    has_qid = np.zeros(rows[n_blocks], np.uint8)
    indptr = np.zeros(rows[n_blocks] + 1, np.int64)
    indices = np.empty(pairs[n_blocks], np.int64)
    data = np.empty(pairs[n_blocks])
    slow = np.zeros(pairs[n_blocks], np.uint8)
    for b in prange(n_blocks):
        _, _, s, m = _scan_block(buf, bounds[b], bounds[b + 1], True, rows[b], pairs[b], label, qid, has_qid,
                                 indptr, indices, data, slow)
        status[b] = s
        n_slow[b] = m
    if status.max() != OK:
        return STRUCTURE, none_f, none_i, none_u, none_i, none_i, none_f, none_u, 0
    return OK, label, qid, has_qid, indptr, indices, data, slow, n_slow.sum()
