"""Automatic tuning (``pglab tune FILE``): a campaign file's one point, its settings searched by
Optuna within a trial budget, each trial a normal pglab run, then the best configurations, the
server's defaults and PGTune's rules re-run interleaved and compared against noise.

- ``spec``: the ``[tune]`` table parsed and checked (objective, budget, knobs, constraints)
- ``space``: knobs resolved against the version's ``pg_settings`` (the default knob set, the
  ranges in the setting's own unit, values written back as postgresql.conf takes them)
- ``pgtune``: PGTune's rules for this machine; ``constraints``: memory against RAM
- ``study``: the Optuna study in pglab's results store (samplers, resume, the first trials)
- ``trials``: the search loop, a pglab run per trial; ``confirm``: the confirmation runs and
  the decision; ``summary``: what ``pglab show``/``report`` say of a tune study
"""
