-- pglab's TPC-C-like kit (client mode): Order-Status (clause 2.6), read-only
-- pglab: include args/order_status.sql
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
