"""Narrowed int64 messages between ``smartboost.dask`` workers (``dask._peers``).

A message of ``n`` int64 values is sent in ``k`` bytes a value, ``k`` the fewest of 1, 2, 3,
4, 5, 6 and 8 that hold every value in two's complement. Histogram cells are sums of 30-bit
fixed-point row values (``_kernels.gradients``), so most need 5 of their 8 bytes. Layout: a
header word whose first byte is ``k``, then two planes, each value's low bytes (unsigned) and
then its high bytes (signed): ``v = high * 2**(8 low) + low``. Planes of machine-word widths
keep every read and write a plain cast that LLVM vectorises.
"""

from __future__ import annotations

import numpy as np
from numba import njit

HEADER = 8
"""Bytes before the planes: the width in a word of its own, so that the planes stay aligned."""

# the bytes of the low plane of each width (index); the high plane holds the rest
_LOW = np.array([0, 0, 0, 2, 0, 4, 4, 0, 0], np.int64)


@njit(cache=True, nogil=True)
def message_width(values):
    """``k``: the fewest of 1, 2, 3, 4, 5, 6 and 8 bytes that hold every one of the int64
    ``values`` in two's complement."""
    top = np.int64(0)
    for i in range(values.shape[0]):
        v = values[i]
        top = max(top, v ^ (v >> 63))  # v >= 0: v; v < 0: -v - 1, the magnitude it needs
    width = 1
    while width < 8 and (top >> (8 * width - 1)) != 0:  # the sign bit included
        width += 1
    return 8 if width == 7 else width


@njit(cache=True, nogil=True)
def narrow_into(values, message):
    """Write the int64 ``values`` into ``message`` (uint8, at least ``HEADER + 8 *
    len(values)`` bytes) narrowed; returns the message's size in bytes."""
    n = values.shape[0]
    width = message_width(values)
    message[:HEADER] = 0
    message[0] = width
    body = message[HEADER:HEADER + width * n]
    low = _LOW[width]
    if width == 1:
        _write_plane(values, body.view(np.int8))
    elif width == 2:
        _write_plane(values, body.view(np.int16))
    elif width == 4:
        _write_plane(values, body.view(np.int32))
    elif width == 8:
        _write_plane(values, body.view(np.int64))
    elif width == 3:
        _write_planes(values, body[:low * n].view(np.uint16), body[low * n:].view(np.int8), 8 * low)
    elif width == 5:
        _write_planes(values, body[:low * n].view(np.uint32), body[low * n:].view(np.int8), 8 * low)
    else:
        _write_planes(values, body[:low * n].view(np.uint32), body[low * n:].view(np.int16), 8 * low)
    return HEADER + width * n


@njit(cache=True, nogil=True)
def widen_add(body, width, out):
    """Add the values of a narrowed message's ``body`` (after its header; ``width`` bytes a
    value, one value per entry of ``out``) to the int64 ``out``."""
    n = out.shape[0]
    low = _LOW[width]
    if width == 1:
        _add_plane(body[:n].view(np.int8), out)
    elif width == 2:
        _add_plane(body[:2 * n].view(np.int16), out)
    elif width == 4:
        _add_plane(body[:4 * n].view(np.int32), out)
    elif width == 8:
        _add_plane(body[:8 * n].view(np.int64), out)
    elif width == 3:
        _add_planes(body[:low * n].view(np.uint16), body[low * n:3 * n].view(np.int8), 8 * low, out)
    elif width == 5:
        _add_planes(body[:low * n].view(np.uint32), body[low * n:5 * n].view(np.int8), 8 * low, out)
    else:
        _add_planes(body[:low * n].view(np.uint32), body[low * n:6 * n].view(np.int16), 8 * low, out)


@njit(cache=True, nogil=True)
def _write_plane(values, plane):
    for i in range(values.shape[0]):
        plane[i] = values[i]  # truncated: the value fits


@njit(cache=True, nogil=True)
def _write_planes(values, low, high, shift):
    for i in range(values.shape[0]):
        low[i] = values[i]  # modulo 2**shift
        high[i] = values[i] >> shift


@njit(cache=True, nogil=True)
def _add_plane(plane, out):
    for i in range(out.shape[0]):
        out[i] += np.int64(plane[i])


@njit(cache=True, nogil=True)
def _add_planes(low, high, shift, out):
    for i in range(out.shape[0]):
        out[i] += np.int64(low[i]) + (np.int64(high[i]) << shift)
