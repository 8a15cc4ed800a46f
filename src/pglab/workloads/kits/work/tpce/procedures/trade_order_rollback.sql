-- pglab's TPC-E-like kit (procedures mode): Trade-Order rolled back by design (clause 3.3.7's
-- frame 5: 1% of Trade-Orders)
-- pglab: include args/trade_order.sql
SELECT tpce_trade_order(:acct, :owner, :s_num, :kind, :qty, :lifo, :margin, :limit_pct, true);
