-- pglab's TPC-E-like kit (client mode): Trade-Lookup (clause 3.3.6), read-only: frames 1, 2 and 3
-- 30% each, frame 4 10%. The trades a frame reads are drawn as in procedures mode (frame 1's
-- 20 ids of the loaded history by tpce_trade_ids; frames 2-4's by tpce_trades_of: an
-- account's first 20 from a day, a symbol's first 20 over 30 days from a day, an account's
-- first from a day); each frame's reads are the statements below
-- :customers is given by pglab (pgbench -D): 5 accounts each, 685 securities and 10 brokers
-- per 1,000 customers; customers, accounts and securities drawn uniformly (no tiers)
\set draw random(1, 100)
\set frame CASE WHEN :draw <= 30 THEN 1 WHEN :draw <= 60 THEN 2 WHEN :draw <= 90 THEN 3 ELSE 4 END
\set ids random(0, 1000000000)
\set acct random(1, :customers * 5)
\set s_num random(1, :customers * 685 / 1000)
\set start_day random(0, 229)
\if :frame = 4
-- frame 4: the holdings' changes of the account's first trade from the day
SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty FROM holding_history
WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history
                    WHERE hh_t_id = (tpce_trades_of(4, :acct, :s_num, :start_day))[1])
LIMIT 20;
\else
-- frames 1-3: each trade with its settlement and cash transaction, then the trades' history
BEGIN;
SELECT t_id, t_bid_price, t_exec_name, t_is_cash, tt_is_mrkt, t_trade_price,
       se_amt, se_cash_due_date, se_cash_type, ct_amt, ct_dts, ct_name
FROM trade JOIN trade_type ON tt_id = t_tt_id LEFT JOIN settlement ON se_t_id = t_id
LEFT JOIN cash_transaction ON ct_t_id = t_id
WHERE t_id = ANY (CASE WHEN :frame = 1 THEN tpce_trade_ids(:customers * 5, :ids)
                       ELSE tpce_trades_of(:frame, :acct, :s_num, :start_day) END);
SELECT th_t_id, th_dts, th_st_id FROM trade_history
WHERE th_t_id = ANY (CASE WHEN :frame = 1 THEN tpce_trade_ids(:customers * 5, :ids)
                          ELSE tpce_trades_of(:frame, :acct, :s_num, :start_day) END)
ORDER BY th_t_id, th_dts;
COMMIT;
\endif
