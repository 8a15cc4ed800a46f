-- pglab's TPC-E-like kit (client mode): Trade-Result (clause 3.3.8), frames 1-6 as statements,
-- for the oldest trade in the market's queue that no other Trade-Result holds (none when the
-- queue is empty: counted in tpce_idle). Locks in procedures mode's order: the trade, the
-- holding summary, the account, the holdings (in the order they are sold), the broker. The
-- values one frame passes to the next are carried in pgbench's variables (numbers only: a
-- symbol as its number, texts read again where a statement needs them); the holdings sold or
-- covered are one set-based statement (pgbench has no loops). Every variable a branch may skip
-- is set first, as pgbench keeps a client's variables from one transaction to the next.
\set covered 0
\set covered_value 0
\set tax 0
BEGIN;
WITH q AS (
    DELETE FROM tpce_submitted
    WHERE sq_t_id = (SELECT sq_t_id FROM tpce_submitted ORDER BY sq_dts, sq_t_id LIMIT 1
                     FOR UPDATE SKIP LOCKED)
    RETURNING sq_t_id
)
SELECT coalesce((SELECT sq_t_id FROM q), 0) AS tid \gset
\if :tid = 0
INSERT INTO tpce_idle VALUES (now());
\else
-- frame 1: the trade, its type, the market's price, the account's holding of the symbol
SELECT t_ca_id AS acct, rtrim(substr(t_s_symb, 5))::int AS s_num, t_qty AS qty,
       t_lifo::int AS t_lifo, tt_is_sell::int AS is_sell, tt_name, lt_price AS price
FROM trade JOIN trade_type ON tt_id = t_tt_id JOIN last_trade ON lt_s_symb = t_s_symb
WHERE t_id = :tid FOR UPDATE OF trade \gset
\set sign 1 - 2 * :is_sell
INSERT INTO holding_summary VALUES (:acct, tpce_symbol(:s_num), 0) ON CONFLICT DO NOTHING;
SELECT hs_qty AS held FROM holding_summary
WHERE hs_ca_id = :acct AND hs_s_symb = tpce_symbol(:s_num) FOR UPDATE \gset
-- frame 2: the account; holdings sold (or shorts covered) LIFO or FIFO, then a new holding
-- for what is left, each change in HOLDING_HISTORY
SELECT ca_c_id AS cust, ca_b_id AS brk, ca_tax_st AS tax_st FROM customer_account
WHERE ca_id = :acct FOR UPDATE \gset
\if :held * :sign < 0
SELECT h_t_id, h_qty, h_price FROM holding
WHERE h_ca_id = :acct AND h_s_symb = tpce_symbol(:s_num)
ORDER BY CASE WHEN :t_lifo = 1 THEN h_dts END DESC, h_dts, h_t_id FOR UPDATE;
-- each holding in that order takes what the trade still needs: all of it (deleted) or part
WITH h AS (
    SELECT h_t_id, h_qty, h_price,
           sum(abs(h_qty)) OVER (ORDER BY CASE WHEN :t_lifo = 1 THEN h_dts END DESC, h_dts,
                                          h_t_id) - abs(h_qty) AS before
    FROM holding WHERE h_ca_id = :acct AND h_s_symb = tpce_symbol(:s_num)
), used AS (
    SELECT h_t_id, h_qty, h_price, least(abs(h_qty), :qty - before) AS n FROM h
    WHERE before < :qty
), changed AS (
    UPDATE holding SET h_qty = holding.h_qty + :sign * used.n FROM used
    WHERE holding.h_t_id = used.h_t_id AND used.n < abs(used.h_qty)
), gone AS (
    DELETE FROM holding USING used
    WHERE holding.h_t_id = used.h_t_id AND used.n = abs(used.h_qty)
), history AS (
    INSERT INTO holding_history SELECT h_t_id, :tid::bigint, h_qty, h_qty + :sign * n FROM used
)
SELECT coalesce(sum(n), 0) AS covered, coalesce(sum(n * h_price), 0) AS covered_value
FROM used \gset
\endif
\set rest :sign * (:qty - :covered)
\if :rest <> 0
WITH h AS (
    INSERT INTO holding VALUES (:tid, :acct, tpce_symbol(:s_num), localtimestamp,
                                :price::numeric, :rest)
    RETURNING h_t_id, h_qty
)
INSERT INTO holding_history SELECT h_t_id, h_t_id, 0, h_qty FROM h;
\endif
\set new_qty :held + :sign * :qty
\if :new_qty = 0
DELETE FROM holding_summary WHERE hs_ca_id = :acct AND hs_s_symb = tpce_symbol(:s_num);
\else
UPDATE holding_summary SET hs_qty = :new_qty
WHERE hs_ca_id = :acct AND hs_s_symb = tpce_symbol(:s_num);
\endif
-- frame 3: the tax on a profitable sale (or cover) of a taxable account: the holdings' cost
-- against the market's price
\if :covered > 0 AND (:tax_st = 1 OR :tax_st = 2)
SELECT CASE WHEN sell > buy
            THEN round((sell - buy) * (SELECT sum(tx_rate) FROM taxrate
                                       JOIN customer_taxrate ON cx_tx_id = tx_id
                                       WHERE cx_c_id = :cust), 2)
            ELSE 0 END AS tax
