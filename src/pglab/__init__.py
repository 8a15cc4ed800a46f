"""pglab — a PostgreSQL performance lab."""

__version__ = "0.1.0"
