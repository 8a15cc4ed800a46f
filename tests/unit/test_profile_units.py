"""The profiler's pure parts: perf script's recorded text folded per process kind, process
titles to kinds, the stored form, shares and the differential on stacks with a known answer,
and ``[profile]`` checked in the campaign file."""

from __future__ import annotations

import shutil
import time
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from pglab.analysis import profiles
from pglab.campaign import parse
from pglab.errors import CampaignError
from pglab.profile import folded, perf
from pglab.records import PgbenchReport
from pglab.rows import PhaseRow, StoredRun

DATA = Path(__file__).resolve().parents[1] / "data" / "perf"


def test_perf_script_folds_by_process_kind() -> None:
    """40 samples of a select-only run by perf 6.1 (--call-graph dwarf), two backends."""
    text = (DATA / "script.txt").read_text()
    found = folded.fold(text, {28071: "backend", 28072: "backend"})
    assert found.samples("backend") == 40 and found.others == 0
    stacks = found.stacks["backend"]
    assert all(s.startswith("_start;") or "PostgresMain" in s for s in stacks), list(stacks)[:3]
    assert any(s.endswith("exec_simple_query;pg_parse_query;raw_parser;base_yyparse")
               for s in stacks)  # fmt: skip
    assert found.stripped() == []  # the embedded build keeps its symbols
    # a pid the watcher never saw as the server's (another program): left out, counted
    other = folded.fold(text, {28071: "backend"})
    assert other.samples("backend") == 22 and other.others == 18


SHORT = """\
        postgres 100 PERF_RECORD_FORK(200:200):(100:100)
        postgres 200 PERF_RECORD_COMM exec: postgres:200/200
postgres 200$
\t          46d9bb InitPostgres (/opt/pg18/bin/postgres)
\t          46fa5d PostgresMain (/opt/pg18/bin/postgres)

        postgres 200 PERF_RECORD_EXIT(200:200):(100:100)
            bash 900 PERF_RECORD_FORK(300:300):(900:900)
postgres 300$
\t          46fa5d PostgresMain (/opt/pg18/bin/postgres)

         pgbench 400 PERF_RECORD_FORK(400:401):(400:400)
postgres 100$
\t          3d6d15 postmaster_child_launch (/opt/pg18/bin/postgres)
\t          3da19d ServerLoop.isra.0 (/opt/pg18/bin/postgres)

""".replace("$", " ")  # perf ends a sample's first line with a space


def test_a_backend_gone_before_the_poll_is_kept_as_short_lived() -> None:
    """A backend of connect = "new" lives less than the watcher's half-second poll: the
    recording's fork event says the postmaster forked it, so its samples stay (a postgres
    forked by another program does not; an event line before a sample does not hide it)."""
    found = folded.fold(SHORT, {100: "postmaster", 400: folded.CLIENT})
    assert found.stacks[folded.SHORT_LIVED] == Counter({"PostgresMain;InitPostgres": 1})
    assert found.samples("postmaster") == 1 and found.others == 1
    assert "--show-task-events" in perf.script_argv("x")


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("/opt/pg/bin/postgres -D /lab/clusters/w1 -c port=5", "postmaster"),
        ("postgres: checkpointer ", "checkpointer"),
        ("postgres: background writer ", "background writer"),
        ("postgres: walwriter ", "walwriter"),
        ("postgres: autovacuum worker postgres", "autovacuum"),
        ("postgres: autovacuum launcher ", "autovacuum launcher"),
        ("postgres: parallel worker for PID 4242 ", "parallel worker"),
        ("postgres: io worker 0", "io worker"),
        ("postgres: postgres postgres [local] SELECT", "backend"),
        ("postgres: lab1: checkpointer ", "checkpointer"),  # with a cluster_name
        ("postgres: lab1: bench bench 10.0.0.1(5432) idle", "backend"),
    ],
)
def test_process_titles_tell_the_kinds(title: str, kind: str) -> None:
    assert folded.kind_of(title) == kind


