-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
-- an order: 90% by the account's owner; market buy 30%, market sell 30%, limit buy 20%,
-- limit sell 10%, stop-loss 10% (kind); 100 to 800 shares; LIFO half the time; 8% on margin;
-- a limit order's price 95% to 105% of the last
\set acct random(1, :customers * 5)
\set owner random(1, 100) <= 90
\set s_num random(1, :customers * 685 / 1000)
\set kind random(1, 100)
\set qty 100 * random(1, 8)
\set lifo random(1, 100) <= 50
\set margin random(1, 100) <= 8
\set limit_pct random(95, 105)
