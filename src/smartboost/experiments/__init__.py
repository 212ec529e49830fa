"""Reproductions of the figures and tables of the papers smartboost implements.

- :mod:`.sampling`: SMART's table, the MVS figure, iteration cost (``smartboost experiment sampling``);
- :mod:`.ranking`: SMART's LambdaMART table (``smartboost experiment ranking``);
- :mod:`.rgbm`: RGBM's loss-against-time curves per number of candidate features
  (``smartboost experiment rgbm``);
- :mod:`.data`: the train/test arrays they run on (registry sets or generated ones);
- :mod:`.report`: their output, a markdown table and a PNG figure (matplotlib optional).
- :mod:`.timing`: how runs are timed side by side on a shared machine (in lockstep).

The scripts in ``benchmarks/`` call the same functions and add other libraries side by side.
"""
