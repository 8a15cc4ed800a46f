-- what client backends and parallel workers read of relations (16, 17: blocks × op_bytes)
SELECT coalesce(sum(reads * op_bytes), 0)::bigint
FROM pg_stat_io WHERE backend_type IN ('client backend', 'background worker')
AND object = 'relation'
