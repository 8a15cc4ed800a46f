-- pglab's TPC-E-like kit (client mode): Broker-Volume (clause 3.3.1), read-only: its one frame,
-- the volume of pending orders of a list of brokers in a sector, one row per broker
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set brokers random(20, 40)
\set first_b random(1, greatest(1, :customers / 100 - :brokers + 1))
\set sector random(0, 11)
\set last_b :first_b + :brokers
SELECT b_name, sum(tr_qty * tr_bid_price) AS volume
FROM trade_request JOIN broker ON b_id = tr_b_id JOIN security ON s_symb = tr_s_symb
JOIN company ON co_id = s_co_id JOIN industry ON in_id = co_in_id
JOIN sector ON sc_id = in_sc_id
WHERE b_name IN (SELECT b_name FROM broker WHERE b_id >= :first_b AND b_id < :last_b)
  AND sc_id = lpad(:sector::text, 2, '0')
GROUP BY b_name ORDER BY 2 DESC;
