-- pglab's TPC-E-like kit (client mode): Trade-Update (clause 3.3.10): frames 1 and 2 33% each,
-- frame 3 34%; as Trade-Lookup's frames 1-3 (the trades drawn as in procedures mode), each
-- changing what it reads: frame 1 the executor's name of up to 20 trades (" X " in, or out
-- again), frame 2 an account's trades' settlement cash type, frame 3 a symbol's trades' cash
-- transaction name. The trades are locked first, in id order, and their ids kept (pgbench's
-- variables :t1 to :t20, 0 for none) for the statements after
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set frame CASE WHEN :draw <= 33 THEN 1 WHEN :draw <= 66 THEN 2 ELSE 3 END
\set ids random(0, 1000000000)
\set acct random(1, :customers * 5)
\set s_num random(1, :customers * 685 / 1000)
\set start_day random(0, 229)
BEGIN;
SELECT coalesce(ids[1], 0) AS t1, coalesce(ids[2], 0) AS t2, coalesce(ids[3], 0) AS t3, coalesce(ids[4], 0) AS t4,
       coalesce(ids[5], 0) AS t5, coalesce(ids[6], 0) AS t6, coalesce(ids[7], 0) AS t7, coalesce(ids[8], 0) AS t8,
       coalesce(ids[9], 0) AS t9, coalesce(ids[10], 0) AS t10, coalesce(ids[11], 0) AS t11, coalesce(ids[12], 0) AS t12,
       coalesce(ids[13], 0) AS t13, coalesce(ids[14], 0) AS t14, coalesce(ids[15], 0) AS t15, coalesce(ids[16], 0) AS t16,
       coalesce(ids[17], 0) AS t17, coalesce(ids[18], 0) AS t18, coalesce(ids[19], 0) AS t19, coalesce(ids[20], 0) AS t20
FROM (SELECT ARRAY(SELECT t_id FROM trade
                   WHERE t_id = ANY (CASE WHEN :frame = 1 THEN tpce_trade_ids(:customers * 5, :ids)
                                          ELSE tpce_trades_of(:frame, :acct, :s_num, :start_day) END)
                   ORDER BY t_id FOR UPDATE) AS ids) AS locked \gset
\if :frame = 1
-- frame 1: the trades, and each one's executor's name changed
SELECT t_id, t_bid_price, t_exec_name, t_is_cash, t_trade_price FROM trade
WHERE t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
UPDATE trade SET t_exec_name = CASE WHEN t_exec_name LIKE '% X %'
                                    THEN replace(t_exec_name, ' X ', ' ')
                                    ELSE replace(t_exec_name, ' ', ' X ') END
WHERE t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
\elif :frame = 2
-- frame 2: the trades with their settlements, each settlement's cash type changed
SELECT t_id, t_bid_price, t_exec_name, t_is_cash, t_trade_price, se_amt, se_cash_due_date
FROM trade JOIN settlement ON se_t_id = t_id WHERE t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
UPDATE settlement SET se_cash_type = CASE se_cash_type
    WHEN 'Cash Account' THEN 'Cash' WHEN 'Cash' THEN 'Cash Account'
    WHEN 'Margin' THEN 'Margin Account' ELSE 'Margin' END
WHERE se_t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
\else
-- frame 3: the trades with their cash transactions, each one's name changed
SELECT t_id, t_ca_id, t_exec_name, t_is_cash, t_trade_price, t_qty, t_dts, t_tt_id, ct_amt
FROM trade LEFT JOIN cash_transaction ON ct_t_id = t_id WHERE t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
UPDATE cash_transaction SET ct_name = CASE WHEN ct_name LIKE '% shares of %'
                                           THEN replace(ct_name, ' shares of ', ' Shares of ')
                                           ELSE replace(ct_name, ' Shares of ', ' shares of ') END
WHERE ct_t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
\endif
SELECT th_t_id, th_dts, th_st_id FROM trade_history WHERE th_t_id IN (:t1, :t2, :t3, :t4, :t5, :t6, :t7, :t8, :t9, :t10, :t11, :t12, :t13, :t14, :t15, :t16, :t17, :t18, :t19, :t20);
COMMIT;
