"""What the tests share besides their fixtures (``tests/conftest.py``): servers and stores to test
against, synthetic campaigns, network namespaces as hosts, the store contract. Imported as
``helpers.NAME``: pytest's ``pythonpath = ["tests"]`` puts the package on the path, so no test
edits ``sys.path``.

- ``collect_refusals``: a pytest plugin that records the documents the tests see refused;
- ``file_times``: a pytest plugin that prints the slowest test files and how busy the CPUs
  were meanwhile;
- ``existing_server``: a PostgreSQL server pglab did not start, for ``dsn`` campaigns;
- ``fleet_workers``: a fleet's workers on a PostgreSQL store, started and always stopped;
- ``netns_hosts``: network namespaces with an SSH server each, as remote hosts;
- ``os_helpers``: the ``[os]`` table's kernel state, read and restored;
- ``pg_store``: a PostgreSQL results store;
- ``storage_helpers``: filesystems for storage targets;
- ``store_checks``: the contract every store backend passes, and sample runs;
- ``synthetic_operations``, ``synthetic_runs``: stored campaigns with known answers;
- ``xdist_files``: a pytest plugin that gives pytest-xdist's workers whole files (``-n 2``).
"""
