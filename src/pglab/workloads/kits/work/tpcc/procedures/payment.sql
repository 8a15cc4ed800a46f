-- pglab's TPC-C-like kit (procedures mode): Payment (clause 2.5)
-- pglab: include args/payment.sql
SELECT tpcc_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :by_name, :last_n,
                    :cents / 100.0);
