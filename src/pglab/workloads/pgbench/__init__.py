"""pgbench's built-in and custom scripts as a workload: run here, or on the campaign's
generator hosts at once (``runner``). Its figure is the run's TPS."""
