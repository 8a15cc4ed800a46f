-- pglab's TPC-E-like kit (client mode): Customer-Position (clause 3.3.2), read-only
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set cust random(1, :customers)
\set by_tax_id random(1, 100) <= 50
\set get_history random(1, 100) <= 50
\set acct_idx random(0, 9)
BEGIN;
-- frame 1: the customer (by id, or by tax id), its accounts' cash and assets at the last
-- prices: the accounts come back as arrays in one row (pgbench's \gset takes one), with the
-- account whose history frame 2 reads
\if :by_tax_id
SELECT coalesce((SELECT c_id FROM customer
                 WHERE c_tax_id = lpad(:cust::text, 9, '0') || 'TX'), 0) AS cust \gset
\endif
SELECT c_st_id, c_l_name, c_f_name, c_tier, c_dob, c_email_1 FROM customer WHERE c_id = :cust;
SELECT count(*) AS accounts,
       coalesce((array_agg(ca_id ORDER BY assets))[(1 + :acct_idx % greatest(count(*), 1))::int],
                0) AS acct,
       array_agg(ca_bal ORDER BY assets) AS balances, array_agg(assets ORDER BY assets) AS assets
FROM (SELECT ca_id, ca_bal, ca_bal + coalesce(sum(hs_qty * lt_price), 0) AS assets
      FROM customer_account LEFT JOIN holding_summary ON hs_ca_id = ca_id
      LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
      WHERE ca_c_id = :cust GROUP BY ca_id, ca_bal ORDER BY 3 LIMIT 10) AS a \gset
-- frame 2: the 10 latest trades of one of its accounts and their statuses (up to 30 rows)
\if :get_history AND :accounts > 0
SELECT t_id, t_s_symb, t_qty, st_name, th_dts
FROM (SELECT t_id FROM trade WHERE t_ca_id = :acct ORDER BY t_dts DESC LIMIT 10) AS t
JOIN trade USING (t_id) JOIN trade_history ON th_t_id = t_id
JOIN status_type ON st_id = th_st_id
ORDER BY th_dts DESC LIMIT 30;
\endif
-- frame 3: the end
COMMIT;
