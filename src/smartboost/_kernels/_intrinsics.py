"""LLVM operations numba does not expose: software prefetch (of an element, or with
:func:`prefetch_span` of every cache line of a wide row), the bit pattern of a float64
(:func:`float_bits`, :func:`bits_float`, which ``_kernels/exp.py`` builds powers of two with),
a conditional move LLVM keeps branch-free (:func:`select_unpredictable`), and the addition of a
(g, h) pair to a histogram cell as one vector operation (:func:`add_to_cell`).

Gathered loops (a node's rows are scattered over the data) stall on cache misses; prefetching
a row a few positions ahead lets the memory fetch overlap the work on the rows before it
(docs/internals.md, "Histograms").
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_LINE_BYTES = 64
"""Bytes of a cache line."""


@intrinsic
def prefetch(typingctx, array, flat_index):
    """Hint the CPU to load element ``flat_index`` of ``array`` into cache: of its flat data
    when it is C-contiguous, else of a 1-d array with its stride (a column view)."""
    if not isinstance(array, types.Array) or not isinstance(flat_index, types.Integer):
        return None
    if array.layout != "C" and array.ndim != 1:
        return None
    sig = types.void(array, flat_index)

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        ary = context.make_array(array_type)(context, builder, args[0])
        index = context.cast(builder, args[1], index_type, types.intp)
        i8p = ir.IntType(8).as_pointer()
        if array_type.layout == "C":
            ptr = builder.gep(ary.data, [index])
        else:
            stride = cgutils.unpack_tuple(builder, ary.strides, 1)[0]
            ptr = builder.gep(builder.bitcast(ary.data, i8p), [builder.mul(index, stride)])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def prefetch_span(array, first, n):
    """:func:`prefetch` every cache line of ``n`` elements of ``array``'s flat data from element
    ``first`` (a row of bins wider than a line: every line of it)."""
    for offset in range(0, n, _LINE_BYTES // array.itemsize):
        prefetch(array, first + offset)


@intrinsic
def float_bits(typingctx, x):
    """The IEEE-754 bits of a float64 as an int64 (a bit cast: no conversion, vectorises)."""
    if not isinstance(x, types.Float) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(x), codegen


@intrinsic
def bits_float(typingctx, bits):
    """The float64 whose IEEE-754 bits are the int64 ``bits`` (inverse of :func:`float_bits`)."""
    if not isinstance(bits, types.Integer) or bits.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(bits), codegen


@intrinsic
def select_unpredictable(typingctx, condition, if_true, if_false):
    """``if_true if condition else if_false`` for two integers of one type, compiled to a
    conditional move.

    LLVM turns a select whose condition depends on a load back into a branch (x86's cmov
    conversion), which mispredicts half the time when the condition goes either way as often, as
    a binary search's comparisons do; a select marked ``!unpredictable`` stays a move.
    """
    if not isinstance(condition, types.Boolean) or not isinstance(if_true, types.Integer) or if_true != if_false:
        return None

    def codegen(context, builder, signature, args):
        chosen = builder.select(args[0], args[1], args[2])
        chosen.set_metadata("unpredictable", builder.module.add_metadata([]))
        return chosen

    return if_true(condition, if_true, if_false), codegen


@intrinsic
def add_to_cell(typingctx, hist, cell, g, h):
    """``hist[cell, 0] += g; hist[cell, 1] += h`` for a C-contiguous int64 histogram of shape
    (n_cells, 2), as one 128-bit load, add and store.

    A histogram update is memory-bound on its loads and stores: one vector access instead of two
    scalar ones per cell built histograms 1.3-1.6x faster (7,000 to 100,000 rows of random
    bins), and is the same sum. ``cell`` is taken as unsigned: no wrap-around of a negative
    index, which the compiler cannot rule out on its own.
    """
    if not (isinstance(hist, types.Array) and hist.ndim == 2 and hist.layout == "C" and hist.dtype == types.int64
            and isinstance(cell, types.Integer) and isinstance(g, types.Integer) and isinstance(h, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        hist_type, cell_type, g_type, h_type = signature.args
        ary = context.make_array(hist_type)(context, builder, args[0])
        index = builder.mul(context.cast(builder, args[1], cell_type, types.uint64), ir.Constant(ir.IntType(64), 2))
        pair = ir.VectorType(ir.IntType(64), 2)
        ptr = builder.bitcast(builder.gep(ary.data, [index]), pair.as_pointer())
        step = cgutils.get_null_value(pair)
        step = builder.insert_element(step, context.cast(builder, args[2], g_type, types.int64), ir.IntType(32)(0))
        step = builder.insert_element(step, context.cast(builder, args[3], h_type, types.int64), ir.IntType(32)(1))
        builder.store(builder.add(builder.load(ptr, align=8), step), ptr, align=8)
        return context.get_dummy_value()

    return types.void(hist, cell, g, h), codegen
