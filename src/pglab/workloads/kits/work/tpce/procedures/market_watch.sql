-- pglab's TPC-E-like kit (procedures mode): Market-Watch (clause 3.3.4), read-only: a
-- customer's watch list (35%), an account's holdings (60%) or an industry (5%)
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set kind CASE WHEN :draw <= 35 THEN 1 WHEN :draw <= 95 THEN 2 ELSE 3 END
\set id CASE WHEN :kind = 1 THEN random(1, :customers) WHEN :kind = 2 THEN random(1, :customers * 5) ELSE random(0, 101) END
\set start_day random(0, 259)
SELECT tpce_market_watch(:kind, :id, :start_day);
