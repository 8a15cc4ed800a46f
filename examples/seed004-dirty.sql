-- seed 004: a fifth of the accounts updated in one transaction (run once: -t 1, one client),
-- leaving as many dead row versions for the next scan to step over
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid % 5 = 0;