def test_stacks_are_stored_compressed_and_read_back() -> None:
    stacks = Counter({"main;a;b": 7, "main;a": 3, "main;c": 1})
    text = folded.text_of(stacks)
    assert text.splitlines()[0] == "main;a;b 7"  # flamegraph.pl's format, most first
    assert folded.parse_text(text) == stacks
    assert folded.unpack(folded.pack(stacks)) == stacks
    tables = {folded.TABLE: folded.table(folded.Folded(stacks={"backend": stacks}))}
    assert folded.stacks_of(tables) == {"backend": stacks}
    assert folded.stacks_of({}) == {}


def test_a_symbol_cannot_break_the_folded_format() -> None:
    text = "postgres 7\n\t  1 f;g (/bin/pg)\n\t  2 main (/bin/pg)\n\n"
    assert folded.fold(text, {7: "backend"}).stacks["backend"] == Counter({"main;f:g": 1})


def test_a_binary_without_symbols_is_named() -> None:
    text = "".join(f"postgres 7\n\t  {i:x} [unknown] (/usr/lib/pg/bin/postgres)\n"
                   f"\t  1 main (/usr/lib/pg/bin/postgres)\n"
                   f"\t  2 [unknown] (/usr/lib/pg/bin/postgres)\n\n" for i in range(3))  # fmt: skip
    assert folded.fold(text, {7: "backend"}).stripped() == ["/usr/lib/pg/bin/postgres"]


def test_a_debian_binary_without_symbols_names_its_dbgsym_package() -> None:
    binary = "/usr/lib/postgresql/15/bin/postgres"  # Debian's, stripped
    assert shutil.which("dpkg") and Path(binary).exists(), "postgresql-15 is in .ci/run"
    said = perf.no_symbols(binary)
    assert "install postgresql-15-dbgsym" in said, said


def _phase(idx: int, name: str, measured: bool = True) -> PhaseRow:
    return PhaseRow(idx, name, 1, measured, 0.0, 1.0, [], None, None, None, None, None, None,
                    PgbenchReport(tps=0.0, transactions=0), "")  # fmt: skip


def _run(run_id: int, *stacks: dict[str, Counter[str]], names=("main",)) -> StoredRun:
    """A run whose measured phases ``names`` have ``stacks``, an unmeasured one between each."""
    phases, series = [], {}
    for i, (name, s) in enumerate(zip(names, stacks, strict=True)):
        phases += [_phase(2 * i, f"unmeasured {i}", False), _phase(2 * i + 1, name)]
        series[str(2 * i + 1)] = {folded.TABLE: folded.table(folded.Folded(stacks=s))}
    return StoredRun(id=run_id, campaign="c", run_key=f"k/{run_id}", point_key="k",
                     repeat=run_id, variant="v", label="v", status="ok", started_at=0.0,
                     finished_at=1.0, tps=1.0, error=None, metrics={}, phases=tuple(phases),
                     series=series)  # fmt: skip


def test_shares_self_and_inclusive() -> None:
    shares = profiles.shares(Counter({"main;f;g": 6, "main;f": 2, "main;h;f": 2}))
    assert shares["g"] == pytest.approx((60.0, 60.0))
    assert shares["f"] == pytest.approx((40.0, 100.0))  # self 2+2, in every stack
    assert shares["main"] == pytest.approx((0.0, 100.0))


def test_hot_functions_have_intervals_over_the_repeats() -> None:
    runs = [_run(i, {"backend": Counter({"m;f": 50 + d, "m;g": 50 - d})})
            for i, d in enumerate((0, 10, -10), start=1)]  # fmt: skip
    rows = profiles.hot_functions(runs)
    f = next(r for r in rows if r.function == "f")
    assert f.self_pct == pytest.approx(50.0) and f.runs == 3
    assert f.self_low is not None and f.self_low < 50 < f.self_high
    assert f.samples == 150


def test_the_differential_puts_the_largest_rise_first() -> None:
    a = [_run(i, {"backend": Counter({"m;x": 90 + i, "m;c": 10 - i})}) for i in (1, 2)]
    b = [_run(i, {"backend": Counter({"m;x": 60 + i, "m;c": 10 - i, "m;pglz": 30})})
         for i in (3, 4)]  # fmt: skip
    changes = profiles.differential(a, b)
    assert [c.function for c in changes][0] == "pglz"
    assert changes[0].delta == pytest.approx(30.0) and changes[0].clear
    assert changes[-1].function == "x" and changes[-1].delta < 0


