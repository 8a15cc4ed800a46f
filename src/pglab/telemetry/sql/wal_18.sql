-- pg_stat_wal of 18: WAL I/O counts and times moved to pg_stat_io (object 'wal')
SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full FROM pg_stat_wal
