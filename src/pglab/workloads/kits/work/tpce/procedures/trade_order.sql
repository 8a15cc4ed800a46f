-- pglab's TPC-E-like kit (procedures mode): Trade-Order (clause 3.3.7), committed
-- pglab: include args/trade_order.sql
SELECT tpce_trade_order(:acct, :owner, :s_num, :kind, :qty, :lifo, :margin, :limit_pct, false);
