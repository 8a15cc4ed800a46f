-- pglab's YCSB-like kit: YCSB's usertable (a key and ten fields of 100 random characters,
-- YCSB's defaults), without its key (added after the load, keys.sql), written by pglab
DROP TABLE IF EXISTS usertable;
CREATE TABLE usertable (
    ycsb_key bigint NOT NULL,
    field0 text, field1 text, field2 text, field3 text, field4 text, field5 text, field6 text, field7 text, field8 text, field9 text
);

-- a field's value: 100 random characters
CREATE OR REPLACE FUNCTION ycsb_value() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT left(md5(random()::text) || md5(random()::text) || md5(random()::text)
                || md5(random()::text), 100)
$$;
