"""pglab's statistics, in one place: pure functions on plain numbers (no store, no server, no
campaign), imported by the stages that run campaigns (``run``) and read them (``analysis``,
``tune``), and tested on synthetic data with known answers.

- ``significance``: the 5% level, scipy.stats imported on first use;
- ``summary``: a point's spread over its repeats (median, mean, its 95% CI, CV);
- ``differences``: the difference of two points on log TPS (blocked over interleaved rounds, or
  Welch's test), its interval and p-value, and the blocked design's power by simulation;
- ``power``: power, the smallest effect found, the runs an effect needs, Holm's correction;
- ``sequential``: ``repeats = "auto"``, the anytime-valid confidence sequence and its rule;
- ``steady``: a series' warm-up (MSER-5) and its linear drift;
- ``percentiles``: the interval of a percentile estimated from a random sample.

The verdicts in words, the warnings and the tables made of these stay in ``analysis``.
"""
