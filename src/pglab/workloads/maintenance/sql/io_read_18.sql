-- what client backends and parallel workers read of relations (18: read_bytes)
SELECT coalesce(sum(read_bytes), 0)::bigint
FROM pg_stat_io WHERE backend_type IN ('client backend', 'background worker')
AND object = 'relation'
