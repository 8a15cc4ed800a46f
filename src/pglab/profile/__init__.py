"""CPU profiles of the server's processes during measured phases, by Linux perf.

``perf`` runs perf (``perf record -e cpu-clock -g`` on the postmaster and its children, whose
new backends inherit the sampling), ``folded`` turns ``perf script``'s text into folded stacks
per process kind (backend, checkpointer, walwriter, ...) kept compressed in a phase table, and
``watch.ProfileWatch`` is the watcher the executor enters beside the telemetry's
``PhaseWatch``. The numbers made from the stored stacks (hot functions, differentials) are
``analysis/profiles.py``'s.
"""
