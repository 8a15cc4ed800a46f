"""PostgreSQL built by the lab from Debian's PostgreSQL 15 tarball (``pg15_build``: built once,
kept between sessions in the build cache): a campaign on it, build options the embedded 18
lacks, a patch against its base, failures before any run, the cache reused."""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import pglab_run_in_background, wait_for

from pglab.campaign import parse as campaign
from pglab.campaign.spec import BuildSpec, ServerSpec
from pglab.cli import main
from pglab.errors import BuildError, LabError, SettingsError
from pglab.lab import Lab
from pglab.planning.preflight import preflight
from pglab.postgres import build, dataset, sources
from pglab.procs import wait_until as procs_wait
from pglab.report import _env_facts as report_env_facts
from pglab.report import model
from pglab.store import open_store
from pglab.telemetry.base import Table

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PATCH = REPO / "examples" / "checkpoint-completion-0.5.patch"

SMALL = """[server.settings]
wal_compression = "zstd"
[dataset]
scale = 1
[workload]
clients = 2
duration = 2
"""
DOC = 'name = "{name}"\n[server]\nbuild = {{ source = "{source}"{extra} }}\n' + SMALL


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


AB = (
    'name = "ab"\n'
    + SMALL
    + """[variants.base]
server = {{ build = {{ source = "{source}" }} }}
[variants.patched]
server = {{ build = {{ source = "{source}", patches = ["{patch}"] }} }}
"""
)


def test_built_servers_run_a_campaign_with_telemetry_and_are_named_everywhere(
    tmp_path: Path, lab: Lab, pg15_build: dict[str, Any], pg15_patched: dict[str, Any],
    pg15_tarball: Path, no_leftovers, capsys,
) -> None:  # fmt: skip
    path = tmp_path / "ab.toml"
    path.write_text(AB.format(source=pg15_tarball, patch=pg15_patched["patch"]))
    store_path = tmp_path / "r.sqlite"
    assert cli("run", str(path), lab=lab, store=store_path) == 0
    out = capsys.readouterr().out
    made, patched = pg15_build["build"], pg15_patched["build"]
    for b in (made, patched):  # built by the fixtures: the campaign finds them
        assert f"PostgreSQL {b.info['version']} found in the build cache: {b.root}" in out
    with open_store(str(store_path)) as store:
        runs = {r.variant: store.get_run(r.id) for r in store.list_runs()}
    assert set(runs) == {"base", "patched"}
    for variant, b in (("base", made), ("patched", patched)):
        run = runs[variant]
        assert run.status == "ok", run.error
        fp = run.fingerprint
        assert fp["server_version"].startswith("15.") and fp["bindir"] == str(b.bindir)
        assert fp["source"].startswith("build:postgresql-15") and fp["source"].endswith(b.key)
        assert fp["settings"]["wal_compression"]["setting"] == "zstd"  # accepted, in effect
        info = fp["build"]
        assert info["source"] == str(pg15_tarball)
        assert info["source_sha256"] == sha256(pg15_tarball) and info["key"] == b.key
        assert info["options"] == [] and info["system"] == "configure"
        for option in ("--with-lz4", "--with-zstd", "--with-icu", "--with-openssl", "CFLAGS=-O2"):
            assert option in info["effective_options"]
        assert "--enable-cassert" not in info["effective_options"]
        assert info["compiler"].startswith(("gcc", "cc"))
        kinds = set(run.series["0"])  # pg.buffercache: contrib was built
        for kind in ("progress", "pg.database", "pg.wal", "waits", "os.cpu", "pg.buffercache"):
            assert kind in kinds, f"{variant}: {kind} missing from {sorted(kinds)}"
        db = Table.from_json(run.series["0"]["pg.database"])
        assert sum(r[db.columns.index("xact_commit")] for r in db.rows) > 0
    assert runs["base"].fingerprint["build"]["patches"] == []
    (p,) = runs["patched"].fingerprint["build"]["patches"]
    assert p["name"] == PATCH.name and p["sha256"] == sha256(PATCH)
    # show names the build: its source, options, patches and compiler
    assert main(["show", str(runs["patched"].id), "--store", str(store_path)]) == 0
    shown = capsys.readouterr().out
    tarball = f"{pg15_tarball.name} (sha256 {sha256(pg15_tarball)[:12]})"
    assert f"built by pglab: source: {tarball}" in shown
    assert "--with-zstd" in shown and f"patches: {PATCH.name} (sha256 " in shown
    assert runs["patched"].fingerprint["build"]["compiler"] in shown
    # compare lists the patch among what differs (and the one pgbench both points ran)
    assert main(["compare", "ab:base", "ab:patched", "--json", "--store", str(store_path)]) == 0
    diff = {d["name"]: d for d in json.loads(capsys.readouterr().out)["settings_diff"]}
    assert diff["build patches"]["a"] == "none" and PATCH.name in diff["build patches"]["b"]
    assert diff["pgbench_from"]["b"] == runs["base"].fingerprint["source"]
    assert "build options" not in diff and "compiler" not in diff  # the same in both
    # the report's environment has a line per build
    with open_store(str(store_path)) as store:
        rep = model.gather(store, "ab")
    lines = [value for name, value in report_env_facts(rep) if name == "built by pglab"]
    assert len(lines) == 2 and sum(PATCH.name in line for line in lines) == 1


