"""Maintenance operations as a workload (``operation = "vacuum"``...): its runner
(``runner.MaintenanceOperation``) and its figures (``metrics``: MB/s, the run's ``tps``).
The operations themselves are ``pglab/maintenance/``'s."""
