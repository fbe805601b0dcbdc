"""What is measured: the metric registry, the conventions and the library presets, and the
computation of each metric family (derived ranking families, diversity, popularity, row
reductions, curves, overlap, sampled and debiased metrics). Imports nothing above
:mod:`metrics_core.layout` and :mod:`metrics_core.kernels`."""
