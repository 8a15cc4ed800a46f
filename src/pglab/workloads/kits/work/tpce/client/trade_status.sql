-- pglab's TPC-E-like kit (client mode): Trade-Status (clause 3.3.9), read-only: the account's 50
-- latest trades with their status, type, security and exchange, and its customer's and
-- broker's names
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set acct random(1, :customers * 5)
BEGIN;
SELECT t_id, t_dts, st_name, tt_name, t_s_symb, t_qty, t_exec_name, t_chrg, s_name, ex_name
FROM trade JOIN status_type ON st_id = t_st_id JOIN trade_type ON tt_id = t_tt_id
JOIN security ON s_symb = t_s_symb JOIN exchange ON ex_id = s_ex_id
WHERE t_ca_id = :acct ORDER BY t_dts DESC LIMIT 50;
SELECT c_l_name, c_f_name, b_name
FROM customer_account JOIN customer ON c_id = ca_c_id JOIN broker ON b_id = ca_b_id
WHERE ca_id = :acct;
COMMIT;
