-- pglab's TPC-E-like kit (procedures mode): Trade-Result (clause 3.3.8): the oldest trade in the
-- market's queue completed (none when the queue is empty: counted in tpce_idle)
SELECT tpce_trade_result();