def test_zstd_is_refused_on_the_embedded_18_with_the_existing_message(
    tmp_path: Path, lab: Lab
) -> None:
    path = tmp_path / "emb.toml"
    path.write_text('name = "emb"\n[server.settings]\nwal_compression = "zstd"\n')
    with pytest.raises(SettingsError) as err:
        preflight(campaign.load(path), lab)
    assert 'wal_compression = "zstd": not one of pglz, on, off' in str(err.value)


def test_a_patch_shows_in_pg_settings(
    lab: Lab, pg15_build: dict[str, Any], pg15_patched: dict[str, Any]
) -> None:
    patched = sources.resolve(pg15_patched["spec"], lab)
    base = sources.resolve(pg15_build["spec"], lab)
    assert patched.build is not None and patched.bindir != base.bindir
    assert patched.build["patches"] == [
        {"name": PATCH.name, "path": str(PATCH), "sha256": sha256(PATCH)}
    ]
    # its pg_settings (read from a server of that build) has the patched default
    assert dataset.load_catalog(lab, patched)["checkpoint_completion_target"].boot_val == "0.5"
    assert dataset.load_catalog(lab, base)["checkpoint_completion_target"].boot_val == "0.9"


def _nothing_stored(store: Path, builds: Path, before: set[str]) -> None:
    with open_store(str(store)) as s:
        assert s.list_runs() == [] and s.list_campaigns() == []
    after = {p.name for p in builds.iterdir()}
    new = after - before
    # no build, no scratch directory; ccache's cache (compiled objects) may be new
    assert all(n.endswith((".lock", ".failed.log")) or n == "ccache" for n in new), new


def test_a_patch_that_does_not_apply_stops_before_any_run(
    tmp_path: Path, lab: Lab, pg15_tarball: Path, build_cache: Path, capsys
) -> None:
    bad = tmp_path / "stale.patch"
    bad.write_text(PATCH.read_text().replace("-\t\t0.9, 0.0, 1.0,", "-\t\t0.7, 0.0, 1.0,"))
    path = tmp_path / "bad.toml"
    path.write_text(DOC.format(name="bad", source=pg15_tarball, extra=f', patches = ["{bad}"]'))
    before = {p.name for p in build_cache.iterdir()}
    capsys.readouterr()
    assert cli("run", str(path), lab=lab, store=tmp_path / "r.sqlite") == 2
    said = capsys.readouterr()
    out, err = said.out, said.err
    # the build's progress: each step with the time since it began
    steps = [re.sub(r" \(\S+ so far\)$", "", line) for line in out.splitlines()
             if line.startswith("build: ")]  # fmt: skip
    assert steps == [
        "build: hashing the source",
        "build: unpacking",
        "build: patching (stale.patch)",
    ]
    assert re.search(r"build: unpacking \(\d+s so far\)", out)
    assert f"patch {bad} does not apply: hunk #1 of src/backend/utils/misc/guc.c failed" in err
    assert "nothing was run or stored" in err
    _nothing_stored(tmp_path / "r.sqlite", build_cache, before)


def test_a_source_that_does_not_build_stops_before_any_run(
    tmp_path: Path, lab: Lab, pg15_tarball: Path, build_cache: Path
) -> None:
    # a C syntax error in a file compiled among the first: configure passes, make fails
    broken = tmp_path / "broken.patch"
    broken.write_text(
        "--- a/src/common/string.c\n+++ b/src/common/string.c\n@@ -1,2 +1,3 @@\n"
        "+this is not C;\n /*" + "-" * 73 + "\n *\n"
    )
    spec = BuildSpec(str(pg15_tarball), patches=(str(broken),))
    before = {p.name for p in build_cache.iterdir()}
    with pytest.raises(BuildError) as err:
        build.ensure(spec, lab)
    text = str(err.value)
    assert text.startswith(f"building PostgreSQL from {pg15_tarball} failed: compiling failed")
    assert "--- build log (last lines; whole log: " in text
    assert "string.c" in text and "error" in text  # the compiler's own words
    assert err.value.hint and "nothing was run or stored" in err.value.hint
    failed_log = Path(text.split("whole log: ")[1].split(")")[0])
    assert failed_log.is_file() and "this is not C" in failed_log.read_text()
    _nothing_stored(tmp_path / "r.sqlite", build_cache, before)


def test_a_second_resolve_reuses_the_build(
    lab: Lab, pg15_build: dict[str, Any], build_cache: Path
) -> None:
    first = pg15_build["build"]
    spec = pg15_build["spec"].build
    again = build.ensure(spec, lab)
    assert not again.built_now and again.root == first.root
    assert again.info["built_at"] == first.info["built_at"]  # the build ran once
    assert json.loads((first.root / "build.json").read_text())["key"] == first.key
    log = first.log.read_text()
    assert log.count("=== configuring:") == 1 and "=== installing:" in log


