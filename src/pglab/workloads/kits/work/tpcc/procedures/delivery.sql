-- pglab's TPC-C-like kit (procedures mode): Delivery (clause 2.7), run at once rather than queued
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set carrier random(1, 10)
SELECT tpcc_delivery(:w_id, :carrier);
