"""A server is a lease (``postgres/lease.py``): which runs share one, which kind ``provision``
gives, and the description a lease stores, which the views render as they rendered the stored
``server_kind`` before (``fingerprints.lease_of`` makes the same from an older run's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.analysis import environment
from pglab.campaign.spec import ServerSpec, StorageSpec
from pglab.fingerprints import Fingerprint, lease_of
from pglab.lab import Lab
from pglab.postgres.lease import HERE, DsnLease, LocalLease, lease_key, provision

DSN = "host=db1 user=bench password=secret dbname=app"
EXISTING = ServerSpec(dsn=DSN, database="pglab_bench")
ON_HOST = ServerSpec(host="db1", database="pglab")

# what a run on each kind stored before leases described themselves
OLD: dict[str, Fingerprint] = {
    "here": Fingerprint(server_version="18.1", source="embedded", hostname="lab1", cpus=2,
                        ram_bytes=8 * 2**30, kernel="6.1", governor="performance", thp="madvise"),
    "existing": Fingerprint(server_kind="existing", server="host=db1 user=bench", role="bench",
                            database="pglab_bench", server_version="16.4", source="existing",
                            hostname="lab1", cpus=2, ram_bytes=8 * 2**30, kernel="6.1",
                            client="on another machine, round trip 0.210 ms"),
    "host": Fingerprint(server_kind="host", server_host="db1", hostname="db1.lan", database="pglab",
                        server_version="18.1", source="embedded on db1", cpus=4,
                        ram_bytes=16 * 2**30, kernel="6.1", client="on pglab's machine"),
}  # fmt: skip


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(home=tmp_path, run_as=None)  # nothing is made in it


def test_provision_gives_each_kind_its_lease(lab: Lab) -> None:
    assert isinstance(provision(ServerSpec(), StorageSpec(), lab), LocalLease)
    existing = provision(EXISTING, StorageSpec(), lab)
    on_host = provision(ON_HOST, StorageSpec(), lab)
    assert isinstance(existing, DsnLease) and not existing.on_host
    assert isinstance(on_host, DsnLease) and on_host.on_host
    assert on_host.check() is None  # made at its first run: nothing to reach before


def test_clusters_made_here_share_one_lease_and_others_one_each() -> None:
    assert lease_key(ServerSpec(), StorageSpec()) == HERE
    assert lease_key(ServerSpec(source="bindir", bindir="/usr/lib/x"), StorageSpec()) == HERE
    assert lease_key(EXISTING, StorageSpec()) == EXISTING.server_label
    assert lease_key(ON_HOST, StorageSpec()) == ON_HOST.server_label


@pytest.mark.parametrize("kind", sorted(OLD))
def test_a_lease_describes_itself_as_the_views_rendered_its_kind(kind: str, lab: Lab) -> None:
    """The facts ``show RUN`` and the report print are the same from a new run's description
    as from the stored kind of an older run's."""
    old = OLD[kind]
    spec = {"here": ServerSpec(), "existing": EXISTING, "host": ON_HOST}[kind]
    lease = provision(spec, StorageSpec(), lab)
    if isinstance(lease, DsnLease):
        lease.fp = old  # what its prepare made
    new = Fingerprint(**{k: v for k, v in old.items() if k != "server_kind"})  # type: ignore[typeddict-item]
    new["lease"] = lease.describe()
    assert lease_of(new) == lease_of(old)
    assert environment.facts(new) == environment.facts(old)


def test_the_descriptions_say_what_each_kind_said() -> None:
    said = {kind: dict(environment.facts(fp)) for kind, fp in OLD.items()}
    assert "server" not in said["here"] and said["here"]["machine"].startswith("2 CPU(s)")
    assert said["existing"]["server"] == (
        "existing host=db1 user=bench, role bench, database pglab_bench; pglab did not start it"
    )
    assert said["existing"]["pgbench's machine"].startswith("2 CPU(s)")
    assert said["host"]["server"] == "made by pglab on db1 (db1.lan), database pglab"
    assert "CPU governor" not in said["host"] and "CPU governor" in said["existing"]
    assert lease_of(OLD["existing"])["ram_known"] is False  # pgbench's machine's RAM
