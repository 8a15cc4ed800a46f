"""A captured workload replayed as a workload (``[workload] replay``): its runner
(``runner.Replay``) and its figures (``metrics``). Capture, the workload file and pgreplay are
``pglab/replay/``'s; the dump is restored by ``postgres/replay_load``."""
