"""Maintenance operations as workloads: VACUUM, ANALYZE, CREATE INDEX, in MB/s."""
