-- :warehouses is given by pglab (pgbench -D); NURand(A, x, y) is clause 2.1.6's, with the
-- run's constants C: 259 (customer ids), 7911 (item ids), 223 (last names; 157 at load)
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id (((random(0, 1023) | random(1, 3000)) + 259) % 3000) + 1
\set ol_cnt random(5, 15)
\set i1 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s1 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q1 random(1, 10)
\set i2 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s2 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q2 random(1, 10)
\set i3 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s3 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q3 random(1, 10)
\set i4 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s4 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q4 random(1, 10)
\set i5 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s5 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q5 random(1, 10)
\set i6 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s6 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q6 random(1, 10)
\set i7 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s7 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q7 random(1, 10)
\set i8 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s8 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q8 random(1, 10)
\set i9 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s9 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q9 random(1, 10)
\set i10 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s10 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q10 random(1, 10)
\set i11 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s11 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q11 random(1, 10)
\set i12 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s12 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q12 random(1, 10)
\set i13 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s13 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q13 random(1, 10)
\set i14 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s14 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q14 random(1, 10)
\set i15 (((random(0, 8191) | random(1, 100000)) + 7911) % 100000) + 1
\set s15 CASE WHEN :warehouses > 1 AND random(1, 100) = 1 THEN (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses + 1 ELSE :w_id END
\set q15 random(1, 10)
