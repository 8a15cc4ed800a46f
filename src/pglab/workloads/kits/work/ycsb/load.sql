-- pglab's YCSB-like kit: records (block - 1) * 100,000 + 1 .. block * 100,000 (at most
-- records), one block per call (the loader calls it on several connections at once)
CREATE OR REPLACE FUNCTION ycsb_load(block int, records bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO usertable
    SELECT k, @FIELD_VALUES@
    FROM generate_series((block - 1) * 100000::bigint + 1,
                         least(block * 100000::bigint, records)) AS k
$$;
