"""pgbench: invocation, output parsing, latency histograms."""
