-- pglab's TPC-C-like kit (procedures mode): New-Order that rolls back (clause 2.4.1.4: 1 in 100 New-Orders)
-- pglab: include args/new_order.sql
-- clause 2.4.1.4: the last item is one that does not exist, so the order rolls back
\set bad 100001
SELECT tpcc_new_order(:w_id, :d_id, :c_id, :ol_cnt,
    ARRAY[CASE WHEN 1 = :ol_cnt THEN :bad ELSE :i1 END, CASE WHEN 2 = :ol_cnt THEN :bad ELSE :i2 END, CASE WHEN 3 = :ol_cnt THEN :bad ELSE :i3 END, CASE WHEN 4 = :ol_cnt THEN :bad ELSE :i4 END, CASE WHEN 5 = :ol_cnt THEN :bad ELSE :i5 END, CASE WHEN 6 = :ol_cnt THEN :bad ELSE :i6 END, CASE WHEN 7 = :ol_cnt THEN :bad ELSE :i7 END, CASE WHEN 8 = :ol_cnt THEN :bad ELSE :i8 END, CASE WHEN 9 = :ol_cnt THEN :bad ELSE :i9 END, CASE WHEN 10 = :ol_cnt THEN :bad ELSE :i10 END, CASE WHEN 11 = :ol_cnt THEN :bad ELSE :i11 END, CASE WHEN 12 = :ol_cnt THEN :bad ELSE :i12 END, CASE WHEN 13 = :ol_cnt THEN :bad ELSE :i13 END, CASE WHEN 14 = :ol_cnt THEN :bad ELSE :i14 END, CASE WHEN 15 = :ol_cnt THEN :bad ELSE :i15 END]::int[],
    ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[],
    ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9, :q10, :q11, :q12, :q13, :q14, :q15]::int[],
    true);
