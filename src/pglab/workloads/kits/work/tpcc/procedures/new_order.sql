-- pglab's TPC-C-like kit (procedures mode): New-Order (clause 2.4), committed
-- pglab: include args/new_order.sql
SELECT tpcc_new_order(:w_id, :d_id, :c_id, :ol_cnt,
    ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[],
    ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[],
    ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9, :q10, :q11, :q12, :q13, :q14, :q15]::int[],
    false);
