-- pg_stat_io of 18: byte columns of its own (op_bytes is gone), WAL I/O included
SELECT backend_type, object, context, coalesce(reads, 0) AS reads,
       coalesce(writes, 0) AS writes, coalesce(extends, 0) AS extends, coalesce(hits, 0) AS hits,
       coalesce(evictions, 0) AS evictions, coalesce(fsyncs, 0) AS fsyncs,
       coalesce(read_bytes, 0) AS read_bytes, coalesce(write_bytes, 0) AS write_bytes,
       coalesce(read_time, 0) AS read_time, coalesce(write_time, 0) AS write_time
FROM pg_stat_io
