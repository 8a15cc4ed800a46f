BEGIN;
-- frame 1: the account, its customer and broker
SELECT ca_c_id AS cust, ca_b_id AS brk, ca_tax_st AS tax_st, c_tier AS tier, c_f_name,
       c_l_name, b_name
FROM customer_account JOIN customer ON c_id = ca_c_id JOIN broker ON b_id = ca_b_id
WHERE ca_id = :acct \gset
-- frame 2: another executor's permission on the account (the owner executes when none)
\if NOT :owner
SELECT ap_acl, ap_f_name, ap_l_name FROM account_permission
WHERE ap_ca_id = :acct AND ap_acl <> '0000' ORDER BY ap_tax_id LIMIT 1;
\endif
-- frame 3: the trade's type; a sell is of one of the symbols the account holds (the draw's
-- one of them: its number kept in :s_num), else a short sale of the drawn symbol
SELECT tt_is_mrkt::int AS is_mrkt, tt_is_sell::int AS is_sell,
       CASE WHEN tt_is_sell
            THEN coalesce((SELECT rtrim(substr(hs_s_symb, 5))::int FROM holding_summary
                           WHERE hs_ca_id = :acct AND hs_qty > 0 ORDER BY hs_s_symb
                           OFFSET :s_num % greatest(1, (SELECT count(*) FROM holding_summary
                                                        WHERE hs_ca_id = :acct AND hs_qty > 0))
                           LIMIT 1), :s_num)
            ELSE :s_num END AS s_num
FROM trade_type WHERE tt_id = tpce_trade_type(:kind) \gset
-- frame 3: the security, its company, its price (a limit order's: the draw's share of it),
-- the account's holding of it, the charge and the commission rate
SELECT s_co_id, s_ex_id, co_name, lt_price AS market,
       CASE WHEN :is_mrkt = 1 THEN lt_price ELSE round(lt_price * :limit_pct / 100.0, 2) END
           AS price,
       coalesce((SELECT hs_qty FROM holding_summary
                 WHERE hs_ca_id = :acct AND hs_s_symb = s_symb), 0) AS held,
       ch_chrg AS chrg, cr_rate AS comm_rate
FROM security JOIN company ON co_id = s_co_id JOIN last_trade ON lt_s_symb = s_symb
JOIN charge ON ch_c_tier = :tier AND ch_tt_id = tpce_trade_type(:kind)
JOIN commission_rate ON cr_c_tier = :tier AND cr_tt_id = tpce_trade_type(:kind)
     AND cr_ex_id = s_ex_id AND cr_from_qty <= :qty AND cr_to_qty >= :qty
WHERE s_symb = tpce_symbol(:s_num) \gset
-- frame 3: what a sale of held shares would realise (the holdings sold LIFO or FIFO), and the
-- tax on it for a taxable account
\if :is_sell = 1 AND :held > 0
WITH h AS (
    SELECT h_qty, h_price,
           sum(h_qty) OVER (ORDER BY CASE WHEN :lifo THEN h_dts END DESC, h_dts, h_t_id)
               - h_qty AS before
    FROM holding WHERE h_ca_id = :acct AND h_s_symb = tpce_symbol(:s_num)
), sold AS (
    SELECT least(h_qty, :qty - before) AS n, h_price FROM h WHERE before < :qty
)
SELECT sum(n * h_price) AS buy_value, sum(n) * :price::numeric AS sell_value,
       CASE WHEN sum(n) * :price::numeric > sum(n * h_price) AND :tax_st IN (1, 2)
            THEN (sum(n) * :price::numeric - sum(n * h_price))
                 * (SELECT sum(tx_rate) FROM taxrate JOIN customer_taxrate ON cx_tx_id = tx_id
                    WHERE cx_c_id = :cust)
            ELSE 0 END AS tax
FROM sold;
\endif
-- frame 3: the customer's assets, for a margin trade
\if :margin
SELECT ca_bal + coalesce(sum(hs_qty * lt_price), 0) AS assets
FROM customer_account LEFT JOIN holding_summary ON hs_ca_id = ca_id
LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
WHERE ca_id = :acct GROUP BY ca_bal;
\endif
-- frame 4: the trade (the executor's name read again: pgbench's variables carry numbers),
-- its request (a limit order) or its place in the market's queue, and its history
WITH t AS (
    INSERT INTO trade VALUES (
        nextval('tpce_trade_id'), localtimestamp,
        CASE WHEN :is_mrkt = 1 THEN 'SBMT' ELSE 'PNDG' END, tpce_trade_type(:kind), NOT :margin,
        tpce_symbol(:s_num), :qty, :price::numeric, :acct,
        coalesce((SELECT ap_f_name || ' ' || ap_l_name FROM account_permission
                  WHERE NOT :owner AND ap_ca_id = :acct AND ap_acl <> '0000'
                  ORDER BY ap_tax_id LIMIT 1),
                 (SELECT c_f_name || ' ' || c_l_name FROM customer WHERE c_id = :cust)),
        NULL, :chrg::numeric, round(:comm_rate::numeric / 100 * :qty * :price::numeric, 2), 0,
        :lifo)
    RETURNING t_id, t_dts, t_st_id, t_tt_id, t_s_symb, t_qty, t_bid_price
), q AS (
    INSERT INTO tpce_submitted SELECT t_id, t_dts FROM t WHERE t_st_id = 'SBMT'
), r AS (
    INSERT INTO trade_request
    SELECT t_id, t_tt_id, t_s_symb, t_qty, t_bid_price, :brk::bigint FROM t WHERE t_st_id = 'PNDG'
)
INSERT INTO trade_history SELECT t_id, t_dts, t_st_id FROM t RETURNING th_t_id AS t_id \gset
