-- pg_buffercache summary of 15, computed from the view (16 has pg_buffercache_summary())
SELECT count(*) FILTER (WHERE relfilenode IS NOT NULL) AS buffers_used,
       count(*) FILTER (WHERE relfilenode IS NULL) AS buffers_unused,
       count(*) FILTER (WHERE isdirty) AS buffers_dirty,
       count(*) FILTER (WHERE pinning_backends > 0) AS buffers_pinned,
       avg(usagecount) FILTER (WHERE relfilenode IS NOT NULL)::float8 AS usagecount_avg
FROM pg_buffercache
