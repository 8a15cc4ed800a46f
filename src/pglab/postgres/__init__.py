"""PostgreSQL servers: binaries, settings, clusters, datasets, fingerprints."""
