-- pglab's TPC-E-like kit (client mode): Market-Feed (clause 3.3.3), its one frame as one
-- statement: the ticker of up to 20 symbols, from the oldest pending limit orders no other
-- Market-Feed holds (the market moved to the first one's limit on each symbol); each symbol's
-- last trade updated, and every pending order on it whose limit the new price meets
-- submitted to the market (its trade SBMT, its history, the market's queue)
WITH r AS (
    SELECT tr_t_id, tr_s_symb, tr_bid_price, tr_qty FROM trade_request
    ORDER BY tr_t_id LIMIT 20 FOR UPDATE SKIP LOCKED
), tick AS (
    SELECT DISTINCT ON (tr_s_symb) tr_s_symb AS symb, tr_bid_price AS price,
           sum(tr_qty) OVER (PARTITION BY tr_s_symb) AS qty
    FROM r ORDER BY tr_s_symb, tr_t_id
), lt AS (
    UPDATE last_trade SET lt_dts = localtimestamp, lt_price = tick.price,
                          lt_vol = lt_vol + tick.qty
    FROM tick WHERE lt_s_symb = tick.symb
    RETURNING lt_s_symb, lt_price
), sent AS (
    SELECT tr_t_id FROM trade_request JOIN lt ON tr_s_symb = lt_s_symb
    WHERE CASE WHEN tr_tt_id = 'TLS' THEN lt_price >= tr_bid_price
               ELSE lt_price <= tr_bid_price END
    ORDER BY tr_t_id FOR UPDATE OF trade_request SKIP LOCKED
), t AS (
    UPDATE trade SET t_dts = localtimestamp, t_st_id = 'SBMT' FROM sent
    WHERE t_id = sent.tr_t_id
), d AS (
    DELETE FROM trade_request USING sent WHERE trade_request.tr_t_id = sent.tr_t_id
), h AS (
    INSERT INTO trade_history SELECT tr_t_id, localtimestamp, 'SBMT' FROM sent
)
INSERT INTO tpce_submitted SELECT tr_t_id, localtimestamp FROM sent;
