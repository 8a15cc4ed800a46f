-- pglab's TPC-C-like kit (client mode): Payment (clause 2.5)
-- pglab: include args/payment.sql
BEGIN;
\if :by_name
SELECT tpcc_customer_by_name(:c_w_id, :c_d_id, :last_n) AS c_id \gset
\endif
WITH w AS (
    UPDATE warehouse SET w_ytd = w_ytd + :cents / 100.0 WHERE w_id = :w_id RETURNING w_name
), d AS (
    UPDATE district SET d_ytd = d_ytd + :cents / 100.0 WHERE d_w_id = :w_id AND d_id = :d_id
    RETURNING d_name
)
INSERT INTO history
SELECT :c_id, :c_d_id, :c_w_id, :d_id, :w_id, now(), :cents / 100.0, w_name || '    ' || d_name
FROM w, d;
UPDATE customer SET
    c_balance = c_balance - :cents / 100.0, c_ytd_payment = c_ytd_payment + :cents / 100.0,
    c_payment_cnt = c_payment_cnt + 1,
    c_data = CASE WHEN c_credit = 'BC'
                  THEN left(concat_ws(' ', c_id, c_d_id, c_w_id, :d_id::int, :w_id::int, :cents / 100.0)
                            || '|' || c_data, 500)
                  ELSE c_data END
WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id
RETURNING c_balance, c_credit;
COMMIT;
