-- pglab's TPC-E-like kit (procedures mode): Broker-Volume (clause 3.3.1), read-only
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set brokers random(20, 40)
\set first_b random(1, greatest(1, :customers / 100 - :brokers + 1))
\set sector random(0, 11)
SELECT tpce_broker_volume(:first_b, :brokers, :sector);
