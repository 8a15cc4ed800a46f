-- pg_stat_database, the database pgbench runs in (15 to 18)
SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched, tup_inserted,
       tup_updated, tup_deleted, conflicts, temp_files, temp_bytes, deadlocks, blk_read_time,
       blk_write_time
FROM pg_stat_database WHERE datname = current_database()
