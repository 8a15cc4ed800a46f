-- pg_stat_bgwriter of 17 and later: checkpoints moved to pg_stat_checkpointer, backend
-- writes to pg_stat_io
SELECT buffers_clean, maxwritten_clean, buffers_alloc FROM pg_stat_bgwriter
