-- pglab's TPC-C-like kit (client mode): Delivery (clause 2.7), run at once rather than queued
-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set carrier random(1, 10)
-- the oldest undelivered order of each district that no other Delivery is delivering (SKIP
-- LOCKED: the next one then), delivered; pgbench has no loops, so the ten districts are one
-- statement. A district is skipped only when it has no such order (clause 2.7.4.2), and the
-- skip is recorded (delivery_skip)
WITH oldest AS (
    SELECT d, n.o
    FROM generate_series(1, 10) AS d
    LEFT JOIN LATERAL (
        SELECT no_o_id AS o FROM new_order WHERE no_w_id = :w_id AND no_d_id = d
        ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED
    ) AS n ON true
), skipped AS (
    INSERT INTO delivery_skip SELECT :w_id, d, now() FROM oldest WHERE o IS NULL
), no AS (
    DELETE FROM new_order USING oldest
    WHERE no_w_id = :w_id AND no_d_id = oldest.d AND no_o_id = oldest.o
    RETURNING no_d_id AS d, no_o_id AS o
), o AS (
    UPDATE orders SET o_carrier_id = :carrier FROM no
    WHERE o_w_id = :w_id AND o_d_id = no.d AND o_id = no.o RETURNING o_d_id, o_id, o_c_id
), ol AS (
    UPDATE order_line SET ol_delivery_d = now() FROM no
    WHERE ol_w_id = :w_id AND ol_d_id = no.d AND ol_o_id = no.o
    RETURNING ol_d_id, ol_o_id, ol_amount
)
UPDATE customer SET c_balance = c_balance + t.amount, c_delivery_cnt = c_delivery_cnt + 1
FROM (SELECT o.o_d_id, o.o_c_id, sum(ol.ol_amount) AS amount
      FROM o JOIN ol ON ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id GROUP BY 1, 2) AS t
WHERE c_w_id = :w_id AND c_d_id = t.o_d_id AND c_id = t.o_c_id;
