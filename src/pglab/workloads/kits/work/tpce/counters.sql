-- pglab's TPC-E-like kit: what is counted just before and just after the measured pgbench run
-- (their differences are the phase's): the trades completed, as the sum of B_NUM_TRADES (each
-- committed Trade-Result adds one: tpsE-like's count), the Trade-Results that found the
-- market's queue empty, the trades ordered (the sequence of trade ids: a rolled-back
-- Trade-Order takes one too) and what waits: in the market's queue, and as limit orders.
-- Cheap at any scale: ten brokers per 1,000 customers, and small queues.
SELECT 'trades' AS counter, sum(b_num_trades)::bigint AS value FROM broker
UNION ALL
SELECT 'results_idle', count(*) FROM tpce_idle
UNION ALL
SELECT 'trade_ids', last_value FROM tpce_trade_id
UNION ALL
SELECT 'submitted', count(*) FROM tpce_submitted
UNION ALL
SELECT 'pending', count(*) FROM trade_request
