-- pglab's TPC-E-like kit (client mode): Trade-Order (clause 3.3.7), committed: frames 1-4 and 6
-- as statements, the values one frame passes to the next carried in pgbench's variables
-- (numbers only: a text a statement needs, as the executor's name, is read again there)
-- pglab: include args/trade_order.sql
-- pglab: include frames/trade_order.sql
-- frame 6: commit
COMMIT;
