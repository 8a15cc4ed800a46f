"""Running a campaign: plan, preflight checks, the executor, run metrics."""
