-- pglab's TPC-C-like kit (procedures mode): Stock-Level (clause 2.8), read-only
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set threshold random(10, 20)
SELECT tpcc_stock_level(:w_id, :d_id, :threshold);
