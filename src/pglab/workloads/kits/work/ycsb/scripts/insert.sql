-- pglab's YCSB-like kit: insert one record after the loaded ones
-- pglab gives :records, :clients, :distribution (0 zipfian, 1 uniform, 2 latest) and
-- :inserted (this client's inserts so far, from 0) with pgbench -D
\set inserted :inserted + 1
-- each client's keys apart from the others' (:client_id from 0); a key an earlier run of a
-- kept dataset inserted is left as it is
\set key :records + (:inserted - 1) * :clients + :client_id + 1
INSERT INTO usertable VALUES (:key, @FIELD_VALUES@)
ON CONFLICT (ycsb_key) DO NOTHING;
