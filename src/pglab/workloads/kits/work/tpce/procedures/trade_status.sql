-- pglab's TPC-E-like kit (procedures mode): Trade-Status (clause 3.3.9), read-only
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set acct random(1, :customers * 5)
SELECT tpce_trade_status(:acct);
