"""Numba kernels. Every function here is ``@njit(cache=True)`` and handles only arrays and scalars.

Modules: ``histogram`` (per-node histograms, subtraction), ``split`` (best split per feature),
``partition`` (row partitioning), ``grow`` (a tree's growth loop), ``predict`` (tree evaluation
on raw and binned data, score updates), ``gradients`` (fixed-point packing), ``binning`` (values
to bins), ``metrics`` (AUC), ``svmlight`` (the text parser), ``selection`` (RGBM's draws of
candidate splits), ``exp`` and ``_intrinsics`` (compiled helpers). The row samplers' kernels:
``random`` (counter-based random numbers), ``draws`` (the row draws), ``importance`` (row
importances, smart2's correction), ``scale`` (the proportional samplers' scale) and ``topk``
(the largest values). Their plain-Python drivers live in :mod:`smartboost.sampling`.
"""
