-- pglab's TPC-E-like kit (procedures mode): Customer-Position (clause 3.3.2), read-only
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set cust random(1, :customers)
\set by_tax_id random(1, 100) <= 50
\set get_history random(1, 100) <= 50
\set acct_idx random(0, 9)
SELECT tpce_customer_position(:cust, :by_tax_id, :get_history, :acct_idx);
