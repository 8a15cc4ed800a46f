-- pglab's YCSB-like kit: update one field of one record
-- pglab gives :records, :clients, :distribution (0 zipfian, 1 uniform, 2 latest) and
-- :inserted (this client's inserts so far, from 0) with pgbench -D
-- the key: zipfian over the records, its hot keys scattered (permute) as YCSB scrambles them
-- (pgbench's zipfian takes a parameter above 1: 1.01, YCSB's is 0.99); uniform; or latest,
-- zipfian back from the newest record (this client's inserts × the clients: about the newest)
\set newest :records + :inserted * :clients
\set key CASE WHEN :distribution = 0 THEN permute(random_zipfian(0, :records - 1, 1.01), :records) + 1 WHEN :distribution = 1 THEN random(1, :records) ELSE greatest(1, :newest - random_zipfian(0, :newest - 1, 1.01)) END
\set field random(0, 9)
UPDATE usertable SET
    field0 = CASE WHEN :field = 0 THEN ycsb_value() ELSE field0 END,
    field1 = CASE WHEN :field = 1 THEN ycsb_value() ELSE field1 END,
    field2 = CASE WHEN :field = 2 THEN ycsb_value() ELSE field2 END,
    field3 = CASE WHEN :field = 3 THEN ycsb_value() ELSE field3 END,
    field4 = CASE WHEN :field = 4 THEN ycsb_value() ELSE field4 END,
    field5 = CASE WHEN :field = 5 THEN ycsb_value() ELSE field5 END,
    field6 = CASE WHEN :field = 6 THEN ycsb_value() ELSE field6 END,
    field7 = CASE WHEN :field = 7 THEN ycsb_value() ELSE field7 END,
    field8 = CASE WHEN :field = 8 THEN ycsb_value() ELSE field8 END,
    field9 = CASE WHEN :field = 9 THEN ycsb_value() ELSE field9 END
WHERE ycsb_key = :key;
