-- pglab's TPC-C-like kit: the initial population of clause 4.3.3.1, one warehouse per call
-- (the loader calls these on several connections at once). The constant C of the customers'
-- last names at load is 157 (the run's is 223: clause 2.1.6.1's delta, 66).
CREATE OR REPLACE FUNCTION tpcc_load_items() RETURNS void LANGUAGE sql AS $$
    INSERT INTO item
    SELECT i, 1 + floor(random() * 10000)::int, tpcc_text(14, 24),
           (1 + floor(random() * 9999)) / 100.0, tpcc_data()
    FROM generate_series(1, 100000) AS i
$$;

CREATE OR REPLACE FUNCTION tpcc_load_warehouse(w int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO warehouse VALUES (w, tpcc_text(6, 10), tpcc_text(10, 20), tpcc_text(10, 20),
        tpcc_text(10, 20), upper(left(md5(random()::text), 2)),
        lpad(floor(random() * 10000)::text, 4, '0') || '11111', random() * 0.2, 300000);
    INSERT INTO stock
    SELECT i, w, 10 + floor(random() * 91)::int,
           tpcc_text(24, 24), tpcc_text(24, 24), tpcc_text(24, 24), tpcc_text(24, 24),
           tpcc_text(24, 24), tpcc_text(24, 24), tpcc_text(24, 24), tpcc_text(24, 24),
           tpcc_text(24, 24), tpcc_text(24, 24), 0, 0, 0, tpcc_data()
    FROM generate_series(1, 100000) AS i;
    INSERT INTO district
    SELECT d, w, tpcc_text(6, 10), tpcc_text(10, 20), tpcc_text(10, 20), tpcc_text(10, 20),
           upper(left(md5(random()::text), 2)),
           lpad(floor(random() * 10000)::text, 4, '0') || '11111', random() * 0.2, 30000, 3001
    FROM generate_series(1, 10) AS d;
    INSERT INTO customer
    SELECT c, d, w, tpcc_text(8, 16), 'OE',
           tpcc_last_name(CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999, 157) END),
           tpcc_text(10, 20), tpcc_text(10, 20), tpcc_text(10, 20),
           upper(left(md5(random()::text), 2)),
           lpad(floor(random() * 10000)::text, 4, '0') || '11111',
           lpad(floor(random() * 1e16)::bigint::text, 16, '0'), now(),
           CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000, random() * 0.5,
           -10, 10, 1, 0, tpcc_text(300, 500)
    FROM generate_series(1, 10) AS d, generate_series(1, 3000) AS c;
    INSERT INTO history
    SELECT c, d, w, d, w, now(), 10, tpcc_text(12, 24)
    FROM generate_series(1, 10) AS d, generate_series(1, 3000) AS c;
    -- o_c_id: a random permutation of the customers of each district
    INSERT INTO orders
    SELECT o, d, w, c, now(), CASE WHEN o < 2101 THEN 1 + floor(random() * 10)::int END,
           5 + floor(random() * 11)::int, 1
    FROM (SELECT d, c, row_number() OVER (PARTITION BY d ORDER BY random())::int AS o
          FROM generate_series(1, 10) AS d, generate_series(1, 3000) AS c) AS p;
    INSERT INTO order_line
    SELECT o_id, o_d_id, o_w_id, n, 1 + floor(random() * 100000)::int, o_w_id,
           CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
           CASE WHEN o_id < 2101 THEN 0 ELSE (1 + floor(random() * 999999)) / 100.0 END,
           tpcc_text(24, 24)
    FROM orders, generate_series(1, o_ol_cnt) AS n
    WHERE o_w_id = w;
    INSERT INTO new_order
    SELECT o, d, w FROM generate_series(1, 10) AS d, generate_series(2101, 3000) AS o;
END
$$;
