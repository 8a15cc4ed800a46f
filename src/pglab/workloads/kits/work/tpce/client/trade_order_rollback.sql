-- pglab's TPC-E-like kit (client mode): Trade-Order rolled back by design (clause 3.3.7's
-- frame 5: 1% of Trade-Orders): its frames 1-4 as trade_order.sql's, then ROLLBACK
-- pglab: include args/trade_order.sql
-- pglab: include frames/trade_order.sql
-- frame 5: rolled back by design
ROLLBACK;
