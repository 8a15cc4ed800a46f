-- pglab's TPC-E-like kit (procedures mode): Security-Detail (clause 3.3.5), read-only
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set s_num random(1, :customers * 685 / 1000)
\set max_rows random(5, 20)
\set start_day random(0, 239)
\set access_lob random(1, 100) <= 1
SELECT tpce_security_detail(:s_num, :max_rows, :start_day, :access_lob);
