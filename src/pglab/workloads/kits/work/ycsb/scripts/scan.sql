-- pglab's YCSB-like kit: scan up to 100 records from a key (workload E)
-- pglab gives :records, :clients, :distribution (0 zipfian, 1 uniform, 2 latest) and
-- :inserted (this client's inserts so far, from 0) with pgbench -D
-- the key: zipfian over the records, its hot keys scattered (permute) as YCSB scrambles them
-- (pgbench's zipfian takes a parameter above 1: 1.01, YCSB's is 0.99); uniform; or latest,
-- zipfian back from the newest record (this client's inserts × the clients: about the newest)
\set newest :records + :inserted * :clients
\set key CASE WHEN :distribution = 0 THEN permute(random_zipfian(0, :records - 1, 1.01), :records) + 1 WHEN :distribution = 1 THEN random(1, :records) ELSE greatest(1, :newest - random_zipfian(0, :newest - 1, 1.01)) END
\set length random(1, 100)
SELECT * FROM usertable WHERE ycsb_key >= :key ORDER BY ycsb_key LIMIT :length;
