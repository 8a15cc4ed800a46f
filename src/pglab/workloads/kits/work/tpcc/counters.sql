-- pglab's TPC-C-like kit: what is counted just before and just after the measured pgbench run
-- (their differences are the phase's): the orders written, as the sum of D_NEXT_O_ID (each
-- committed New-Order adds one; a rolled-back one adds nothing), and Delivery's skipped
-- districts (delivery_skip's rows). Cheap at any scale: ten rows per warehouse, and a table
-- that stays empty unless a district runs out of undelivered orders.
SELECT 'orders' AS counter, sum(d_next_o_id)::bigint AS value FROM district
UNION ALL
SELECT 'delivery_skips', count(*) FROM delivery_skip
