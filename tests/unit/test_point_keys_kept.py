"""Every stored point keeps its key (issue 51): a phase's work has a type per kind since, and
``campaign/identity`` flattens it back into the one record a phase was stored as. The keys of
every example's points, and of campaigns that give each kind its keys (inherited pgbench
options beside an operation, sysbench's rate and seed, paced TPC-C, a TPC-H throughput run,
variants that switch an operation for a script), computed on da833da (before the change) and
held here, with a digest of each point's stored spec (its keys in their order).

Paths in a spec (a custom script's, a replay's workload file) are this checkout's: they are
written as ``ROOT/`` before hashing, so the digests do not depend on where the tests run
(``point_key`` itself is the same function of the spec with the checkout's paths)."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pglab.campaign import parse as campaign
from pglab.planning.plan import expand_points

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# campaigns of the tests' kind, beside the examples
DOCS = {
    "operation-beside-pgbench-options": """
name = "ops"
[workload]
script = "select-only"
clients = 4
protocol = "prepared"
max_tries = 3
random_seed = 7
[[phases]]
name = "warm"
measured = false
[[phases]]
name = "vac"
operation = "vacuum"
dirty = 0.2
[[phases]]
name = "idx"
operation = "create_index"
columns = ["bid", "abalance"]
method = "brin"
[matrix]
parallel = [0, 2]
""",
    "operation-switched-for-a-script": """
name = "switch"
[workload]
operation = "dump"
jobs = 2
compress = false
[variants.dump]
[variants.pgbench.workload]
script = "tpcb-like"
latency_log = "aggregate"
progress = false
""",
    "sysbench-rate-and-seed": """
name = "sb"
[dataset]
tables = 2
table_size = 1000
[workload]
generator = "sysbench"
test = "oltp_read_only"
clients = 2
rate = 100
random_seed = 3
duration = 5
""",
    "tpcc-paced": """
name = "paced"
[dataset]
scale = 2
[workload]
kit = "tpcc"
pacing = "spec"
think_time = 0.5
duration = 5
""",
    "ycsb-distribution": """
name = "ycsb"
[dataset]
scale = 1
fields = 4
[workload]
kit = "ycsb"
mode = "b"
distribution = "uniform"
clients = 2
[matrix]
rate = [100, 200]
""",
    "tpch-throughput": """
name = "tpch"
[dataset]
scale = 0.01
[workload]
kit = "tpch"
mode = "throughput"
clients = 2
queries = [6, 1, 14]
query_timeout = 30
random_seed = 5
""",
    "pgbench-every-option": """
name = "opts"
[workload]
scripts = [{builtin = "select-only", weight = 9}, {builtin = "simple-update"}]
clients = 4
threads = 2
transactions = 100
connect = true
vacuum = false
latency_limit = 50
failures_detailed = true
report_per_command = true
sampling_rate = 0.5
[[phases]]
name = "a"
times = 2
[[phases]]
name = "b"
rate = 300
""",
}


def _hashed(obj: object) -> str:
    text = json.dumps(obj, default=str).replace(str(ROOT), "ROOT")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def keys_of(c: Any) -> list[str]:
    """Each point's key (of its spec with this checkout's paths as ``ROOT/``: sorted, as
    ``point_key`` hashes it) and its stored spec's digest (in its keys' order)."""
    out = []
    for pt in expand_points(c):
        point = json.loads(json.dumps(pt.point_dict(), sort_keys=True, default=str))
        stored = {k: v for k, v in pt.to_dict().items() if k != "point_key"}
        out.append(f"{_hashed(point)} {_hashed(stored)}")
    return out


def campaign_of(name: str) -> Any:
    """An example (``NAME.toml``) or one of ``DOCS``, parsed."""
    if name in DOCS:
        return campaign.parse(tomllib.loads(DOCS[name]), name, base_dir=EXAMPLES)
    return campaign.load(EXAMPLES / name)


def campaigns() -> dict[str, Any]:
    """The campaigns whose keys are held: every example that parses here, and ``DOCS``."""
    found: dict[str, Any] = {}
    for name in [p.name for p in sorted(EXAMPLES.glob("*.toml"))] + list(DOCS):
        try:
            found[name] = campaign_of(name)
        except Exception:  # a build's sources, a git clone: not on every machine
            continue
    return found


KEPT: dict[str, list[str]] = {}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_every_point_keeps_its_key_and_its_stored_spec(name: str) -> None:
    assert keys_of(campaign_of(name)) == KEPT[name]


def test_the_held_keys_cover_every_kind() -> None:
    assert {"seed004-maintenance.toml", "replay.toml", "sysbench-vs-pgbench.toml"} <= set(KEPT)
    assert {"tpch-work-mem.toml", "tpcc-scaling.toml", "ycsb-zipf.toml"} <= set(KEPT)
    assert set(DOCS) <= set(KEPT)
