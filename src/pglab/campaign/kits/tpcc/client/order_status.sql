-- pglab's TPC-C-like kit (client mode): Order-Status (clause 2.6), read-only
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set by_name random(1, 100) <= 60
\set last_n ((random(0, 255) | random(0, 999)) + 223) % 1000
\set c_id (((random(0, 1023) | random(1, 3000)) + 259) % 3000) + 1
BEGIN;
\if :by_name
SELECT tpcc_customer_by_name(:w_id, :d_id, :last_n) AS c_id \gset
\endif
SELECT c_balance, c_first, c_middle, c_last FROM customer
WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
SELECT o_id, o_entry_d, o_carrier_id FROM orders
WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id ORDER BY o_id DESC LIMIT 1 \gset
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
WHERE ol_w_id = :w_id AND ol_d_id = :d_id AND ol_o_id = :o_id;
COMMIT;
