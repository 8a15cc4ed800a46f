"""The TPC-H-like kit as a workload (``kit = "tpch"``): its runner (``runner.TpchPower``: the
plans, then the power or throughput run) and its figures (``metrics``: QphH-like power,
QthH-like throughput). The power run itself is ``pglab/tpch/``'s; its data is loaded by
``postgres/tpch_load``."""
