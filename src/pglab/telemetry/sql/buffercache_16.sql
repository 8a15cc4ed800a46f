SELECT buffers_used, buffers_unused, buffers_dirty, buffers_pinned, usagecount_avg
FROM pg_buffercache_summary()
