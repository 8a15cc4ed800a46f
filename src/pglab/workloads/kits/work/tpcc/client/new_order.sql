-- pglab's TPC-C-like kit (client mode): New-Order (clause 2.4), committed
-- pglab: include args/new_order.sql
BEGIN;
SELECT w_tax, c_discount, c_last, c_credit FROM warehouse, customer
WHERE w_id = :w_id AND c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id
RETURNING d_next_o_id - 1 AS o_id, d_tax \gset
INSERT INTO orders VALUES (:o_id, :d_id, :w_id, :c_id, now(), NULL, :ol_cnt,
    (SELECT bool_and(s = :w_id)::int FROM unnest((ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[])[1 : :ol_cnt]) AS s));
INSERT INTO new_order VALUES (:o_id, :d_id, :w_id);
-- the stock of the order's items, read and locked in (warehouse, item) order
SELECT s_quantity, s_data FROM stock
WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest((ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[])[1 : :ol_cnt],
                                                 (ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[1 : :ol_cnt]))
ORDER BY s_w_id, s_i_id FOR UPDATE;
-- the stock updated and the order's lines written: one statement for all the lines
WITH l AS (
    SELECT i, s, q, n::int AS n
    FROM unnest((ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[1 : :ol_cnt],
                (ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[])[1 : :ol_cnt],
                (ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9, :q10, :q11, :q12, :q13, :q14, :q15]::int[])[1 : :ol_cnt])
         WITH ORDINALITY AS l(i, s, q, n)
), g AS (
    -- an item may be on several lines: UPDATE ... FROM changes a row once, so its lines are
    -- added up first and the stock row is updated once for all of them (clause 2.4.2.2 updates
    -- it per line)
    SELECT s, i, sum(q)::int AS q, count(*)::int AS lines FROM l GROUP BY s, i
), st AS (
    UPDATE stock SET
        -- per line: S_QUANTITY - q if that leaves 10 or more, else S_QUANTITY - q + 91. Over
        -- the lines of one item that is 10 + (S_QUANTITY - 10 - their sum) mod 91, since
        -- S_QUANTITY stays within 10..100 (one line: the same as the clause's rule)
        s_quantity = 10 + ((s_quantity - 10 - g.q) % 91 + 91) % 91,
        s_ytd = s_ytd + g.q, s_order_cnt = s_order_cnt + g.lines,
        s_remote_cnt = s_remote_cnt + CASE WHEN g.s <> :w_id THEN g.lines ELSE 0 END
    FROM g WHERE s_w_id = g.s AND s_i_id = g.i
    RETURNING s_w_id, s_i_id, (ARRAY[s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
        s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10])[:d_id] AS info
)
INSERT INTO order_line
SELECT :o_id, :d_id, :w_id, l.n, l.i, l.s, NULL, l.q, l.q * i_price, st.info
FROM l JOIN item ON i_id = l.i JOIN st ON st.s_w_id = l.s AND st.s_i_id = l.i;
COMMIT;
