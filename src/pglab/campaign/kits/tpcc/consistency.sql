-- pglab's TPC-C-like kit: the consistency conditions of clause 3.3.2.1-4, each as the number of
-- warehouses or districts that break it (0: it holds)
SELECT 1 AS condition, 'W_YTD = sum(D_YTD)' AS says, count(*) AS violations
FROM warehouse w
WHERE w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w.w_id)
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
FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line GROUP BY 1, 2) AS l
    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
WHERE o.s IS DISTINCT FROM l.n
ORDER BY 1
