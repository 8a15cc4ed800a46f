"""sysbench (1.0, its pgsql driver) as a workload (``generator = "sysbench"``): its command for
a phase, run with each second told as it comes (``invoke``), its per-second report and final
statistics parsed (``output``), its runner (``runner.Sysbench``) and its figures beside TPS
(``metrics``). Its tables are loaded by ``postgres/kit_load``."""