def test_versions_resolve_to_the_first_source_of_that_major(
    lab: Lab, pg15_build: dict[str, Any], capsys
) -> None:
    got = sources.resolve(ServerSpec(source="version", version="16"), lab)
    assert got.label == "version:16" and got.resolved == "pgserver" and got.major == 16
    got = sources.resolve(ServerSpec(source="version", version="15"), lab)
    assert got.resolved == "bindir:/usr/lib/postgresql/15/bin"  # Debian's, before builds
    with pytest.raises(LabError) as err:
        sources.resolve(ServerSpec(source="version", version="14"), lab)
    assert 'no PostgreSQL 14 here for version = "14"' in err.value.message
    assert err.value.hint and "apt-get install postgresql-14" in err.value.hint
    assert "build = { source" in err.value.hint
    # pglab sources: every one, with what it was built with
    capsys.readouterr()
    assert main(["sources", "--lab-dir", str(lab.home)]) == 0
    out = capsys.readouterr().out
    made = pg15_build["build"]
    assert "embedded" in out and "pgserver" in out and "/usr/lib/postgresql/15/bin" in out
    assert f"build:{Path(made.info['source']).name}#{made.key}" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("build:") and made.key in ln)
    assert "lz4 zstd icu openssl" in line and made.info["version"] in line
    assert main(["sources", "--json", "--lab-dir", str(lab.home)]) == 0
    listed = {s["source"]: s for s in json.loads(capsys.readouterr().out)}
    built = listed[f"build:{Path(made.info['source']).name}#{made.key}"]
    assert (
        built["features"] == ["lz4", "zstd", "icu", "openssl"] and built["build"]["key"] == made.key
    )
    assert (
        listed["embedded"]["features"] == [] and "--without-icu" in listed["embedded"]["configure"]
    )


def test_ctrl_c_during_a_build_leaves_nothing_running_and_nothing_stored(
    tmp_path: Path, lab: Lab, pg15_tarball: Path, build_cache: Path, monkeypatch
) -> None:
    # options of their own: a build no other test makes; without ccache, whose hits would
    # leave no compiler to see at work
    monkeypatch.setenv("CCACHE_DISABLE", "1")
    path = tmp_path / "debug.toml"
    path.write_text(DOC.format(name="debug", source=pg15_tarball,
                               extra=', options = ["--enable-debug"]'))  # fmt: skip
    # the scratch directory a SIGKILLed pglab left of this build: the next build removes it
    key = build.build_key(build.source_hash(pg15_tarball), ("--enable-debug",), [],
                          build.found_libraries())  # fmt: skip
    stale = build_cache / f"{key}.tmp-999999"
    (stale / "src").mkdir(parents=True, exist_ok=True)
    before = {p.name for p in build_cache.iterdir()} - {stale.name}
    err = tmp_path / "err.txt"

    def compilers() -> list[psutil.Process]:
        """make and the compiler at work in a scratch directory of the build cache."""
        found = []
        for p in psutil.process_iter(["name", "cwd"]):
            if p.info["name"] in ("make", "cc1", "gcc", "ccache") and str(build_cache) in (
                p.info["cwd"] or ""
            ):
                found.append(p)
        return found

    with pglab_run_in_background(path, lab.home, tmp_path / "r.sqlite", err) as proc:

        def compiling() -> bool:
            logs = [log.read_text(errors="replace") for log in build_cache.glob("*.tmp-*/*.log")]
            return any("=== compiling:" in log for log in logs) and any(
                p.info["name"] == "cc1" for p in compilers()
            )

        # configure comes first: minutes when another test file runs beside it (pytest -n 2)
        wait_for(compiling, proc, err, "make and the compiler", seconds=480)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 130, err.read_text()
    time.sleep(1)
    assert not compilers(), "left running"
    assert not stale.exists()
    _nothing_stored(tmp_path / "r.sqlite", build_cache, before)


def test_a_second_pglab_waits_for_the_build_in_progress_and_uses_it(
    tmp_path: Path, lab: Lab, pg15_build: dict[str, Any], monkeypatch
) -> None:
    made = pg15_build["build"]
    cache = tmp_path / "builds"
    cache.mkdir()
    monkeypatch.setenv("PGLAB_BUILDS", str(cache))
    said: list[str] = []
    found: list[build.Build] = []
    with open(cache / f"{made.key}.lock", "w") as held:  # "another pglab" building this key
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = threading.Thread(
            target=lambda: found.append(build.ensure(pg15_build["spec"].build, lab, said.append))
        )
        waiting.start()
        assert procs_wait(lambda: any(s.startswith("waiting for another pglab") for s in said), 30)
        assert waiting.is_alive()  # it waits for the lock, it does not build
        (cache / made.key).symlink_to(made.root)  # the other pglab's build, done
        fcntl.flock(held, fcntl.LOCK_UN)
    waiting.join(timeout=60)
    (got,) = found
    assert not got.built_now and got.info["built_at"] == made.info["built_at"]
    assert "unpacking" not in said  # nothing built twice
