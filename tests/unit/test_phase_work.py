"""A phase's work, one type per kind (issue 51): what ``PhaseSpec`` keeps of its own, the keys
each kind declares (together, the ``[workload]`` table), the kind decided once from what the
file said and flattened back into the record a phase is stored as."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign import workload
from pglab.campaign.identity import flat
from pglab.campaign.phase_work import kit_of, operation_of, phase_of, work_of
from pglab.campaign.schema import tables
from pglab.campaign.spec import PhaseSpec
from pglab.errors import CampaignError
from pglab.planning.plan import expand_points
from pglab.workloads import REGISTRY, kind_of
from pglab.workloads.work import (
    REFUSED_ELSEWHERE,
    STORED_FIELDS,
    UNSET,
    WORKS,
    KitWork,
    OperationWork,
    PgbenchWork,
    ReplayWork,
    SysbenchWork,
    TpchWork,
)

# what every kind's phase has: PhaseSpec's own fields (42 before the kinds declared theirs)
COMMON = ("clients", "threads", "duration", "transactions", "times", "measured", "generators")

KINDS = {
    "pgbench": '[workload]\nscript = "select-only"\nprotocol = "prepared"\nrate = 50\n',
    "tpcc": '[dataset]\nscale = 2\n[workload]\nkit = "tpcc"\npacing = "spec"\nthink_time = 1\n',
    "ycsb": '[workload]\nkit = "ycsb"\nmode = "b"\ndistribution = "uniform"\n',
    "tpce": '[dataset]\nscale = 1000\n[workload]\nkit = "tpce"\n',
    "tpch": '[dataset]\nscale = 0.01\n[workload]\nkit = "tpch"\nqueries = [3, 1]\n',
    "sysbench": '[workload]\ngenerator = "sysbench"\ntest = "oltp_insert"\nrate = 9\n',
    "maintenance": '[workload]\noperation = "create_index"\nparallel = 2\nmethod = "brin"\n',
}


def test_a_phase_keeps_only_what_every_kind_has() -> None:
    own = [f.name for f in dataclasses.fields(PhaseSpec)]
    assert own == ["name", "work", *COMMON]
    assert set(own) - {"work"} <= set(STORED_FIELDS)


def test_each_kind_declares_its_keys_and_together_they_are_the_workload_table() -> None:
    """The ``[workload]`` keys are what every phase has (``COMMON`` but its repeats) and the
    kinds' own ``KEYS``, each key declared by one kind (``mode`` the kits', TPC-H's too)."""
    declared = [k for work in WORKS for k in work.KEYS if k != "mode" or work is KitWork]
    assert len(declared) == len(set(declared))
    common = set(COMMON) - {"times", "measured"}
    assert common | set(declared) == tables.WORKLOAD_KEYS
    assert {"name", "times", "measured"} == tables.PHASE_KEYS - tables.WORKLOAD_KEYS


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_parsed_phase_has_its_kind_s_work_and_flattens_back(kind: str) -> None:
    c = campaign.parse(tomllib.loads(KINDS[kind]), kind)
    for ph in (c.variants[0].phases[0], expand_points(c)[0].phases[0]):
        assert kind_of(ph) == kind and kind in REGISTRY
        assert phase_of(flat(ph)) == ph  # the parser's record and the phase, one and the same
        assert list(flat(ph)) == list(STORED_FIELDS)


def test_the_kind_is_decided_once_in_the_order_it_always_was() -> None:
    base = flat(PhaseSpec("p"))
    assert isinstance(work_of(base), PgbenchWork)
    both = {**base, "operation": "vacuum", "kit": "tpcc", "replay": "/w", "generator": "sysbench"}
    assert isinstance(work_of(both), OperationWork)  # an operation first
    assert isinstance(work_of({**both, "operation": None}), KitWork)
    assert isinstance(work_of({**both, "operation": None, "kit": "tpch"}), TpchWork)
    assert isinstance(work_of({**both, "operation": None, "kit": None}), ReplayWork)
    only = {**both, "operation": None, "kit": None, "replay": None}
    assert isinstance(work_of(only), SysbenchWork)


def test_another_kind_s_fields_are_stored_at_their_unset_value() -> None:
    ph = PhaseSpec("v", OperationWork("vacuum", dirty=0.1, pgbench=PgbenchWork(rate=5.0)))
    f = flat(ph)
    assert (f["operation"], f["dirty"], f["rate"]) == ("vacuum", 0.1, 5.0)
    assert all(f[k] == UNSET[k] for k in ("kit", "mode", "generator", "test", "replay", "speed"))
    assert (operation_of(ph), kit_of(ph)) == ("vacuum", None)
    assert not dataclasses.replace(ph, generators=("gen1",)).remote  # an operation runs here
    assert ph.with_pgbench(rate=7.0).work == dataclasses.replace(
        ph.work, pgbench=PgbenchWork(rate=7.0)
    )


