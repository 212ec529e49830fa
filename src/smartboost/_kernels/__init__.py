"""Numba kernels. Every function here is ``@njit(cache=True)`` and handles only arrays and scalars.

Modules: ``histogram`` (per-node histograms, subtraction), ``split`` (best split per feature),
``partition`` (row partitioning), ``predict`` (tree evaluation on raw and binned data, score
updates), ``gradients`` (fixed-point packing), ``binning`` (values to bins), ``metrics`` (AUC).
"""
