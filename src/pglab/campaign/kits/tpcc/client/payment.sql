-- pglab's TPC-C-like kit (client mode): Payment (clause 2.5)
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set remote :warehouses > 1 AND random(1, 100) <= 15
\set c_w_id CASE WHEN :remote THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set c_d_id CASE WHEN :remote THEN random(1, 10) ELSE :d_id END
\set by_name random(1, 100) <= 60
\set last_n ((random(0, 255) | random(0, 999)) + 223) % 1000
\set c_id (((random(0, 1023) | random(1, 3000)) + 259) % 3000) + 1
\set cents random(100, 500000)
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
                  THEN left(concat_ws(' ', c_id, c_d_id, c_w_id, :d_id, :w_id, :cents / 100.0)
                            || '|' || c_data, 500)
                  ELSE c_data END
WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id
RETURNING c_balance, c_credit;
COMMIT;
