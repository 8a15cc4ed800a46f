-- pglab's TPC-E-like kit (procedures mode): Market-Feed (clause 3.3.3): the ticker of up to 20
-- symbols with pending limit orders, submitting those their new prices trigger
SELECT tpce_market_feed();
