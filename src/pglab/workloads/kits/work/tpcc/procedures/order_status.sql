-- pglab's TPC-C-like kit (procedures mode): Order-Status (clause 2.6), read-only
-- pglab: include args/order_status.sql
SELECT tpcc_order_status(:w_id, :d_id, :c_id, :by_name, :last_n);
