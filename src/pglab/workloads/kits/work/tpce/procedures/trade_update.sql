-- pglab's TPC-E-like kit (procedures mode): Trade-Update (clause 3.3.10): frames 1 and 2 33%
-- each, frame 3 34%
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set frame CASE WHEN :draw <= 33 THEN 1 WHEN :draw <= 66 THEN 2 ELSE 3 END
\set ids random(0, 1000000000)
\set acct random(1, :customers * 5)
\set s_num random(1, :customers * 685 / 1000)
\set start_day random(0, 229)
SELECT tpce_trade_update(:frame, :customers * 5, :ids, :acct, :s_num, :start_day);
