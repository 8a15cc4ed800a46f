"""sysbench's OLTP tests as a workload (``generator = "sysbench"``): its runner
(``runner.Sysbench``) and its figures beside TPS (``metrics``). The command and its output are
``pglab/sysbench/``'s; its tables are loaded by ``postgres/kit_load``."""
