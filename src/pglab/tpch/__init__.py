"""The TPC-H-like kit's instrument: the power run (each query once, timed, under a
``statement_timeout``), its figures (per-query seconds, geometric mean, a QphH-like power
figure) and the plans of each query with the differences of their shapes."""
