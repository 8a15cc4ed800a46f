-- the relations of the current database with the most shared buffers (15 to 18)
SELECT c.relname AS relation, count(*) AS buffers, count(*) FILTER (WHERE b.isdirty) AS dirty,
       round(100.0 * count(*) / (SELECT setting::int FROM pg_settings WHERE name = 'shared_buffers'), 2)::float8 AS pct
FROM pg_buffercache b
JOIN pg_class c ON b.relfilenode = pg_relation_filenode(c.oid)
WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
GROUP BY c.relname ORDER BY buffers DESC LIMIT 10
