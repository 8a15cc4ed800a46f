-- pg_stat_checkpointer (17 and later)
SELECT num_timed, num_requested, write_time, sync_time, buffers_written FROM pg_stat_checkpointer
