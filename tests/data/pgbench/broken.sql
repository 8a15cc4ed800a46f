\set aid random(1, 100000)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT 1 / (:aid % 50);