def test_the_differential_leads_with_the_backend_and_floors_thin_kinds() -> None:
    """Issue 52: a background writer with 1 sample a run (0 -> 50% of its 2 samples) ranked
    first, [-585.3, 685.3], above the backend's real rise. The backend leads now, the thin
    kind is below the floor, and no interval leaves what a change of share can be."""
    main = "PostgresMain;exec_simple_query"

    def side(ids, alloc: int, writer: str):
        return [_run(i, {"backend": Counter({f"{main};ExecScan": 900 - alloc + i,
                                             f"{main};palloc;AllocSetAlloc": alloc - i}),
                         "background writer": Counter({writer: 1})})
                for i in ids]  # fmt: skip

    a = side((1, 2), 100, "BackgroundWriterMain;pg_usleep")
    b = side((3, 4), 200, "BackgroundWriterMain;WaitEventSetWait")
    b[1] = _run(
        4,
        {
            **profiles.run_stacks(b[1]),
            "background writer": Counter({"BackgroundWriterMain;pg_usleep": 1}),
        },
    )
    changes = profiles.differential(a, b)
    assert changes[0].process == "backend" and changes[0].function == "AllocSetAlloc"
    assert not changes[0].below_floor and changes[0].clear
    assert changes[0].samples_a == 197 and changes[0].kind_a == 1800
    writer = [c for c in changes if c.process == "background writer"]
    assert writer and all(c.below_floor for c in writer)
    wait = next(c for c in writer if c.function == "WaitEventSetWait")
    assert wait.delta == pytest.approx(50.0) and wait.low is not None and wait.high is not None
    assert wait.low >= -100 and wait.high <= 100  # the Welch interval was [-585.3, 685.3]
    hot = profiles.hot_functions(b)
    assert hot[0].process == "backend"
    assert all(r.below_floor for r in hot if r.process == "background writer")
    assert all(r.self_low is None or 0 <= r.self_low <= r.self_high <= 100 for r in hot)
    assert profiles.thin_kinds(b) == [("background writer", 2)]


def test_the_backend_leads_even_when_the_client_took_more_samples() -> None:
    runs = [_run(1, {"pgbench": Counter({"main;doCustom": 5000}),
                     "backend": Counter({"m;f": 300})})]  # fmt: skip
    kinds = [r.process for r in profiles.hot_functions(runs)]
    assert kinds == ["backend"] * 2 + ["pgbench"] * 2  # main and f; main and doCustom


def test_a_profile_with_every_kind_below_the_floor_is_shown_as_rough(monkeypatch) -> None:
    """A short phase whose backend took 40 samples: shown, not hidden, and said to be rough."""
    import io

    from rich.console import Console

    from pglab.cli import profiles as view

    console = Console(width=120, file=io.StringIO(), record=True, color_system=None)
    monkeypatch.setattr(view, "console", console)
    run = _run(1, {"backend": Counter({"m;f": 30, "m;g": 10}), "walwriter": Counter({"w": 2})})
    assert view.print_hot("run 1", [run])
    text = console.export_text()
    assert "f " in text and "walwriter" in text and "not shown" not in text, text
    assert "every process kind has fewer than 100 samples: these shares are rough" in text


def _parse(text: str):
    return parse.parse(tomllib.loads(text), default_name="p", base_dir=Path("."))


def test_profile_table_is_checked() -> None:
    base = 'name = "p"\n[workload]\nduration = 1\n'
    assert _parse(base).profile.enabled is False
    on = _parse(base + "[profile]\n").profile
    assert on.enabled and on.frequency == 99
    with pytest.raises(CampaignError) as err:
        _parse(base + "[profile]\nfrequency = 5000\nhz = 1\n")
    said = str(err.value)
    assert "frequency = 5000: expected a whole number" in said and "1 to 999" in said
    assert "hz" in said  # the unknown key too, in the same message


def test_room_for_perf_recordings_is_checked(tmp_path: Path) -> None:
    from pglab.planning.plan import make_plan
    from pglab.profile import checks

    def runs(duration: int):
        doc = f'name = "p"\n[workload]\nduration = {duration}\n[profile]\n'
        return make_plan(_parse(doc)).runs

    assert checks.recording_bytes(10, 99, 2) == 10 * 99 * 2 * (8192 + 600)  # ~17 MB
    assert checks._room(list(runs(10)), tmp_path / "work") is None
    err = checks._room(list(runs(10_000_000)), tmp_path / "work")  # 116 days: terabytes
    assert err is not None and "needs about" in err.message and "TiB" in err.message, err
    assert "lower [profile] frequency" in (err.hint or "")


