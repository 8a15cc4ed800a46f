-- pglab's TPC-C-like kit, procedures mode: each transaction of clause 2 is one PL/pgSQL
-- function the pgbench scripts call (one round trip per transaction). Stock rows are locked in
-- (warehouse, item) order so that concurrent New-Orders do not deadlock on them.
--
-- This file is run when the dataset is made and again before each run's phases (``Kit.refresh``),
-- so that a dataset made by an older pglab runs these transactions, not the ones it was made
-- with: everything here can be run again.

-- Delivery's skipped districts (clause 2.7.4.2: a district with no undelivered order), one row
-- each; both modes write them
CREATE TABLE IF NOT EXISTS delivery_skip (ds_w_id int, ds_d_id int, ds_at timestamptz);

-- New-Order's order lines (clause 2.4.2.2): the first ol_cnt of the arrays; raises tpcc_rollback
-- (SQLSTATE PT001) at an item that does not exist, which tpcc_new_order turns into a rollback
CREATE OR REPLACE FUNCTION tpcc_new_order_work(
    w int, d int, c int, ol_cnt int, items int[], supply int[], qty int[]
) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    tax numeric; discount numeric; o int; total numeric := 0; line record; price numeric;
BEGIN
    SELECT w_tax, c_discount INTO tax, discount
    FROM warehouse, customer WHERE w_id = w AND c_w_id = w AND c_d_id = d AND c_id = c;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = w AND d_id = d
    RETURNING d_next_o_id - 1, tax + d_tax INTO o, tax;
    INSERT INTO orders VALUES (o, d, w, c, now(), NULL, ol_cnt,
        (SELECT bool_and(s = w)::int FROM unnest(supply[1:ol_cnt]) AS s));
    INSERT INTO new_order VALUES (o, d, w);
    FOR line IN
        SELECT n::int AS n, i, s, q
        FROM unnest(items[1:ol_cnt], supply[1:ol_cnt], qty[1:ol_cnt])
             WITH ORDINALITY AS l(i, s, q, n)
        ORDER BY s, i, n
    LOOP
        SELECT i_price INTO price FROM item WHERE i_id = line.i;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'item % not found', line.i USING ERRCODE = 'PT001';
        END IF;
        WITH s AS (
            UPDATE stock SET
                s_quantity = CASE WHEN s_quantity - line.q >= 10 THEN s_quantity - line.q
                                  ELSE s_quantity - line.q + 91 END,
                s_ytd = s_ytd + line.q, s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + (line.s <> w)::int
            WHERE s_w_id = line.s AND s_i_id = line.i
            RETURNING (ARRAY[s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06,
                             s_dist_07, s_dist_08, s_dist_09, s_dist_10])[d] AS info
        )
        INSERT INTO order_line
        SELECT o, d, w, line.n, line.i, line.s, NULL, line.q, line.q * price, info FROM s;
        total := total + line.q * price;
    END LOOP;
    RETURN total * (1 - discount) * (1 + tax);
END
$$;

-- New-Order (clause 2.4): the order's total; rolled back (NULL) when an item does not exist,
-- as 1% of New-Orders are made to (the kit's new_order_rollback script)
CREATE OR REPLACE FUNCTION tpcc_new_order(
    w int, d int, c int, ol_cnt int, items int[], supply int[], qty int[], may_roll_back bool
) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    IF NOT may_roll_back THEN
        RETURN tpcc_new_order_work(w, d, c, ol_cnt, items, supply, qty);
    END IF;
    BEGIN
        RETURN tpcc_new_order_work(w, d, c, ol_cnt, items, supply, qty);
    EXCEPTION WHEN SQLSTATE 'PT001' THEN
        RETURN NULL;  -- the order and everything done for it are undone
    END;
END
$$;

-- the customer of a Payment or Order-Status by last name (clause 2.5.2.2): the one at
-- position ceil(n / 2) of those with that name, sorted by first name
CREATE OR REPLACE FUNCTION tpcc_customer_by_name(w int, d int, last_n int) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT c_id FROM (
        SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, count(*) OVER () AS cnt
        FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = tpcc_last_name(last_n)
    ) AS x WHERE rn = (cnt + 1) / 2
$$;

-- Payment (clause 2.5): the customer's new balance
CREATE OR REPLACE FUNCTION tpcc_payment(
    w int, d int, cw int, cd int, c int, by_name bool, last_n int, amount numeric
) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE wname text; dname text; balance numeric;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w RETURNING w_name INTO wname;
    UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d
    RETURNING d_name INTO dname;
    IF by_name THEN
        c := tpcc_customer_by_name(cw, cd, last_n);
    END IF;
    UPDATE customer SET
        c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC'
                      THEN left(format('%s %s %s %s %s %s|', c, cd, cw, d, w, amount) || c_data,
                                500)
                      ELSE c_data END
    WHERE c_w_id = cw AND c_d_id = cd AND c_id = c
    RETURNING c_balance INTO balance;
    INSERT INTO history VALUES (c, cd, cw, d, w, now(), amount, wname || '    ' || dname);
    RETURN balance;
END
$$;

-- Order-Status (clause 2.6): the number of lines of the customer's last order
CREATE OR REPLACE FUNCTION tpcc_order_status(w int, d int, c int, by_name bool, last_n int)
RETURNS int LANGUAGE plpgsql STABLE AS $$
DECLARE balance numeric; o int; lines int;
BEGIN
    IF by_name THEN
        c := tpcc_customer_by_name(w, d, last_n);
    END IF;
    SELECT c_balance INTO balance FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    SELECT o_id INTO o FROM orders WHERE o_w_id = w AND o_d_id = d AND o_c_id = c
    ORDER BY o_id DESC LIMIT 1;
    SELECT count(*) INTO lines FROM (
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
        FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o) AS l;
    RETURN lines;
END
$$;

-- Delivery (clause 2.7): the oldest undelivered order of each of the warehouse's ten
-- districts that no other Delivery is delivering (SKIP LOCKED: the next one then) delivered; a
-- district is skipped only when it has no such order (clause 2.7.4.2), and the skip recorded
-- (delivery_skip); the number of orders delivered
CREATE OR REPLACE FUNCTION tpcc_delivery(w int, carrier int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE d int; o int; c int; amount numeric; done int := 0;
BEGIN
    FOR d IN 1..10 LOOP
        SELECT no_o_id INTO o FROM new_order WHERE no_w_id = w AND no_d_id = d
        ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF o IS NULL THEN
            INSERT INTO delivery_skip VALUES (w, d, now());
            CONTINUE;
        END IF;
        DELETE FROM new_order WHERE no_w_id = w AND no_d_id = d AND no_o_id = o;
        UPDATE orders SET o_carrier_id = carrier WHERE o_w_id = w AND o_d_id = d AND o_id = o
        RETURNING o_c_id INTO c;
        UPDATE order_line SET ol_delivery_d = now()
        WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
        SELECT sum(ol_amount) INTO amount FROM order_line
        WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
        UPDATE customer SET c_balance = c_balance + amount, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = w AND c_d_id = d AND c_id = c;
        done := done + 1;
    END LOOP;
    RETURN done;
END
$$;

-- Stock-Level (clause 2.8): the distinct items of the district's last 20 orders whose stock
-- is below the threshold
CREATE OR REPLACE FUNCTION tpcc_stock_level(w int, d int, threshold int) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT count(DISTINCT s_i_id)::int
    FROM district, order_line, stock
    WHERE d_w_id = w AND d_id = d
      AND ol_w_id = w AND ol_d_id = d
      AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20
      AND s_w_id = w AND s_i_id = ol_i_id AND s_quantity < threshold
$$;
