-- seed 004 (PGCon 2008): a sequential scan of the accounts, one transaction each
SELECT sum(abalance) FROM pgbench_accounts;
