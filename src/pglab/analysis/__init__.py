"""Statistics over stored runs: points, verdicts, warnings, comparisons."""
