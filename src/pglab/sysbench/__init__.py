"""sysbench (1.0, its pgsql driver) as a second load generator: its output parsed here."""
