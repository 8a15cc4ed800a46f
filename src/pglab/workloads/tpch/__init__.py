"""The TPC-H-like kit as a workload (``kit = "tpch"``): a phase's power run and plans
(``phase``), the power run under a ``statement_timeout`` and its figures (``power``), a
throughput run's streams (``throughput``), each query's plan and the differences of plan
shapes (``plans``); its runner (``runner.TpchPower``: the plans, then the power or throughput
run) and its run figures (``metrics``: QphH-like power, QthH-like throughput). Its data is
loaded by ``load``, its queries are ``campaign/kits/tpch_queries``'."""
