"""Planning a campaign, before anything runs: the plan (points, their keys, the order, the runs
already stored: ``plan``), what changed in the file since runs were stored (``changes``), the
rounds of ``repeats = "auto"`` (``rounds``: which points still run, judged on the store),
everything checked before the first run (``preflight``, with the storage's devices for ``[os]``
in ``devices``) and what the runs need of the machine (``capacity``). It never imports the
executor (``run/``), which comes after it."""
