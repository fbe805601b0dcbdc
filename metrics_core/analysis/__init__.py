"""Statistics over evaluations: paired tests and intervals, comparisons within segments, the users an
analysis counts, the regression gate and why two libraries report different numbers."""