def test_servers_not_profiled_are_said_in_the_plan() -> None:
    from pglab.planning.plan import make_plan
    from pglab.profile import checks

    doc = (
        'name = "p"\n[workload]\nduration = 1\n[profile]\n'
        "[variants.here]\n"
        '[variants.there]\nserver = { dsn = "postgresql://bench@db.example:5432/postgres" }\n'
        '[variants.db1]\nserver = { host = "db1" }\n[hosts.db1]\nssh = "bench@10.0.0.10"\n'
    )
    notes = checks.notes(make_plan(_parse(doc)).runs)
    assert notes[0].startswith("profile: the server's processes sampled by perf at 99 Hz")
    assert any("existing server dsn:" in n and "not profiled" in n for n in notes), notes
    assert "profile: the server on host db1 sampled there by its perf at 99 Hz" in notes[-1]
    off = _parse('name = "p"\n[workload]\nduration = 1\n')
    assert checks.notes(make_plan(off).runs) == []
    assert checks.problem(make_plan(off).runs) is None  # not profiled: perf not even asked


def test_each_measured_phase_has_its_own_profile() -> None:
    """A scan before and after VACUUM: merged by default, apart by name; the functions table
    has a phase column and the folded stacks the phase as a frame after the process kind."""
    before = {"backend": Counter({"m;scan;HeapTupleSatisfiesMVCC": 30, "m;scan": 70})}
    after = {"backend": Counter({"m;scan": 50}), "checkpointer": Counter({"c;write": 5})}
    run = _run(7, before, after, names=("scan; before", "scan after"))
    assert profiles.profiled_phases([run]) == ["scan; before", "scan after"]
    assert profiles.run_stacks(run)["backend"]["m;scan"] == 120  # merged
    assert profiles.run_stacks(run, "scan after") == after
    hot = profiles.hot_functions([run], phase="scan; before")
    assert [(r.function, r.self_pct) for r in hot[:2]] == [
        ("scan", 70.0),
        ("HeapTupleSatisfiesMVCC", 30.0),
    ]
    table = profiles.functions_table([run])
    phase, own = table.columns.index("phase"), table.columns.index("self_samples")
    assert table.columns[table.columns.index("repeat") + 1] == "phase"
    by_phase = Counter[str]()
    for row in table.rows:
        by_phase[row[phase]] += row[own]
    assert by_phase == {"scan; before": 100, "scan after": 55}  # each sample once, as self
    lines = profiles.folded_lines(run)
    assert "backend;phase scan: before;m;scan;HeapTupleSatisfiesMVCC 30" in lines
    assert "checkpointer;phase scan after;c;write 5" in lines
    back = folded.parse_text(profiles.folded_text([run]))
    assert sum(back.values()) == 155 and all(s.startswith("run 7;") for s in back)
    assert profiles.profiled_phases([_run(8, {})]) == []  # a phase without samples


