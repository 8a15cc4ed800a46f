"""Storage under test: made filesystems, storage micro-benchmarks, their output."""
