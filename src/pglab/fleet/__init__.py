"""A fleet: one campaign's runs spread over lab hosts, each running one benchmark at a time.

The queue is procrastinate's, in the PostgreSQL database of the results store (no other broker):
``pglab run FILE --fleet`` submits a job per comparison group (``queue.groups``: every variant
at one matrix coordinate, all repeats, so that what is compared ran on one host, interleaved);
``pglab worker`` on each host takes one job at a time and runs it in a child pglab
(``job.py``) under its own lab home. Workers send heartbeats; a job whose worker stopped
sending them is given to another (``worker.py``); a run is stored only whole, so a dead
worker's partial run is never stored.
"""
