\set aid random(1, 4)
\set delta random(-100, 100)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT sum(abalance) FROM pgbench_accounts WHERE aid <= 4;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
END;
