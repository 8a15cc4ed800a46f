-- pglab's TPC-E-like kit (procedures mode): Trade-Lookup (clause 3.3.6), read-only: frames 1,
-- 2 and 3 30% each, frame 4 10%
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set frame CASE WHEN :draw <= 30 THEN 1 WHEN :draw <= 60 THEN 2 WHEN :draw <= 90 THEN 3 ELSE 4 END
\set ids random(0, 1000000000)
\set acct random(1, :customers * 5)
\set s_num random(1, :customers * 685 / 1000)
\set start_day random(0, 229)
SELECT tpce_trade_lookup(:frame, :customers * 5, :ids, :acct, :s_num, :start_day);
