-- pglab's YCSB-like kit: the key, after the load
ALTER TABLE usertable ADD PRIMARY KEY (ycsb_key);
