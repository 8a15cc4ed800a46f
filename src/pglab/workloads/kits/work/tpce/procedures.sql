-- pglab's TPC-E-like kit, procedures mode: each transaction of TPC-E's clause 3 is one PL/pgSQL
-- function the pgbench scripts call (one round trip per transaction), its frames in order
-- within it (simplified where said). The market exchange emulator's part is pglab's own,
-- simplified: a market order goes to the market's queue (tpce_submitted) as Trade-Order commits;
-- a limit order waits in TRADE_REQUEST until a Market-Feed moves its symbol's price to a limit
-- and so submits it; Trade-Result takes the queue's oldest trade (FOR UPDATE SKIP LOCKED) and
-- completes it at the symbol's last price. So every trade a Trade-Result completes is one a
-- Trade-Order placed, and the data stays consistent (consistency.sql).
--
-- This file is run when the dataset is made and again before each run's phases
-- (``Kit.refresh``): everything here can be run again.

-- security n's symbol (as workloads/tpce/rows.py's symbol())
CREATE OR REPLACE FUNCTION tpce_symbol(n bigint) RETURNS char(15)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'SYMB' || lpad(n::text, 6, '0') $$;

-- industry n's id (as workloads/tpce/rows.py's industry_id())
CREATE OR REPLACE FUNCTION tpce_industry(n int) RETURNS char(2)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT chr(65 + n / 26) || chr(65 + n % 26) $$;

-- the k-th (from 0) of the 260 business days of the loaded daily market, 2025-01-02 (a
-- Thursday: weekday 3 from Monday's 0) to 2025-12-31
CREATE OR REPLACE FUNCTION tpce_day(k int) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT DATE '2025-01-02' + k + 2 * ((k + 3) / 5)
$$;

-- the trade type of Trade-Order's draw 1..100 (clause 3.3.7's mix of orders, simplified):
-- market buy 30%, market sell 30%, limit buy 20%, limit sell 10%, stop-loss 10%
CREATE OR REPLACE FUNCTION tpce_trade_type(kind int) RETURNS char(3)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN kind <= 30 THEN 'TMB' WHEN kind <= 60 THEN 'TMS' WHEN kind <= 80 THEN 'TLB'
                WHEN kind <= 90 THEN 'TLS' ELSE 'TSL' END
$$;

-- 20 trade ids of the loaded history (Trade-Lookup's and Trade-Update's frame 1), from a draw:
-- accounts' ids are 21 apart, the loaded trades the first 20 of each account's
CREATE OR REPLACE FUNCTION tpce_trade_ids(accounts bigint, draw bigint) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(((draw + i * 7919) % accounts) * 21 + 1 + (draw + i) % 20 ORDER BY i)
    FROM generate_series(0, 19) AS i
$$;

