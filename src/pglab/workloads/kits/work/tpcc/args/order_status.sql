-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set by_name random(1, 100) <= 60
\set last_n ((random(0, 255) | random(0, 999)) + 223) % 1000
\set c_id (((random(0, 1023) | random(1, 3000)) + 259) % 3000) + 1
