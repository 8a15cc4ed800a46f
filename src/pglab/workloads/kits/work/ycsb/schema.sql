-- pglab's YCSB-like kit: YCSB's usertable (a key and [dataset] fields of field_length random
-- characters: YCSB's fieldcount and fieldlength, 10 and 100 by default), without its key
-- (added after the load, keys.sql), written by pglab; @FIELD_...@ are filled in by pglab
DROP TABLE IF EXISTS usertable;
CREATE TABLE usertable (
    ycsb_key bigint NOT NULL,
    @FIELD_COLUMNS@
);

-- a field's value: 100 random characters
CREATE OR REPLACE FUNCTION ycsb_value() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT left(md5(random()::text) || md5(random()::text) || md5(random()::text)
                || md5(random()::text), 100)
$$;

-- n random characters (field_length other than 100)
CREATE OR REPLACE FUNCTION ycsb_value(n int) RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT left(string_agg(md5(random()::text), ''), n) FROM generate_series(1, (n + 31) / 32)
$$;
