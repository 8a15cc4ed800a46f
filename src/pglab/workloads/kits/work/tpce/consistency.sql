-- pglab's TPC-E-like kit: its consistency conditions (pglab's own; TPC-E's clause 3's ACID
-- tests are not these), each as the number of accounts, holdings, trades or brokers that break
-- it (0: it holds). The generator loads data on which each holds (an account's balance is what
-- its cash trades settled, a broker's counts its accounts' completed trades); each transaction
-- keeps them. Run after the load and after every measured phase: one statement.
WITH signed AS (  -- the completed trades' quantities, buys up and sells down
    SELECT t_ca_id AS ca, t_s_symb AS symb, sum(CASE WHEN tt_is_sell THEN -t_qty ELSE t_qty END)
           AS qty
    FROM trade JOIN trade_type ON tt_id = t_tt_id
    WHERE t_st_id = 'CMPT' GROUP BY 1, 2
), held AS (
    SELECT h_ca_id AS ca, h_s_symb AS symb, sum(h_qty) AS qty,
           count(*) FILTER (WHERE h_qty > 0) AS longs, count(*) FILTER (WHERE h_qty < 0) AS shorts,
           count(*) FILTER (WHERE h_qty = 0) AS empty
    FROM holding GROUP BY 1, 2
), completed AS (
    SELECT t_id, t_ca_id, t_is_cash, t_qty, t_trade_price, t_chrg, t_comm, t_tax, tt_is_sell,
           se_amt, ct_amt, se_t_id IS NOT NULL AS settled, ct_t_id IS NOT NULL AS paid
    FROM trade JOIN trade_type ON tt_id = t_tt_id
    LEFT JOIN settlement ON se_t_id = t_id LEFT JOIN cash_transaction ON ct_t_id = t_id
    WHERE t_st_id = 'CMPT'
)
SELECT 1 AS condition, 'HS_QTY = sum(H_QTY) of the account''s holdings of the symbol' AS says,
       count(*) AS violations
FROM holding_summary FULL JOIN held ON (ca, symb) = (hs_ca_id, hs_s_symb)
WHERE hs_qty IS DISTINCT FROM held.qty OR hs_qty = 0
UNION ALL
SELECT 2, 'HS_QTY = the completed trades'' quantities (buys less sells) of the account and symbol',
       count(*)
FROM holding_summary FULL JOIN signed ON (ca, symb) = (hs_ca_id, hs_s_symb)
WHERE coalesce(hs_qty, 0) <> coalesce(signed.qty, 0)
UNION ALL
SELECT 3, 'an account''s holdings of a symbol are all long or all short, none empty', count(*)
FROM held WHERE (longs > 0 AND shorts > 0) OR empty > 0
UNION ALL
SELECT 4, 'CA_BAL = sum(CT_AMT) of the account''s cash transactions', count(*)
FROM customer_account
LEFT JOIN (SELECT t_ca_id, sum(ct_amt) AS amt FROM trade JOIN cash_transaction ON ct_t_id = t_id
           GROUP BY 1) AS cash ON t_ca_id = ca_id
WHERE ca_bal <> coalesce(cash.amt, 0)
UNION ALL
SELECT 5, 'a completed trade has a settlement; a cash trade a cash transaction of its amount',
       count(*)
FROM completed WHERE NOT settled OR paid <> t_is_cash OR (paid AND ct_amt <> se_amt)
UNION ALL
SELECT 6, 'SE_AMT = ±T_QTY × T_TRADE_PRICE − T_CHRG − T_COMM − T_TAX', count(*)
FROM completed
WHERE se_amt <> CASE WHEN tt_is_sell THEN t_qty * t_trade_price
                     ELSE -t_qty * t_trade_price END - t_chrg - t_comm - t_tax
UNION ALL
SELECT 7, 'settlements and cash transactions are of completed trades only', count(*)
FROM trade
WHERE t_st_id <> 'CMPT' AND (EXISTS (SELECT FROM settlement WHERE se_t_id = t_id)
                             OR EXISTS (SELECT FROM cash_transaction WHERE ct_t_id = t_id))
UNION ALL
SELECT 8, 'trades SBMT are those in the market''s queue, PNDG those in TRADE_REQUEST', count(*)
FROM trade
FULL JOIN tpce_submitted ON sq_t_id = t_id AND t_st_id = 'SBMT'
FULL JOIN trade_request ON tr_t_id = t_id AND t_st_id = 'PNDG'
WHERE (t_st_id = 'SBMT') <> (sq_t_id IS NOT NULL) OR (t_st_id = 'PNDG') <> (tr_t_id IS NOT NULL)
   OR t_id IS NULL OR t_st_id NOT IN ('CMPT', 'SBMT', 'PNDG')
UNION ALL
SELECT 9, 'each trade''s history has its present status', count(*)
FROM trade
WHERE NOT EXISTS (SELECT FROM trade_history WHERE th_t_id = t_id AND th_st_id = t_st_id)
UNION ALL
SELECT 10, 'B_NUM_TRADES and B_COMM_TOTAL = the completed trades of the broker''s accounts',
       count(*)
FROM broker
LEFT JOIN (SELECT ca_b_id, count(*) AS n, sum(t_comm) AS comm FROM completed
           JOIN customer_account ON ca_id = t_ca_id GROUP BY 1) AS b ON ca_b_id = b_id
WHERE b_num_trades <> coalesce(b.n, 0) OR b_comm_total <> coalesce(b.comm, 0)
ORDER BY 1
