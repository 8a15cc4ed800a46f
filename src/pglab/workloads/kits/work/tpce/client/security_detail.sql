-- pglab's TPC-E-like kit (client mode): Security-Detail (clause 3.3.5), read-only: its one frame
-- as the statements it reads by: the security, its company and exchange with their addresses,
-- 3 competitors, 20 quarters of financials, max_rows days of market data from a day, the last
-- trade, and 2 news items (their full text when access_lob)
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set s_num random(1, :customers * 685 / 1000)
\set max_rows random(5, 20)
\set start_day random(0, 239)
\set access_lob random(1, 100) <= 1
BEGIN;
SELECT s_co_id AS co, s_name, co_name, co_sp_rate, co_ceo, co_desc, co_open_date, co_st_id,
       ca.ad_line1, ca.ad_line2, zca.zc_town, zca.zc_div, ca.ad_zc_code, ca.ad_ctry,
       s_num_out, s_start_date, s_exch_date, s_pe, s_52wk_high, s_52wk_high_date,
       s_52wk_low, s_52wk_low_date, s_dividend, s_yield, zea.zc_div AS ex_zc_div,
       ea.ad_ctry AS ex_ad_ctry, ea.ad_line1 AS ex_ad_line1, ea.ad_line2 AS ex_ad_line2,
       zea.zc_town AS ex_zc_town, ea.ad_zc_code AS ex_ad_zc_code, ex_close, ex_desc, ex_name,
       ex_num_symb, ex_open
FROM security JOIN company ON co_id = s_co_id JOIN address ca ON ca.ad_id = co_ad_id
JOIN zip_code zca ON zca.zc_code = ca.ad_zc_code JOIN exchange ON ex_id = s_ex_id
JOIN address ea ON ea.ad_id = ex_ad_id JOIN zip_code zea ON zea.zc_code = ea.ad_zc_code
WHERE s_symb = tpce_symbol(:s_num) \gset
SELECT co_name, in_name FROM company_competitor JOIN company ON co_id = cp_comp_co_id
JOIN industry ON in_id = cp_in_id WHERE cp_co_id = :co LIMIT 3;
SELECT fi_year, fi_qtr, fi_qtr_start_date, fi_revenue, fi_net_earn, fi_basic_eps, fi_dilut_eps,
       fi_margin, fi_inventory, fi_assets, fi_liability, fi_out_basic, fi_out_dilut
FROM financial WHERE fi_co_id = :co ORDER BY fi_year, fi_qtr LIMIT 20;
SELECT dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market
WHERE dm_s_symb = tpce_symbol(:s_num) AND dm_date >= tpce_day(:start_day)
ORDER BY dm_date LIMIT :max_rows;
SELECT lt_price, lt_open_price, lt_vol FROM last_trade WHERE lt_s_symb = tpce_symbol(:s_num);
\if :access_lob
SELECT ni_item, ni_dts, ni_source, ni_author FROM news_xref JOIN news_item ON ni_id = nx_ni_id
WHERE nx_co_id = :co LIMIT 2;
\else
SELECT ni_dts, ni_source, ni_author, ni_headline, ni_summary FROM news_xref
JOIN news_item ON ni_id = nx_ni_id WHERE nx_co_id = :co LIMIT 2;
\endif
COMMIT;