def test_the_watcher_removes_what_its_command_leaves_however_it_ends(tmp_path: Path) -> None:
    """The SSH watcher (real sh): its stdin closed, as when pglab dies and sshd closes the
    channel, the command gets its stop signal and then the ``then`` step runs (perf's files
    removed on the host); with ``keep`` there, the step leaves them for perf script."""
    import subprocess
    import sys
    import time

    from pglab.hosts.ssh import watcher

    for keep in (False, True):
        d = tmp_path / f"keep-{keep}"
        d.mkdir()
        (d / "perf.data").write_text("x")
        if keep:
            (d / "keep").touch()
        then = f"[ -e {d}/keep ] || rm -rf -- {d}"
        # perf's own SIGINT handler, as a Python (a background job of sh ignores SIGINT until
        # its handler is set: it says when, and only then does the link go)
        perf = ("import pathlib, signal, sys, time; "
                "signal.signal(signal.SIGINT, lambda *_: sys.exit(130)); "
                f"pathlib.Path('{d}/ready').touch(); time.sleep(30)")  # fmt: skip
        proc = subprocess.Popen(["sh", "-c", watcher("INT", then), "w", sys.executable, "-c",
                                 perf], stdin=subprocess.PIPE)  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(b".")
        proc.stdin.flush()
        deadline = time.monotonic() + 10
        while not (d / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.stdin.close()  # the link gone: no heartbeat, the end of stdin
        assert proc.wait(10) == 130  # ended by SIGINT, its status the watcher's
        assert (d / "perf.data").exists() is keep


class _Said:
    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.spec = type("Spec", (), {"name": "db1", "label": 'host "db1" (10.0.0.10)'})()

    def run(self, argv, **_):
        from pglab.hosts.ssh import Finished

        return Finished(0, self.answers.get(argv[0], ""), "")


def test_perf_refused_on_a_host_names_it_the_level_and_what_to_do() -> None:
    """perf 6.1's refusal as an unprivileged user at perf_event_paranoid 3 (recorded)."""
    from pglab.profile import host

    said = ("Error:\nAccess to performance monitoring and observability operations is limited.\n"
            "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n"
            "access to performance monitoring and observability operations for processes\n"
            "without CAP_PERFMON, CAP_SYS_PTRACE or CAP_SYS_ADMIN Linux capability.")  # fmt: skip
    err = host._refused(_Said({"cat": "3\n", "id": "bench\n"}), said)  # type: ignore[arg-type]
    assert err.message.startswith(
        'perf on host "db1" (10.0.0.10) is not allowed to sample the '
        "server's processes as bench: kernel.perf_event_paranoid is 3"
    )
    assert "on db1, as root: sysctl kernel.perf_event_paranoid=2" in (err.hint or "")
    assert "leave profiling off" in (err.hint or "")


def test_a_host_s_process_titles_tell_the_kinds() -> None:
    """What the titles loop prints there: the postmaster first, then each child once."""
    from pglab.hosts.ssh import Finished
    from pglab.profile.host import HostRecording

    rec = HostRecording(_Said({}), "/tmp/pglab-x/pgdata", 99)  # type: ignore[arg-type]
    rec._read_titles(Finished(143, "41 postmaster\n42 postgres: checkpointer \n"
                              "43 postgres: postgres postgres 10.0.0.1(5) idle\n"
                              "42 postgres: walwriter\n", ""))  # fmt: skip
    assert rec.kinds == {41: "postmaster", 42: "checkpointer", 43: "backend"}
    paranoid = HostRecording(_Said({}), "d", 99)  # type: ignore[arg-type]
    paranoid.paranoid = "2"
    (note,) = paranoid.notes(folded.Folded())
    assert note.startswith("user space only on db1: kernel.perf_event_paranoid is 2 there")


def test_a_child_without_its_title_yet_is_read_again(tmp_path: Path) -> None:
    """The poll here: a child of the postmaster whose title is still the postmaster's (just
    forked) gets no kind until it has its own (real processes, titled by bash's exec -a)."""
    import subprocess

    from pglab.campaign.spec import ProfileSpec
    from pglab.profile.watch import ProfileWatch

    def titled(title: str) -> subprocess.Popen:
        return subprocess.Popen(["bash", "-c", f'exec -a "{title}" sleep 10'])

    started = [titled("/opt/pg/bin/postgres -D /lab/d"), titled("/opt/pg/bin/postgres -D /lab/d")]
    try:
        pm, child = started
        watch = ProfileWatch(None, ProfileSpec(), tmp_path, "x")  # type: ignore[arg-type]
        pids = [pm.pid, child.pid]
        watch._pids = lambda: pids
        for _ in range(50):  # until bash has exec'd both
            watch.kinds.clear()
            watch._poll()
            if watch.kinds.get(pm.pid) == "postmaster":
                break
            time.sleep(0.05)
        assert watch.kinds == {pm.pid: "postmaster"}  # the child: not yet
        started.append(titled("postgres: checkpointer "))
        pids[1] = started[-1].pid
        for _ in range(50):
            watch._poll()
            if pids[1] in watch.kinds:
                break
            time.sleep(0.05)
        assert watch.kinds[pids[1]] == "checkpointer"
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
