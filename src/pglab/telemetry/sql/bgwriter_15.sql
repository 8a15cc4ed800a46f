-- pg_stat_bgwriter of 15 and 16 (the checkpoint columns go to checkpointer_15.sql)
SELECT buffers_clean, maxwritten_clean, buffers_alloc, buffers_backend, buffers_backend_fsync
FROM pg_stat_bgwriter
