"""The TPC-E-like kit's dataset (``kit = "tpce"``): its rows by pglab's own deterministic
generator (``rows``; its constants and fixed tables in ``fixed``), loaded by COPY on several
connections at once and checked for consistency (``load``). Its transactions are pgbench
scripts (``workloads/kits/work/tpce``), run by the kits' runner (``workloads/kits``)."""
