-- pglab's TPC-C-like kit: the nine tables of TPC-C's clause 1.3, without keys (added after the
-- load, keys.sql), and the helpers the loader and both modes use. Written by pglab from the
-- specification; the kit's own objects are dropped first, nothing else.
DROP TABLE IF EXISTS warehouse, district, customer, history, new_order, orders, order_line,
    item, stock, delivery_skip CASCADE;

CREATE TABLE warehouse (
    w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
    w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4, 4),
    w_ytd numeric(12, 2)
);
CREATE TABLE district (
    d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20),
    d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9),
    d_tax numeric(4, 4), d_ytd numeric(12, 2), d_next_o_id int
);
CREATE TABLE customer (
    c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16),
    c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),
    c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp,
    c_credit char(2), c_credit_lim numeric(12, 2), c_discount numeric(4, 4),
    c_balance numeric(12, 2), c_ytd_payment numeric(12, 2), c_payment_cnt int,
    c_delivery_cnt int, c_data varchar(500)
);
CREATE TABLE history (
    h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp,
    h_amount numeric(6, 2), h_data varchar(24)
);
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL);
CREATE TABLE orders (
    o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int,
    o_entry_d timestamp, o_carrier_id int, o_ol_cnt int, o_all_local int
);
CREATE TABLE order_line (
    ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL,
    ol_i_id int, ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int,
    ol_amount numeric(6, 2), ol_dist_info char(24)
);
CREATE TABLE item (
    i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5, 2),
    i_data varchar(50)
);
CREATE TABLE stock (
    s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int,
    s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24),
    s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24),
    s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
    s_data varchar(50)
);

-- clause 4.3.2.3: a last name from a number 0..999, one syllable per digit
CREATE OR REPLACE FUNCTION tpcc_last_name(n int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT s[n / 100 + 1] || s[n / 10 % 10 + 1] || s[n % 10 + 1]
    FROM (SELECT ARRAY['BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY',
                       'ATION', 'EING'] AS s) AS syllables
$$;

-- clause 2.1.6: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
CREATE OR REPLACE FUNCTION tpcc_nurand(a int, x int, y int, c int) RETURNS int
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT ((((floor(random() * (a + 1))::int
               | (x + floor(random() * (y - x + 1))::int)) + c) % (y - x + 1)) + x)
$$;

-- clause 4.3.2.2: a random string of lo..hi characters (letters and digits)
CREATE OR REPLACE FUNCTION tpcc_text(lo int, hi int) RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT left(md5(random()::text) || md5(random()::text) || md5(random()::text)
                || md5(random()::text) || repeat(md5(random()::text), 12),
                lo + floor(random() * (hi - lo + 1))::int)
$$;

-- clause 4.3.3.1: i_data and s_data hold "ORIGINAL" at a random place in 10% of rows
CREATE OR REPLACE FUNCTION tpcc_data() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT CASE WHEN random() < 0.1
                THEN overlay(d PLACING 'ORIGINAL' FROM 1 + floor(random() * (length(d) - 7))::int)
                ELSE d END
    FROM (SELECT tpcc_text(26, 50) AS d) AS t
$$;
