-- pglab's TPC-C-like kit (client mode): Stock-Level (clause 2.8), read-only
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set threshold random(10, 20)
SELECT d_next_o_id FROM district WHERE d_w_id = :w_id AND d_id = :d_id \gset
SELECT count(DISTINCT s_i_id) FROM order_line, stock
WHERE ol_w_id = :w_id AND ol_d_id = :d_id
  AND ol_o_id < :d_next_o_id AND ol_o_id >= :d_next_o_id - 20
  AND s_w_id = :w_id AND s_i_id = ol_i_id AND s_quantity < :threshold;