FROM (SELECT CASE WHEN :is_sell = 1 THEN :covered * :price::numeric
                  ELSE :covered_value::numeric END AS sell,
             CASE WHEN :is_sell = 1 THEN :covered_value::numeric
                  ELSE :covered * :price::numeric END AS buy) AS v \gset
\endif
-- frame 4: the commission of the customer's tier, the trade's type, exchange and quantity
SELECT round(cr_rate / 100 * t_qty * :price::numeric, 2) AS comm, s_name
FROM trade JOIN security ON s_symb = t_s_symb JOIN customer ON c_id = :cust
JOIN commission_rate ON cr_c_tier = c_tier AND cr_tt_id = t_tt_id AND cr_ex_id = s_ex_id
     AND cr_from_qty <= t_qty AND cr_to_qty >= t_qty
WHERE t_id = :tid \gset
-- frame 5: the trade completed, its history, the broker's counts
WITH t AS (
    UPDATE trade SET t_comm = :comm::numeric, t_tax = :tax::numeric, t_dts = localtimestamp,
                     t_st_id = 'CMPT', t_trade_price = :price::numeric
    WHERE t_id = :tid
    RETURNING t_id
), h AS (
    INSERT INTO trade_history SELECT t_id, localtimestamp, 'CMPT' FROM t
)
UPDATE broker SET b_comm_total = b_comm_total + :comm::numeric, b_num_trades = b_num_trades + 1
WHERE b_id = :brk;
-- frame 6: the settlement; a cash trade's cash transaction and the account's balance
WITH v AS (
    SELECT t_id, t_is_cash,
           CASE WHEN tt_is_sell THEN t_qty ELSE -t_qty END * t_trade_price - t_chrg - t_comm
               - t_tax AS amount,
           tt_name || ' ' || t_qty || ' shares of ' || s_name AS name
    FROM trade JOIN trade_type ON tt_id = t_tt_id JOIN security ON s_symb = t_s_symb
    WHERE t_id = :tid
), se AS (
    INSERT INTO settlement
    SELECT t_id, CASE WHEN t_is_cash THEN 'Cash Account' ELSE 'Margin' END, current_date + 2,
           amount
    FROM v
), ct AS (
    INSERT INTO cash_transaction SELECT t_id, localtimestamp, amount, name FROM v WHERE t_is_cash
)
UPDATE customer_account SET ca_bal = ca_bal + v.amount FROM v
WHERE ca_id = :acct AND v.t_is_cash;
\endif
COMMIT;
