-- pglab's TPC-C-like kit: the consistency conditions of clause 3.3.2.1-12, each as the number of
-- warehouses, districts, customers, orders, order lines or stock rows that break it (0: it
-- holds); then three of pglab's own (13-15): each stock row against the order lines written
-- since the load (order numbers above 3,000) that it supplied, as clause 2.4.2.2 updates it
-- per line. The loaded stock has S_YTD = S_ORDER_CNT = S_REMOTE_CNT = 0, the loaded customers
-- C_BALANCE = -10 and C_YTD_PAYMENT = 10 against one history row of 10, and the loaded orders
-- 1..2,100 are delivered with lines of amount 0: so each condition holds on the loaded data as
-- written. One statement, run after the measured phase: it reads the order lines once.
WITH lines AS (  -- each order's lines: how many, how many undelivered, the delivered amount
    SELECT ol_w_id AS w, ol_d_id AS d, ol_o_id AS o, count(*) AS n,
           count(*) FILTER (WHERE ol_delivery_d IS NULL) AS undelivered,
           coalesce(sum(ol_amount) FILTER (WHERE ol_delivery_d IS NOT NULL), 0) AS delivered
    FROM order_line GROUP BY 1, 2, 3
), delivered AS (  -- each customer's delivered order lines: their amount
    SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(lines.delivered) AS amount
    FROM orders JOIN lines ON (lines.w, lines.d, lines.o) = (o_w_id, o_d_id, o_id)
    GROUP BY 1, 2, 3
), paid AS (  -- each customer's payments
    SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, sum(h_amount) AS amount
    FROM history GROUP BY 1, 2, 3
), customers AS (
    SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment,
           coalesce(delivered.amount, 0) AS delivered, coalesce(paid.amount, 0) AS paid
    FROM customer
    LEFT JOIN delivered ON (delivered.w, delivered.d, delivered.c) = (c_w_id, c_d_id, c_id)
    LEFT JOIN paid ON (paid.w, paid.d, paid.c) = (c_w_id, c_d_id, c_id)
), supplied AS (  -- what the order lines written since the load took of each stock row
    SELECT ol_supply_w_id AS w, ol_i_id AS i, sum(ol_quantity) AS quantity, count(*) AS n,
           count(*) FILTER (WHERE ol_supply_w_id <> ol_w_id) AS remote
    FROM order_line WHERE ol_o_id > 3000 GROUP BY 1, 2
), stocked AS (
    SELECT coalesce(s_ytd, 0) AS ytd, coalesce(s_order_cnt, 0) AS order_cnt,
           coalesce(s_remote_cnt, 0) AS remote_cnt, coalesce(supplied.quantity, 0) AS quantity,
           coalesce(supplied.n, 0) AS n, coalesce(supplied.remote, 0) AS remote
    FROM (SELECT * FROM stock WHERE s_ytd <> 0 OR s_order_cnt <> 0 OR s_remote_cnt <> 0) AS s
    FULL JOIN supplied ON supplied.w = s.s_w_id AND supplied.i = s.s_i_id
)
SELECT 1 AS condition, 'W_YTD = sum(D_YTD)' AS says, count(*) AS violations
FROM warehouse w
WHERE w_ytd IS DISTINCT FROM (SELECT sum(d_ytd) FROM district WHERE d_w_id = w.w_id)
UNION ALL
SELECT 2, 'D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)', count(*)
FROM district d
LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS m FROM orders GROUP BY 1, 2) o
    ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS m FROM new_order GROUP BY 1, 2) n
    ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
WHERE o.m IS DISTINCT FROM d.d_next_o_id - 1
   OR (n.m IS NOT NULL AND n.m <> d.d_next_o_id - 1)
UNION ALL
SELECT 3, 'max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER', count(*)
FROM (SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n
      FROM new_order GROUP BY no_w_id, no_d_id) AS x
WHERE span <> n
UNION ALL
SELECT 4, 'sum(O_OL_CNT) = rows in ORDER-LINE', count(*)
FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s FROM orders GROUP BY 1, 2) AS o
FULL JOIN (SELECT w, d, sum(n) AS n FROM lines GROUP BY 1, 2) AS l
    ON l.w = o.o_w_id AND l.d = o.o_d_id
WHERE o.s IS DISTINCT FROM l.n
UNION ALL
SELECT 5, 'O_CARRIER_ID is null exactly for the orders in NEW-ORDER', count(*)
FROM orders o
FULL JOIN new_order n ON (n.no_w_id, n.no_d_id, n.no_o_id) = (o.o_w_id, o.o_d_id, o.o_id)
WHERE o.o_id IS NULL OR (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)
UNION ALL
SELECT 6, 'O_OL_CNT = the order''s rows in ORDER-LINE', count(*)
FROM orders o
FULL JOIN lines l ON (l.w, l.d, l.o) = (o.o_w_id, o.o_d_id, o.o_id)
WHERE o.o_ol_cnt IS DISTINCT FROM l.n
UNION ALL
SELECT 7, 'OL_DELIVERY_D is null exactly for the lines of orders without O_CARRIER_ID',
       count(*)
FROM orders o JOIN lines l ON (l.w, l.d, l.o) = (o.o_w_id, o.o_d_id, o.o_id)
WHERE CASE WHEN o.o_carrier_id IS NULL THEN l.undelivered <> l.n ELSE l.undelivered <> 0 END
UNION ALL
SELECT 8, 'W_YTD = sum(H_AMOUNT) of the warehouse', count(*)
FROM warehouse w
LEFT JOIN (SELECT h_w_id, sum(h_amount) AS s FROM history GROUP BY 1) h ON h.h_w_id = w.w_id
WHERE w.w_ytd IS DISTINCT FROM h.s
UNION ALL
SELECT 9, 'D_YTD = sum(H_AMOUNT) of the district', count(*)
FROM district d
LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS s FROM history GROUP BY 1, 2) h
    ON (h.h_w_id, h.h_d_id) = (d.d_w_id, d.d_id)
WHERE d.d_ytd IS DISTINCT FROM h.s
UNION ALL
SELECT 10, 'C_BALANCE = sum(OL_AMOUNT) delivered - sum(H_AMOUNT) of the customer', count(*)
FROM customers WHERE c_balance IS DISTINCT FROM delivered - paid
UNION ALL
SELECT 11, 'rows in ORDER - rows in NEW-ORDER = 2,100 + orders delivered since the load', count(*)
FROM (SELECT o_w_id, o_d_id, count(*) AS n,
             count(*) FILTER (WHERE o_carrier_id IS NOT NULL) - 2100 AS since
      FROM orders GROUP BY 1, 2) AS o
LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS n FROM new_order GROUP BY 1, 2) AS n
    ON (n.no_w_id, n.no_d_id) = (o.o_w_id, o.o_d_id)
WHERE o.n - coalesce(n.n, 0) <> 2100 + o.since
UNION ALL
SELECT 12, 'C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT) delivered to the customer', count(*)
FROM customers WHERE c_balance + c_ytd_payment IS DISTINCT FROM delivered
UNION ALL
SELECT 13, 'S_YTD = sum(OL_QUANTITY) of the lines it supplied since the load', count(*)
FROM stocked WHERE ytd <> quantity
UNION ALL
SELECT 14, 'S_ORDER_CNT = the lines it supplied since the load', count(*)
FROM stocked WHERE order_cnt <> n
UNION ALL
SELECT 15, 'S_REMOTE_CNT = the lines it supplied to another warehouse since the load', count(*)
FROM stocked WHERE remote_cnt <> remote
ORDER BY 1
