"""The workload kits pgbench runs (``kit = "tpcc"``, ``"ycsb"``, ``"tpce"``): their runner
(``runner.KitPgbench``: the kit's scripts by pgbench, its counters around them, its
consistency after) and their figures (``metrics``; paced TPC-C-like terminals' in
``pacing_metrics``). Their declarations are the package ``work`` (the phase's ``KitWork``;
the kits' table ``work/kits`` with their scripts and SQL beside it, ``work/NAME/``; TPC-C's
terminals that think, ``work/pacing``), their loader ``load`` (the TPC-E-like kit's by
``workloads/tpce``)."""
