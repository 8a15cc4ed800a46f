-- pglab's TPC-E-like kit (client mode): Market-Watch (clause 3.3.4), read-only: the percentage
-- change in market capitalisation since a day of the securities of a customer's watch list
-- (35%), an account's holdings (60%) or an industry's companies (5%)
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set kind CASE WHEN :draw <= 35 THEN 1 WHEN :draw <= 95 THEN 2 ELSE 3 END
\set id CASE WHEN :kind = 1 THEN random(1, :customers) WHEN :kind = 2 THEN random(1, :customers * 5) ELSE random(0, 101) END
\set start_day random(0, 259)
WITH symbols AS (
    SELECT wi_s_symb AS symb FROM watch_list JOIN watch_item ON wi_wl_id = wl_id
    WHERE :kind = 1 AND wl_c_id = :id
    UNION ALL
    SELECT hs_s_symb FROM holding_summary WHERE :kind = 2 AND hs_ca_id = :id
    UNION ALL
    SELECT s_symb FROM company JOIN security ON s_co_id = co_id
    WHERE :kind = 3 AND co_in_id = tpce_industry(:id)
)
SELECT coalesce(100 * (sum(s_num_out * lt_price) / nullif(sum(s_num_out * dm_close), 0) - 1), 0)
FROM symbols JOIN security ON s_symb = symb JOIN last_trade ON lt_s_symb = symb
JOIN daily_market ON dm_s_symb = symb AND dm_date = tpce_day(:start_day);
