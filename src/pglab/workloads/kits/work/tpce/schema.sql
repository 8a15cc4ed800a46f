-- pglab's TPC-E-like kit: the 33 tables of TPC-E's brokerage (specification 1.14, clause 2),
-- with fewer columns where no transaction reads them, without keys (added after the load,
-- keys.sql); and two tables of pglab's own: tpce_submitted (the market's queue: the trades
-- Trade-Order or Market-Feed sent to the market, which Trade-Result takes) and tpce_idle (the
-- Trade-Results that found the queue empty). Written by pglab from the specification, not from
-- TPC's EGen; the kit's own objects are dropped first, nothing else.
DROP TABLE IF EXISTS account_permission, address, broker, cash_transaction, charge,
    commission_rate, company, company_competitor, customer, customer_account, customer_taxrate,
    daily_market, exchange, financial, holding, holding_history, holding_summary, industry,
    last_trade, news_item, news_xref, sector, security, settlement, status_type, taxrate, trade,
    trade_history, trade_request, trade_type, watch_item, watch_list, zip_code, tpce_submitted,
    tpce_idle CASCADE;
DROP SEQUENCE IF EXISTS tpce_trade_id;

-- the fixed tables (clause 2.2.6's dimension and broker tables that do not grow)
CREATE TABLE status_type (st_id char(4) NOT NULL, st_name varchar(10) NOT NULL);
CREATE TABLE trade_type (
    tt_id char(3) NOT NULL, tt_name varchar(12) NOT NULL, tt_is_sell bool NOT NULL,
    tt_is_mrkt bool NOT NULL
);
CREATE TABLE zip_code (zc_code char(12) NOT NULL, zc_town varchar(80), zc_div varchar(80));
CREATE TABLE address (
    ad_id bigint NOT NULL, ad_line1 varchar(80), ad_line2 varchar(80),
    ad_zc_code char(12) NOT NULL, ad_ctry varchar(80)
);
CREATE TABLE exchange (
    ex_id char(6) NOT NULL, ex_name varchar(100) NOT NULL, ex_num_symb int NOT NULL,
    ex_open int NOT NULL, ex_close int NOT NULL, ex_desc varchar(150), ex_ad_id bigint NOT NULL
);
CREATE TABLE sector (sc_id char(2) NOT NULL, sc_name varchar(30) NOT NULL);
CREATE TABLE industry (
    in_id char(2) NOT NULL, in_name varchar(50) NOT NULL, in_sc_id char(2) NOT NULL
);
CREATE TABLE taxrate (tx_id char(4) NOT NULL, tx_name varchar(50), tx_rate numeric(6, 5));
CREATE TABLE charge (ch_tt_id char(3) NOT NULL, ch_c_tier smallint NOT NULL,
                     ch_chrg numeric(10, 2) NOT NULL);
CREATE TABLE commission_rate (
    cr_c_tier smallint NOT NULL, cr_tt_id char(3) NOT NULL, cr_ex_id char(6) NOT NULL,
    cr_from_qty int NOT NULL, cr_to_qty int NOT NULL, cr_rate numeric(5, 2) NOT NULL
);

-- customers (clause 2.2.4)
CREATE TABLE customer (
    c_id bigint NOT NULL, c_tax_id varchar(20) NOT NULL, c_st_id char(4) NOT NULL,
    c_l_name varchar(25) NOT NULL, c_f_name varchar(20) NOT NULL, c_m_name char(1),
    c_gndr char(1), c_tier smallint NOT NULL, c_dob date NOT NULL, c_ad_id bigint NOT NULL,
    c_ctry_1 varchar(3), c_area_1 varchar(3), c_local_1 varchar(10), c_email_1 varchar(50)
);
CREATE TABLE customer_taxrate (cx_tx_id char(4) NOT NULL, cx_c_id bigint NOT NULL);
CREATE TABLE broker (
    b_id bigint NOT NULL, b_st_id char(4) NOT NULL, b_name varchar(49) NOT NULL,
    b_num_trades int NOT NULL, b_comm_total numeric(12, 2) NOT NULL
);
CREATE TABLE customer_account (
    ca_id bigint NOT NULL, ca_b_id bigint NOT NULL, ca_c_id bigint NOT NULL,
    ca_name varchar(50), ca_tax_st smallint NOT NULL, ca_bal numeric(12, 2) NOT NULL
);
CREATE TABLE account_permission (
    ap_ca_id bigint NOT NULL, ap_acl char(4) NOT NULL, ap_tax_id varchar(20) NOT NULL,
    ap_l_name varchar(25) NOT NULL, ap_f_name varchar(20) NOT NULL
);
CREATE TABLE watch_list (wl_id bigint NOT NULL, wl_c_id bigint NOT NULL);
CREATE TABLE watch_item (wi_wl_id bigint NOT NULL, wi_s_symb char(15) NOT NULL);

-- the market (clause 2.2.5)
CREATE TABLE company (
    co_id bigint NOT NULL, co_st_id char(4) NOT NULL, co_name varchar(60) NOT NULL,
    co_in_id char(2) NOT NULL, co_sp_rate char(4) NOT NULL, co_ceo varchar(46) NOT NULL,
    co_ad_id bigint NOT NULL, co_desc varchar(150) NOT NULL, co_open_date date NOT NULL
);
CREATE TABLE company_competitor (
    cp_co_id bigint NOT NULL, cp_comp_co_id bigint NOT NULL, cp_in_id char(2) NOT NULL
);
CREATE TABLE security (
    s_symb char(15) NOT NULL, s_issue char(6) NOT NULL, s_st_id char(4) NOT NULL,
    s_name varchar(70) NOT NULL, s_ex_id char(6) NOT NULL, s_co_id bigint NOT NULL,
    s_num_out bigint NOT NULL, s_start_date date NOT NULL, s_exch_date date NOT NULL,
    s_pe numeric(10, 2) NOT NULL, s_52wk_high numeric(8, 2) NOT NULL,
    s_52wk_high_date date NOT NULL, s_52wk_low numeric(8, 2) NOT NULL,
    s_52wk_low_date date NOT NULL, s_dividend numeric(10, 2) NOT NULL,
    s_yield numeric(5, 2) NOT NULL
);
CREATE TABLE daily_market (
    dm_date date NOT NULL, dm_s_symb char(15) NOT NULL, dm_close numeric(8, 2) NOT NULL,
    dm_high numeric(8, 2) NOT NULL, dm_low numeric(8, 2) NOT NULL, dm_vol bigint NOT NULL
);
CREATE TABLE last_trade (
    lt_s_symb char(15) NOT NULL, lt_dts timestamp NOT NULL, lt_price numeric(8, 2) NOT NULL,
    lt_open_price numeric(8, 2) NOT NULL, lt_vol bigint NOT NULL
);
CREATE TABLE financial (
    fi_co_id bigint NOT NULL, fi_year int NOT NULL, fi_qtr smallint NOT NULL,
    fi_qtr_start_date date NOT NULL, fi_revenue numeric(15, 2) NOT NULL,
    fi_net_earn numeric(15, 2) NOT NULL, fi_basic_eps numeric(10, 2) NOT NULL,
    fi_dilut_eps numeric(10, 2) NOT NULL, fi_margin numeric(10, 2) NOT NULL,
    fi_inventory numeric(15, 2) NOT NULL, fi_assets numeric(15, 2) NOT NULL,
    fi_liability numeric(15, 2) NOT NULL, fi_out_basic bigint NOT NULL,
    fi_out_dilut bigint NOT NULL
);
CREATE TABLE news_item (
    ni_id bigint NOT NULL, ni_headline varchar(80) NOT NULL, ni_summary varchar(255) NOT NULL,
    ni_item text NOT NULL, ni_dts timestamp NOT NULL, ni_source varchar(30) NOT NULL,
    ni_author varchar(30)
);
CREATE TABLE news_xref (nx_ni_id bigint NOT NULL, nx_co_id bigint NOT NULL);

-- trades (clause 2.2.5: the broker's and the customer's growing tables)
CREATE TABLE trade (
    t_id bigint NOT NULL, t_dts timestamp NOT NULL, t_st_id char(4) NOT NULL,
    t_tt_id char(3) NOT NULL, t_is_cash bool NOT NULL, t_s_symb char(15) NOT NULL,
    t_qty int NOT NULL, t_bid_price numeric(8, 2) NOT NULL, t_ca_id bigint NOT NULL,
    t_exec_name varchar(49) NOT NULL, t_trade_price numeric(8, 2), t_chrg numeric(10, 2) NOT NULL,
    t_comm numeric(10, 2) NOT NULL, t_tax numeric(10, 2) NOT NULL, t_lifo bool NOT NULL
);
CREATE TABLE trade_history (th_t_id bigint NOT NULL, th_dts timestamp NOT NULL,
                            th_st_id char(4) NOT NULL);
CREATE TABLE trade_request (
    tr_t_id bigint NOT NULL, tr_tt_id char(3) NOT NULL, tr_s_symb char(15) NOT NULL,
    tr_qty int NOT NULL, tr_bid_price numeric(8, 2) NOT NULL, tr_b_id bigint NOT NULL
);
CREATE TABLE settlement (
    se_t_id bigint NOT NULL, se_cash_type varchar(40) NOT NULL, se_cash_due_date date NOT NULL,
    se_amt numeric(10, 2) NOT NULL
);
CREATE TABLE cash_transaction (
    ct_t_id bigint NOT NULL, ct_dts timestamp NOT NULL, ct_amt numeric(10, 2) NOT NULL,
    ct_name varchar(100)
);
CREATE TABLE holding (
    h_t_id bigint NOT NULL, h_ca_id bigint NOT NULL, h_s_symb char(15) NOT NULL,
    h_dts timestamp NOT NULL, h_price numeric(8, 2) NOT NULL, h_qty int NOT NULL
);
CREATE TABLE holding_history (
    hh_h_t_id bigint NOT NULL, hh_t_id bigint NOT NULL, hh_before_qty int NOT NULL,
    hh_after_qty int NOT NULL
);
CREATE TABLE holding_summary (
    hs_ca_id bigint NOT NULL, hs_s_symb char(15) NOT NULL, hs_qty int NOT NULL
);

-- pglab's: the market exchange emulator's queue (a trade sent to the market: a market order at
-- once, a limit order once Market-Feed triggered it), taken by Trade-Result with
-- FOR UPDATE SKIP LOCKED; and the Trade-Results that found it empty
CREATE TABLE tpce_submitted (sq_t_id bigint NOT NULL, sq_dts timestamp NOT NULL);
CREATE TABLE tpce_idle (ti_at timestamptz NOT NULL);
