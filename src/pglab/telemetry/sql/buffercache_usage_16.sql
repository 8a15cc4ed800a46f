-- buffers per usage count (how hot the cache is), one row per usage_count: 16 and later
SELECT usage_count, buffers, dirty, pinned FROM pg_buffercache_usage_counts()