def test_the_parser_s_key_groups_are_the_kinds_declarations_in_their_old_order() -> None:
    """The keys the parser refuses beside sysbench or TPC-H follow from the kinds' ``KEYS``,
    named in the order their messages always named them."""
    from pglab.workloads.sysbench import work as sysbench
    from pglab.workloads.tpch import work as tpch

    pgbench_only = (
        "protocol", "connect", "vacuum", "latency_log", "progress", "max_tries",
        "failures_detailed", "latency_limit", "report_per_command", "sampling_rate", "threads",
    )  # fmt: skip
    assert pgbench_only == sysbench.NOT_ITS_OPTIONS
    assert ("duration", "transactions", "rate", "generators", *pgbench_only) == tpch.NOT_ITS
    assert sysbench.INSTEAD_OF == ("script", "scripts", "kit", "operation")
    assert TpchWork.KEYS == ("queries", "query_timeout")
    assert set(PgbenchWork.KEYS) - set(sysbench.NOT_ITS_OPTIONS) == {
        "script", "scripts", *SysbenchWork.PGBENCH_OPTIONS
    }  # fmt: skip


def test_the_keys_refused_beside_each_kind_are_the_ones_written_by_hand_before() -> None:
    """``workload.refused_beside``, made from the kinds' declarations, holds the rules the
    hand-written table ``REFUSED_BESIDE`` held (each (kind's key, value, keys) once)."""
    from pglab.workloads.sysbench import work as sysbench
    from pglab.workloads.tpch import work as tpch

    kits = ("tpcc", "ycsb", "tpch", "tpce")
    before = {
        ("kit", "tpch", tpch.NOT_ITS),
        *(("kit", kit, ("queries", "query_timeout")) for kit in kits if kit != "tpch"),
        *(("kit", kit, ("distribution",)) for kit in kits if kit != "ycsb"),
        *(("kit", kit, ("pacing", "think_time")) for kit in kits if kit != "tpcc"),
        ("generator", "sysbench", (*sysbench.INSTEAD_OF, *sysbench.NOT_ITS_OPTIONS)),
        ("generator", "pgbench", ("test",)),
    }
    found = workload.refused_beside()
    assert len(found) == len(before) and set(found) == before


ELSEWHERE = [
    ({"script": "select-only", "mode": "client"},
     "mode = 'client': the mode of a workload kit, but this phase runs no kit (kit = ...)"),
    ({"kit": "tpcc", "distribution": "uniform"},
     "distribution = 'uniform': how kit = \"ycsb\" picks its keys, but this phase runs no YCSB"),
    ({"kit": "ycsb", "pacing": "spec"},
     'pacing: terminals that think are kit = "tpcc"\'s (TPC-C clause 5.2.5), but this phase '
     "runs no TPC-C"),
    ({"test": "oltp_read_only"},
     "test = 'oltp_read_only': a sysbench test, but this phase runs pgbench "
     '(generator = "sysbench" runs sysbench)'),
    ({"script": "select-only", "queries": [1]},
     'queries: options of kit = "tpch", but this phase runs no TPC-H'),
    ({"parallel": 2},
     "parallel: an option of a maintenance operation (operation = ...), but this phase runs a "
     "pgbench script"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "said"), ELSEWHERE, ids=[str(g) for g, _ in ELSEWHERE])
def test_another_kind_s_keys_are_refused_by_one_rule_with_their_messages(
    given: dict[str, object], said: str, tmp_path: Path
) -> None:
    """Each kind's own keys beside a phase of another kind (``workloads/work``'s
    ``REFUSED_ELSEWHERE``), said as the parser always said them."""
    with pytest.raises(CampaignError) as refused:
        campaign.parse({"workload": given}, "t", tmp_path)
    assert refused.value.message.split("\n  ")[1:] == [f"[workload]: {said}"]
    keys = {k for r in REFUSED_ELSEWHERE for k in r.keys}
    assert set(given) & keys and all(r.said for r in REFUSED_ELSEWHERE)


def test_a_key_said_of_its_value_waits_for_the_kind_the_table_asks_for(tmp_path: Path) -> None:
    """A kit refused by its value: its mode is not also refused as a phase without a kit's."""
    with pytest.raises(CampaignError) as refused:
        campaign.parse({"workload": {"kit": "tpcx", "mode": "b"}}, "t", tmp_path)
    (only,) = refused.value.message.split("\n  ")[1:]
    assert only.startswith("[workload]: kit = 'tpcx'") or 'kit = "tpcx"' in only, only
