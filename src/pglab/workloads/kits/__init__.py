"""The workload kits pgbench runs (``kit = "tpcc"``, ``"ycsb"``, ``"tpce"``): their runner
(``runner.KitPgbench``: the kit's scripts by pgbench, its counters around them, its
consistency after) and their figures (``metrics``; paced TPC-C-like terminals' in
``pacing_metrics``). Their scripts and SQL are ``campaign/kits``', their loader
``load``'s (the TPC-E-like kit's by ``workloads/tpce``)."""
