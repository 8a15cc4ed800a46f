-- 15 and 16 keep checkpoint counters in pg_stat_bgwriter: given the names of 17's
-- pg_stat_checkpointer so that every version has one shape
SELECT checkpoints_timed AS num_timed, checkpoints_req AS num_requested,
       checkpoint_write_time AS write_time, checkpoint_sync_time AS sync_time,
       buffers_checkpoint AS buffers_written
FROM pg_stat_bgwriter
