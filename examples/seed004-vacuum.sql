-- seed 004: the accounts vacuumed (run once: -t 1, one client); pgbench sends it alone,
-- outside a transaction block, as VACUUM needs
VACUUM pgbench_accounts;