-- Trade-Order (clause 3.3.7), frames 1-6; the trade's id. Rolled back by design (frame 5) when
-- roll_back: SQLSTATE PT001, which tpce_trade_order turns into a rollback. A sell is of a
-- symbol the account holds (the draw's one of them), else a short sale of the drawn symbol;
-- frame 2 (another executor's permission) is read, and the owner executes when there is none.
CREATE OR REPLACE FUNCTION tpce_trade_order_work(
    acct bigint, owner bool, s_num int, kind int, qty int, lifo bool, margin bool,
    limit_pct int, roll_back bool
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    cust bigint; brk bigint; tax_st smallint; tier smallint; f_name text; l_name text;
    exec_name text; tt char(3) := tpce_trade_type(kind); is_mrkt bool; is_sell bool;
    symb char(15); co bigint; ex char(6); market numeric; price numeric; held int;
    needed int; buy_value numeric := 0; sell_value numeric := 0; h record; rates numeric;
    tax numeric := 0; comm_rate numeric; chrg numeric; assets numeric; tid bigint;
    status char(4);
BEGIN
    -- frame 1: the account, its customer and broker
    SELECT ca_c_id, ca_b_id, ca_tax_st INTO cust, brk, tax_st
    FROM customer_account WHERE ca_id = acct;
    SELECT c_f_name, c_l_name, c_tier INTO f_name, l_name, tier FROM customer WHERE c_id = cust;
    PERFORM b_name FROM broker WHERE b_id = brk;
    exec_name := f_name || ' ' || l_name;
    -- frame 2: another executor's permission on the account
    IF NOT owner THEN
        SELECT ap_f_name || ' ' || ap_l_name INTO exec_name FROM account_permission
        WHERE ap_ca_id = acct AND ap_acl <> '0000' ORDER BY ap_tax_id LIMIT 1;
        exec_name := coalesce(exec_name, f_name || ' ' || l_name);
    END IF;
    -- frame 3: the security, its price, the holdings a sell would sell, charge and commission
    SELECT tt_is_mrkt, tt_is_sell INTO is_mrkt, is_sell FROM trade_type WHERE tt_id = tt;
    symb := tpce_symbol(s_num);
    IF is_sell THEN
        SELECT hs_s_symb INTO symb FROM holding_summary WHERE hs_ca_id = acct AND hs_qty > 0
        ORDER BY hs_s_symb OFFSET s_num % greatest(1, (SELECT count(*) FROM holding_summary
                                                     WHERE hs_ca_id = acct AND hs_qty > 0))
        LIMIT 1;
        symb := coalesce(symb, tpce_symbol(s_num));
    END IF;
    SELECT s_co_id, s_ex_id INTO co, ex FROM security WHERE s_symb = symb;
    PERFORM co_name FROM company WHERE co_id = co;
    SELECT lt_price INTO market FROM last_trade WHERE lt_s_symb = symb;
    price := CASE WHEN is_mrkt THEN market ELSE round(market * limit_pct / 100.0, 2) END;
    SELECT hs_qty INTO held FROM holding_summary WHERE hs_ca_id = acct AND hs_s_symb = symb;
    IF is_sell AND coalesce(held, 0) > 0 THEN  -- what the sale would realise, for its tax
        needed := qty;
        FOR h IN SELECT h_qty, h_price FROM holding WHERE h_ca_id = acct AND h_s_symb = symb
                 ORDER BY CASE WHEN lifo THEN h_dts END DESC, h_dts LOOP
            EXIT WHEN needed = 0;
            buy_value := buy_value + least(needed, h.h_qty) * h.h_price;
            sell_value := sell_value + least(needed, h.h_qty) * price;
            needed := needed - least(needed, h.h_qty);
        END LOOP;
        IF sell_value > buy_value AND tax_st IN (1, 2) THEN
            SELECT sum(tx_rate) INTO rates FROM taxrate JOIN customer_taxrate ON cx_tx_id = tx_id
            WHERE cx_c_id = cust;
            tax := (sell_value - buy_value) * rates;
        END IF;
    END IF;
    SELECT cr_rate INTO comm_rate FROM commission_rate
    WHERE cr_c_tier = tier AND cr_tt_id = tt AND cr_ex_id = ex
      AND cr_from_qty <= qty AND cr_to_qty >= qty;
    SELECT ch_chrg INTO chrg FROM charge WHERE ch_c_tier = tier AND ch_tt_id = tt;
    IF margin THEN  -- frame 3's customer assets, read for a margin trade
        SELECT ca_bal + coalesce(sum(hs_qty * lt_price), 0) INTO assets
        FROM customer_account LEFT JOIN holding_summary ON hs_ca_id = ca_id
        LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
        WHERE ca_id = acct GROUP BY ca_bal;
    END IF;
    -- frame 4: the trade, its request (a limit order) or its place in the market's queue
    status := CASE WHEN is_mrkt THEN 'SBMT' ELSE 'PNDG' END;
    tid := nextval('tpce_trade_id');
    INSERT INTO trade VALUES (tid, localtimestamp, status, tt, NOT margin, symb, qty, price, acct,
        exec_name, NULL, chrg, round(comm_rate / 100 * qty * price, 2), 0, lifo);
    IF is_mrkt THEN
        INSERT INTO tpce_submitted VALUES (tid, localtimestamp);
    ELSE
        INSERT INTO trade_request VALUES (tid, tt, symb, qty, price, brk);
    END IF;
    INSERT INTO trade_history VALUES (tid, localtimestamp, status);
    -- frame 5: rolled back by design
    IF roll_back THEN
        RAISE EXCEPTION 'trade % rolled back by design', tid USING ERRCODE = 'PT001';
    END IF;
    RETURN tid;  -- frame 6: commit
END
$$;

CREATE OR REPLACE FUNCTION tpce_trade_order(
    acct bigint, owner bool, s_num int, kind int, qty int, lifo bool, margin bool,
    limit_pct int, roll_back bool
) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF NOT roll_back THEN
        RETURN tpce_trade_order_work(acct, owner, s_num, kind, qty, lifo, margin, limit_pct, false);
    END IF;
    BEGIN
        RETURN tpce_trade_order_work(acct, owner, s_num, kind, qty, lifo, margin, limit_pct, true);
    EXCEPTION WHEN SQLSTATE 'PT001' THEN
        RETURN NULL;  -- the trade and everything done for it are undone
    END;
END
$$;

-- Trade-Result (clause 3.3.8), frames 1-6, for the oldest trade in the market's queue that no
-- other Trade-Result holds; its id, or NULL when the queue is empty (recorded in tpce_idle).
-- Locks in one order: the trade, the holding summary, the account, the broker.
CREATE OR REPLACE FUNCTION tpce_trade_result() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    tid bigint; t record; is_sell bool; tt_name text; price numeric; held int; cust bigint;
    brk bigint; tax_st smallint; needed int; h record; buy_value numeric := 0;
    sell_value numeric := 0; sign int; rates numeric; tax numeric := 0; ex char(6);
    s_name text; tier smallint; comm_rate numeric; comm numeric; amount numeric;
BEGIN
    SELECT sq_t_id INTO tid FROM tpce_submitted ORDER BY sq_dts, sq_t_id LIMIT 1
    FOR UPDATE SKIP LOCKED;
    IF tid IS NULL THEN
        INSERT INTO tpce_idle VALUES (now());
        RETURN NULL;
    END IF;
    DELETE FROM tpce_submitted WHERE sq_t_id = tid;
    -- frame 1: the trade, its type, the account's holding of the symbol, the market's price
    SELECT t_ca_id, t_tt_id, t_s_symb, t_qty, t_chrg, t_lifo, t_is_cash INTO t
    FROM trade WHERE t_id = tid FOR UPDATE;
    SELECT trade_type.tt_name, tt_is_sell INTO tt_name, is_sell FROM trade_type
    WHERE tt_id = t.t_tt_id;
    SELECT lt_price INTO price FROM last_trade WHERE lt_s_symb = t.t_s_symb;
    INSERT INTO holding_summary VALUES (t.t_ca_id, t.t_s_symb, 0) ON CONFLICT DO NOTHING;
    SELECT hs_qty INTO held FROM holding_summary
    WHERE hs_ca_id = t.t_ca_id AND hs_s_symb = t.t_s_symb FOR UPDATE;
    -- frame 2: the account; holdings sold (or shorts covered) LIFO or FIFO, then a new holding
    -- for what is left, each change in HOLDING_HISTORY
    SELECT ca_c_id, ca_b_id, ca_tax_st INTO cust, brk, tax_st FROM customer_account
    WHERE ca_id = t.t_ca_id FOR UPDATE;
    sign := CASE WHEN is_sell THEN -1 ELSE 1 END;
    needed := t.t_qty;
    IF held * sign < 0 THEN  -- a sale of longs, or a buy that covers shorts
        FOR h IN SELECT h_t_id, h_qty, h_price FROM holding
                 WHERE h_ca_id = t.t_ca_id AND h_s_symb = t.t_s_symb
                 ORDER BY CASE WHEN t.t_lifo THEN h_dts END DESC, h_dts, h_t_id FOR UPDATE LOOP
            EXIT WHEN needed = 0;
            IF abs(h.h_qty) > needed THEN
                UPDATE holding SET h_qty = h_qty + sign * needed WHERE h_t_id = h.h_t_id;
                INSERT INTO holding_history VALUES (h.h_t_id, tid, h.h_qty,
                                                    h.h_qty + sign * needed);
                buy_value := buy_value + needed * CASE WHEN is_sell THEN h.h_price ELSE price END;
                sell_value := sell_value + needed * CASE WHEN is_sell THEN price ELSE h.h_price END;
                needed := 0;
            ELSE
                DELETE FROM holding WHERE h_t_id = h.h_t_id;
                INSERT INTO holding_history VALUES (h.h_t_id, tid, h.h_qty, 0);
                buy_value := buy_value
                    + abs(h.h_qty) * CASE WHEN is_sell THEN h.h_price ELSE price END;
                sell_value := sell_value
                    + abs(h.h_qty) * CASE WHEN is_sell THEN price ELSE h.h_price END;
                needed := needed - abs(h.h_qty);
            END IF;
        END LOOP;
    END IF;
    IF needed > 0 THEN  -- a new long (a buy) or short (a sale) holding
        INSERT INTO holding VALUES (tid, t.t_ca_id, t.t_s_symb, localtimestamp, price,
                                    sign * needed);
        INSERT INTO holding_history VALUES (tid, tid, 0, sign * needed);
    END IF;
    IF held + sign * t.t_qty = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = t.t_ca_id AND hs_s_symb = t.t_s_symb;
    ELSE
        UPDATE holding_summary SET hs_qty = held + sign * t.t_qty
        WHERE hs_ca_id = t.t_ca_id AND hs_s_symb = t.t_s_symb;
    END IF;
    -- frame 3: the tax on a profitable sale of a taxable account
    IF sell_value > buy_value AND tax_st IN (1, 2) THEN
        SELECT sum(tx_rate) INTO rates FROM taxrate JOIN customer_taxrate ON cx_tx_id = tx_id
        WHERE cx_c_id = cust;
        tax := round((sell_value - buy_value) * rates, 2);
    END IF;
    -- frame 4: the commission rate of the customer's tier, the type, exchange and quantity
    SELECT s_ex_id, security.s_name INTO ex, s_name FROM security WHERE s_symb = t.t_s_symb;
    SELECT c_tier INTO tier FROM customer WHERE c_id = cust;
    SELECT cr_rate INTO comm_rate FROM commission_rate
    WHERE cr_c_tier = tier AND cr_tt_id = t.t_tt_id AND cr_ex_id = ex
      AND cr_from_qty <= t.t_qty AND cr_to_qty >= t.t_qty;
    comm := round(comm_rate / 100 * t.t_qty * price, 2);
    -- frame 5: the trade completed, its history, the broker's counts
    UPDATE trade SET t_comm = comm, t_tax = tax, t_dts = localtimestamp, t_st_id = 'CMPT',
                     t_trade_price = price
    WHERE t_id = tid;
    INSERT INTO trade_history VALUES (tid, localtimestamp, 'CMPT');
    UPDATE broker SET b_comm_total = b_comm_total + comm, b_num_trades = b_num_trades + 1
    WHERE b_id = brk;
    -- frame 6: the settlement; a cash trade's cash transaction and the account's balance
    amount := -sign * t.t_qty * price - t.t_chrg - comm - tax;
    INSERT INTO settlement VALUES (tid, CASE WHEN t.t_is_cash THEN 'Cash Account' ELSE 'Margin'
                                        END, current_date + 2, amount);
    IF t.t_is_cash THEN
        UPDATE customer_account SET ca_bal = ca_bal + amount WHERE ca_id = t.t_ca_id;
        INSERT INTO cash_transaction VALUES (tid, localtimestamp, amount,
            tt_name || ' ' || t.t_qty || ' shares of ' || s_name);
    END IF;
    RETURN tid;
END
$$;

-- Market-Feed (clause 3.3.3): the ticker of up to 20 symbols, from the oldest pending limit
-- orders no other Market-Feed holds (the market moved to the first one's limit on each
-- symbol); each symbol's last trade updated (in symbol order), and every pending order on it
-- whose limit the new price meets submitted to the market; how many were
CREATE OR REPLACE FUNCTION tpce_market_feed() RETURNS int LANGUAGE plpgsql AS $$
DECLARE tick record; req record; sent int := 0;
BEGIN
    FOR tick IN
        SELECT DISTINCT ON (tr_s_symb) tr_s_symb AS symb, tr_bid_price AS price,
               sum(tr_qty) OVER (PARTITION BY tr_s_symb) AS qty
        FROM (SELECT * FROM trade_request ORDER BY tr_t_id LIMIT 20 FOR UPDATE SKIP LOCKED) AS r
        ORDER BY tr_s_symb, tr_t_id
    LOOP
        UPDATE last_trade SET lt_dts = localtimestamp, lt_price = tick.price,
                              lt_vol = lt_vol + tick.qty
        WHERE lt_s_symb = tick.symb;
        FOR req IN
            SELECT tr_t_id FROM trade_request
            WHERE tr_s_symb = tick.symb
              AND CASE WHEN tr_tt_id = 'TLS' THEN tick.price >= tr_bid_price
                       ELSE tick.price <= tr_bid_price END
            ORDER BY tr_t_id FOR UPDATE SKIP LOCKED
        LOOP
            UPDATE trade SET t_dts = localtimestamp, t_st_id = 'SBMT' WHERE t_id = req.tr_t_id;
            DELETE FROM trade_request WHERE tr_t_id = req.tr_t_id;
            INSERT INTO trade_history VALUES (req.tr_t_id, localtimestamp, 'SBMT');
            INSERT INTO tpce_submitted VALUES (req.tr_t_id, localtimestamp);
            sent := sent + 1;
        END LOOP;
    END LOOP;
    RETURN sent;
END
$$;

-- Trade-Status (clause 3.3.9): the account's 50 latest trades with their status, type,
-- security and exchange, and its customer's and broker's names; how many trades
CREATE OR REPLACE FUNCTION tpce_trade_status(acct bigint) RETURNS int
LANGUAGE plpgsql STABLE AS $$
DECLARE n int;
BEGIN
    SELECT count(*) INTO n FROM (
        SELECT t_id, t_dts, st_name, tt_name, t_s_symb, t_qty, t_exec_name, t_chrg, s_name,
               ex_name
        FROM trade JOIN status_type ON st_id = t_st_id JOIN trade_type ON tt_id = t_tt_id
        JOIN security ON s_symb = t_s_symb JOIN exchange ON ex_id = s_ex_id
        WHERE t_ca_id = acct ORDER BY t_dts DESC LIMIT 50) AS t;
    PERFORM c_l_name, c_f_name, b_name
    FROM customer_account JOIN customer ON c_id = ca_c_id JOIN broker ON b_id = ca_b_id
    WHERE ca_id = acct;
    RETURN n;
END
$$;

-- Customer-Position (clause 3.3.2): the customer (by id, or by tax id), its accounts' cash and
-- assets at the last prices; with history, the 10 latest trades of one of its accounts and
-- their statuses (up to 30 rows); how many rows
CREATE OR REPLACE FUNCTION tpce_customer_position(
    cust bigint, by_tax_id bool, get_history bool, acct_idx int
) RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE accts bigint[]; n int;
BEGIN
    IF by_tax_id THEN
        SELECT c_id INTO cust FROM customer WHERE c_tax_id = lpad(cust::text, 9, '0') || 'TX';
    END IF;
    PERFORM c_st_id, c_l_name, c_f_name, c_tier, c_dob, c_email_1 FROM customer
    WHERE c_id = cust;
    SELECT array_agg(ca_id ORDER BY assets), count(*) INTO accts, n FROM (
        SELECT ca_id, ca_bal + coalesce(sum(hs_qty * lt_price), 0) AS assets
        FROM customer_account LEFT JOIN holding_summary ON hs_ca_id = ca_id
        LEFT JOIN last_trade ON lt_s_symb = hs_s_symb
        WHERE ca_c_id = cust GROUP BY ca_id, ca_bal ORDER BY 2 LIMIT 10) AS a;
    IF get_history AND n > 0 THEN
        SELECT n + count(*) INTO n FROM (
            SELECT t_id, t_s_symb, t_qty, st_name, th_dts
            FROM (SELECT t_id FROM trade WHERE t_ca_id = accts[1 + acct_idx % n]
                  ORDER BY t_dts DESC LIMIT 10) AS t
            JOIN trade USING (t_id) JOIN trade_history ON th_t_id = t_id
            JOIN status_type ON st_id = th_st_id
            ORDER BY th_dts DESC LIMIT 30) AS h;
    END IF;
    RETURN n;
END
$$;

-- Broker-Volume (clause 3.3.1): the volume of pending orders of a list of brokers (the
-- draw's first_b and the next ones, by name) in a sector, per broker; how many brokers
CREATE OR REPLACE FUNCTION tpce_broker_volume(first_b bigint, brokers int, sector_n int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE names text[]; n int;
BEGIN
    SELECT array_agg(b_name) INTO names FROM broker
    WHERE b_id >= first_b AND b_id < first_b + brokers;
    SELECT count(*) INTO n FROM (
        SELECT b_name, sum(tr_qty * tr_bid_price) AS volume
        FROM trade_request JOIN broker ON b_id = tr_b_id JOIN security ON s_symb = tr_s_symb
        JOIN company ON co_id = s_co_id JOIN industry ON in_id = co_in_id
        JOIN sector ON sc_id = in_sc_id
        WHERE b_name = ANY (names) AND sc_id = lpad(sector_n::text, 2, '0')
        GROUP BY b_name ORDER BY 2 DESC) AS v;
    RETURN n;
END
$$;

-- Security-Detail (clause 3.3.5): the security, its company and exchange with their
-- addresses, 3 competitors, 20 quarters of financials, max_rows days of market data from a
-- day, the last trade, and 2 news items (their full text when access_lob); how many days
CREATE OR REPLACE FUNCTION tpce_security_detail(
    s_num int, max_rows int, start_day int, access_lob bool
) RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE symb char(15) := tpce_symbol(s_num); co bigint; n int;
BEGIN
    SELECT s_co_id INTO co FROM security WHERE s_symb = symb;
    PERFORM s_name, co_name, co_sp_rate, co_ceo, co_desc, co_open_date, co_st_id,
            ca.ad_line1, ca.ad_line2, zca.zc_town, zca.zc_div, ca.ad_zc_code, ca.ad_ctry,
            s_num_out, s_start_date, s_exch_date, s_pe, s_52wk_high, s_52wk_high_date,
            s_52wk_low, s_52wk_low_date, s_dividend, s_yield, zea.zc_div, ea.ad_ctry,
            ea.ad_line1, ea.ad_line2, zea.zc_town, ea.ad_zc_code, ex_close, ex_desc, ex_name,
            ex_num_symb, ex_open
    FROM security JOIN company ON co_id = s_co_id JOIN address ca ON ca.ad_id = co_ad_id
    JOIN zip_code zca ON zca.zc_code = ca.ad_zc_code JOIN exchange ON ex_id = s_ex_id
    JOIN address ea ON ea.ad_id = ex_ad_id JOIN zip_code zea ON zea.zc_code = ea.ad_zc_code
    WHERE s_symb = symb;
    PERFORM co_name, in_name FROM company_competitor JOIN company ON co_id = cp_comp_co_id
    JOIN industry ON in_id = cp_in_id WHERE cp_co_id = co LIMIT 3;
    PERFORM fi_year, fi_qtr, fi_qtr_start_date, fi_revenue, fi_net_earn, fi_basic_eps,
            fi_dilut_eps, fi_margin, fi_inventory, fi_assets, fi_liability, fi_out_basic,
            fi_out_dilut
    FROM financial WHERE fi_co_id = co ORDER BY fi_year, fi_qtr LIMIT 20;
    SELECT count(*) INTO n FROM (
        SELECT dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market
        WHERE dm_s_symb = symb AND dm_date >= tpce_day(start_day)
        ORDER BY dm_date LIMIT max_rows) AS d;
    PERFORM lt_price, lt_open_price, lt_vol FROM last_trade WHERE lt_s_symb = symb;
    IF access_lob THEN
        PERFORM ni_item, ni_dts, ni_source, ni_author FROM news_xref
        JOIN news_item ON ni_id = nx_ni_id WHERE nx_co_id = co LIMIT 2;
    ELSE
        PERFORM ni_dts, ni_source, ni_author, ni_headline, ni_summary FROM news_xref
        JOIN news_item ON ni_id = nx_ni_id WHERE nx_co_id = co LIMIT 2;
    END IF;
    RETURN n;
END
$$;

-- Market-Watch (clause 3.3.4): the percentage change in market capitalisation since a day of
-- the securities of a customer's watch list (kind 1), an account's holdings (2) or an
-- industry's companies (3)
CREATE OR REPLACE FUNCTION tpce_market_watch(kind int, id bigint, start_day int)
RETURNS numeric LANGUAGE sql STABLE AS $$
    WITH symbols AS (
        SELECT wi_s_symb AS symb FROM watch_list JOIN watch_item ON wi_wl_id = wl_id
        WHERE kind = 1 AND wl_c_id = id
        UNION ALL
        SELECT hs_s_symb FROM holding_summary WHERE kind = 2 AND hs_ca_id = id
        UNION ALL
        SELECT s_symb FROM company JOIN security ON s_co_id = co_id
        WHERE kind = 3 AND co_in_id = tpce_industry((id % 102)::int)
    )
    SELECT coalesce(100 * (sum(s_num_out * lt_price) / nullif(sum(s_num_out * dm_close), 0) - 1),
                    0)
    FROM symbols JOIN security ON s_symb = symb JOIN last_trade ON lt_s_symb = symb
    JOIN daily_market ON dm_s_symb = symb AND dm_date = tpce_day(start_day)
$$;

-- the trades of Trade-Lookup's and Trade-Update's frames 2-4 (clause 3.3.6, 3.3.10): an
-- account's first 20 from a day (frame 2), a symbol's first 20 over the 30 days from a day
-- (frame 3), an account's first from a day (frame 4)
CREATE OR REPLACE FUNCTION tpce_trades_of(frame int, acct bigint, s_num int, start_day int)
RETURNS bigint[] LANGUAGE sql STABLE AS $$
    SELECT CASE frame
        WHEN 2 THEN ARRAY(SELECT t_id FROM trade WHERE t_ca_id = acct
                          AND t_dts >= tpce_day(start_day) ORDER BY t_dts LIMIT 20)
        WHEN 3 THEN ARRAY(SELECT t_id FROM trade WHERE t_s_symb = tpce_symbol(s_num)
                          AND t_dts >= tpce_day(start_day)
                          AND t_dts < tpce_day(start_day) + 30 ORDER BY t_dts LIMIT 20)
        ELSE ARRAY(SELECT t_id FROM trade WHERE t_ca_id = acct
                   AND t_dts >= tpce_day(start_day) ORDER BY t_dts LIMIT 1)
    END
$$;

-- Trade-Lookup (clause 3.3.6): frame 1, 20 given trades; 2, an account's; 3, a symbol's
-- (with their holding history in frame 4's place: the first trade's holdings' changes); each
-- trade's settlement, cash transaction and history; how many rows
CREATE OR REPLACE FUNCTION tpce_trade_lookup(
    frame int, accounts bigint, draw bigint, acct bigint, s_num int, start_day int
) RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE ids bigint[]; n int;
BEGIN
    ids := CASE WHEN frame = 1 THEN tpce_trade_ids(accounts, draw)
                ELSE tpce_trades_of(frame, acct, s_num, start_day) END;
    IF frame = 4 THEN
        SELECT count(*) INTO n FROM (
            SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty FROM holding_history
            WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history WHERE hh_t_id = ids[1])
            LIMIT 20) AS h;
        RETURN n;
    END IF;
    SELECT count(*) INTO n FROM (
        SELECT t_id, t_bid_price, t_exec_name, t_is_cash, tt_is_mrkt, t_trade_price,
               se_amt, se_cash_due_date, se_cash_type, ct_amt, ct_dts, ct_name
        FROM trade JOIN trade_type ON tt_id = t_tt_id LEFT JOIN settlement ON se_t_id = t_id
        LEFT JOIN cash_transaction ON ct_t_id = t_id
        WHERE t_id = ANY (ids)) AS t;
    PERFORM th_t_id, th_dts, th_st_id FROM trade_history WHERE th_t_id = ANY (ids)
    ORDER BY th_t_id, th_dts;
    RETURN n;
END
$$;

-- Trade-Update (clause 3.3.10): as Trade-Lookup's frames 1-3, each changing what it reads:
-- frame 1 the executor's name of up to 20 trades (" X " in, or out again), frame 2 an
-- account's trades' settlement cash type, frame 3 a symbol's trades' cash transaction name;
-- the trades locked in id order. How many rows changed
CREATE OR REPLACE FUNCTION tpce_trade_update(
    frame int, accounts bigint, draw bigint, acct bigint, s_num int, start_day int
) RETURNS int LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; n int;
BEGIN
    ids := CASE WHEN frame = 1 THEN tpce_trade_ids(accounts, draw)
                ELSE tpce_trades_of(frame, acct, s_num, start_day) END;
    ids := ARRAY(SELECT t_id FROM trade WHERE t_id = ANY (ids) ORDER BY t_id FOR UPDATE);
    IF frame = 1 THEN
        UPDATE trade SET t_exec_name = CASE WHEN t_exec_name LIKE '% X %'
                                            THEN replace(t_exec_name, ' X ', ' ')
                                            ELSE replace(t_exec_name, ' ', ' X ') END
        WHERE t_id = ANY (ids);
    ELSIF frame = 2 THEN
        UPDATE settlement SET se_cash_type = CASE se_cash_type
            WHEN 'Cash Account' THEN 'Cash' WHEN 'Cash' THEN 'Cash Account'
            WHEN 'Margin' THEN 'Margin Account' ELSE 'Margin' END
        WHERE se_t_id = ANY (ids);
    ELSE
        UPDATE cash_transaction SET ct_name = CASE WHEN ct_name LIKE '% shares of %'
                                                   THEN replace(ct_name, ' shares of ', ' Shares of ')
                                                   ELSE replace(ct_name, ' Shares of ', ' shares of ') END
        WHERE ct_t_id = ANY (ids);
    END IF;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM th_t_id, th_dts, th_st_id FROM trade_history WHERE th_t_id = ANY (ids);
    RETURN n;
END
$$;
