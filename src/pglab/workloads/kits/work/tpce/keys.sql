-- pglab's TPC-E-like kit: primary keys, the foreign keys of the specification's schema (clause
-- 2.2: referential integrity is part of what TPC-E measures), and the secondary indexes the
-- transactions read by (non-primary-key access: a customer's accounts, an account's trades by
-- time, a symbol's trades by time, pending requests by symbol), after the load; then the
-- sequence of new trade ids, after the loaded ones
ALTER TABLE status_type ADD PRIMARY KEY (st_id);
ALTER TABLE trade_type ADD PRIMARY KEY (tt_id);
ALTER TABLE zip_code ADD PRIMARY KEY (zc_code);
ALTER TABLE address ADD PRIMARY KEY (ad_id);
ALTER TABLE exchange ADD PRIMARY KEY (ex_id);
ALTER TABLE sector ADD PRIMARY KEY (sc_id);
ALTER TABLE industry ADD PRIMARY KEY (in_id);
ALTER TABLE taxrate ADD PRIMARY KEY (tx_id);
ALTER TABLE charge ADD PRIMARY KEY (ch_tt_id, ch_c_tier);
ALTER TABLE commission_rate ADD PRIMARY KEY (cr_c_tier, cr_tt_id, cr_ex_id, cr_from_qty);
ALTER TABLE customer ADD PRIMARY KEY (c_id);
ALTER TABLE customer_taxrate ADD PRIMARY KEY (cx_tx_id, cx_c_id);
ALTER TABLE broker ADD PRIMARY KEY (b_id);
ALTER TABLE customer_account ADD PRIMARY KEY (ca_id);
ALTER TABLE account_permission ADD PRIMARY KEY (ap_ca_id, ap_tax_id);
ALTER TABLE watch_list ADD PRIMARY KEY (wl_id);
ALTER TABLE watch_item ADD PRIMARY KEY (wi_wl_id, wi_s_symb);
ALTER TABLE company ADD PRIMARY KEY (co_id);
ALTER TABLE company_competitor ADD PRIMARY KEY (cp_co_id, cp_comp_co_id, cp_in_id);
ALTER TABLE security ADD PRIMARY KEY (s_symb);
ALTER TABLE daily_market ADD PRIMARY KEY (dm_s_symb, dm_date);
ALTER TABLE last_trade ADD PRIMARY KEY (lt_s_symb);
ALTER TABLE financial ADD PRIMARY KEY (fi_co_id, fi_year, fi_qtr);
ALTER TABLE news_item ADD PRIMARY KEY (ni_id);
ALTER TABLE news_xref ADD PRIMARY KEY (nx_ni_id, nx_co_id);
ALTER TABLE trade ADD PRIMARY KEY (t_id);
ALTER TABLE trade_history ADD PRIMARY KEY (th_t_id, th_st_id);
ALTER TABLE trade_request ADD PRIMARY KEY (tr_t_id);
ALTER TABLE settlement ADD PRIMARY KEY (se_t_id);
ALTER TABLE cash_transaction ADD PRIMARY KEY (ct_t_id);
ALTER TABLE holding ADD PRIMARY KEY (h_t_id);
ALTER TABLE holding_history ADD PRIMARY KEY (hh_h_t_id, hh_t_id);
ALTER TABLE holding_summary ADD PRIMARY KEY (hs_ca_id, hs_s_symb);
ALTER TABLE tpce_submitted ADD PRIMARY KEY (sq_t_id);

ALTER TABLE address ADD FOREIGN KEY (ad_zc_code) REFERENCES zip_code;
ALTER TABLE exchange ADD FOREIGN KEY (ex_ad_id) REFERENCES address;
ALTER TABLE industry ADD FOREIGN KEY (in_sc_id) REFERENCES sector;
ALTER TABLE charge ADD FOREIGN KEY (ch_tt_id) REFERENCES trade_type;
ALTER TABLE commission_rate ADD FOREIGN KEY (cr_tt_id) REFERENCES trade_type,
    ADD FOREIGN KEY (cr_ex_id) REFERENCES exchange;
ALTER TABLE customer ADD FOREIGN KEY (c_st_id) REFERENCES status_type,
    ADD FOREIGN KEY (c_ad_id) REFERENCES address;
ALTER TABLE customer_taxrate ADD FOREIGN KEY (cx_tx_id) REFERENCES taxrate,
    ADD FOREIGN KEY (cx_c_id) REFERENCES customer;
ALTER TABLE broker ADD FOREIGN KEY (b_st_id) REFERENCES status_type;
ALTER TABLE customer_account ADD FOREIGN KEY (ca_b_id) REFERENCES broker,
    ADD FOREIGN KEY (ca_c_id) REFERENCES customer;
ALTER TABLE account_permission ADD FOREIGN KEY (ap_ca_id) REFERENCES customer_account;
ALTER TABLE watch_list ADD FOREIGN KEY (wl_c_id) REFERENCES customer;
ALTER TABLE watch_item ADD FOREIGN KEY (wi_wl_id) REFERENCES watch_list,
    ADD FOREIGN KEY (wi_s_symb) REFERENCES security;
ALTER TABLE company ADD FOREIGN KEY (co_st_id) REFERENCES status_type,
    ADD FOREIGN KEY (co_in_id) REFERENCES industry, ADD FOREIGN KEY (co_ad_id) REFERENCES address;
ALTER TABLE company_competitor ADD FOREIGN KEY (cp_co_id) REFERENCES company,
    ADD FOREIGN KEY (cp_comp_co_id) REFERENCES company,
    ADD FOREIGN KEY (cp_in_id) REFERENCES industry;
ALTER TABLE security ADD FOREIGN KEY (s_st_id) REFERENCES status_type,
    ADD FOREIGN KEY (s_ex_id) REFERENCES exchange, ADD FOREIGN KEY (s_co_id) REFERENCES company;
ALTER TABLE daily_market ADD FOREIGN KEY (dm_s_symb) REFERENCES security;
ALTER TABLE last_trade ADD FOREIGN KEY (lt_s_symb) REFERENCES security;
ALTER TABLE financial ADD FOREIGN KEY (fi_co_id) REFERENCES company;
ALTER TABLE news_xref ADD FOREIGN KEY (nx_ni_id) REFERENCES news_item,
    ADD FOREIGN KEY (nx_co_id) REFERENCES company;
ALTER TABLE trade ADD FOREIGN KEY (t_st_id) REFERENCES status_type,
    ADD FOREIGN KEY (t_tt_id) REFERENCES trade_type,
    ADD FOREIGN KEY (t_s_symb) REFERENCES security,
    ADD FOREIGN KEY (t_ca_id) REFERENCES customer_account;
ALTER TABLE trade_history ADD FOREIGN KEY (th_t_id) REFERENCES trade,
    ADD FOREIGN KEY (th_st_id) REFERENCES status_type;
ALTER TABLE trade_request ADD FOREIGN KEY (tr_t_id) REFERENCES trade,
    ADD FOREIGN KEY (tr_tt_id) REFERENCES trade_type,
    ADD FOREIGN KEY (tr_s_symb) REFERENCES security, ADD FOREIGN KEY (tr_b_id) REFERENCES broker;
ALTER TABLE settlement ADD FOREIGN KEY (se_t_id) REFERENCES trade;
ALTER TABLE cash_transaction ADD FOREIGN KEY (ct_t_id) REFERENCES trade;
ALTER TABLE holding ADD FOREIGN KEY (h_t_id) REFERENCES trade,
    ADD FOREIGN KEY (h_ca_id, h_s_symb) REFERENCES holding_summary;
ALTER TABLE holding_history ADD FOREIGN KEY (hh_h_t_id) REFERENCES trade,
    ADD FOREIGN KEY (hh_t_id) REFERENCES trade;
ALTER TABLE holding_summary ADD FOREIGN KEY (hs_ca_id) REFERENCES customer_account,
    ADD FOREIGN KEY (hs_s_symb) REFERENCES security;
ALTER TABLE tpce_submitted ADD FOREIGN KEY (sq_t_id) REFERENCES trade;

CREATE INDEX customer_tax_id ON customer (c_tax_id);
CREATE INDEX customer_account_customer ON customer_account (ca_c_id);
CREATE INDEX broker_name ON broker (b_name);
CREATE INDEX watch_list_customer ON watch_list (wl_c_id);
CREATE INDEX company_industry ON company (co_in_id);
CREATE INDEX security_company ON security (s_co_id);
CREATE INDEX industry_sector ON industry (in_sc_id);
CREATE INDEX news_xref_company ON news_xref (nx_co_id);
CREATE INDEX trade_account_time ON trade (t_ca_id, t_dts);
CREATE INDEX trade_symbol_time ON trade (t_s_symb, t_dts);
CREATE INDEX trade_request_symbol ON trade_request (tr_s_symb, tr_b_id);
CREATE INDEX trade_request_broker ON trade_request (tr_b_id);
CREATE INDEX holding_account_symbol ON holding (h_ca_id, h_s_symb, h_dts);
CREATE INDEX holding_history_trade ON holding_history (hh_t_id);

CREATE SEQUENCE tpce_trade_id;
SELECT setval('tpce_trade_id', (SELECT max(t_id) FROM trade));
