"""The environment of a run: what the numbers depend on besides the campaign's own choices.

PostgreSQL and pgbench versions, every non-default setting, kernel, CPU, RAM, CPU governor,
transparent huge pages, and the filesystem, mount options, device and IO scheduler of PGDATA
and of pg_wal (a loop device is followed to the file behind it and that file's own device; a
partition to its disk, whose queue holds the scheduler).
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import psycopg

from pglab import __version__
from pglab.fingerprints import Fingerprint, LoopBacking, MachineFacts, Mount
from pglab.postgres import build
from pglab.postgres.sources import Binaries

if TYPE_CHECKING:  # each kind of server calls its own function here (``Server.fingerprint``)
    from pglab.postgres.on_host import HostServer
    from pglab.postgres.reach import Reach
    from pglab.postgres.server import Cluster

NON_DEFAULT_SQL = """
SELECT name, setting, unit, source, current_setting(name) FROM pg_settings
WHERE source NOT IN ('default', 'override') ORDER BY name
"""

# what the server was built and initialised with, that no setting changes and that moves
# performance: compared between the two sides of every comparison (analysis/comparable.py)
BUILD_SQL = """
SELECT current_setting('data_checksums'), current_setting('block_size'),
       current_setting('wal_segment_size'), current_setting('debug_assertions')
"""


def server_build(conn: psycopg.Connection) -> dict[str, str]:
    row = conn.execute(BUILD_SQL).fetchone()
    keys = ("data_checksums", "block_size", "wal_segment_size", "assertions")
    return dict(zip(keys, (str(v) for v in row), strict=True)) if row else {}


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def mount_of(path: Path, depth: int = 0) -> Mount:
    """The mount holding ``path``: filesystem type, options, device, IO scheduler."""
    path = path.resolve()
    best: Mount = {}
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 6 or len(rparts) < 2:
            continue
        mountpoint = parts[4].replace("\\040", " ")
        if (path == Path(mountpoint) or Path(mountpoint) in path.parents) and len(
            mountpoint
        ) >= len(best.get("mountpoint", "")):
            best = {
                "mountpoint": mountpoint,
                "fstype": rparts[0],
                "device": rparts[1],
                "mount_options": parts[5],
                "super_options": rparts[2] if len(rparts) > 2 else "",
                "major_minor": parts[2],
            }
    if best:  # per-mount and per-superblock options together (ext4 says data= in the latter)
        opts = best["mount_options"].split(",") + best["super_options"].split(",")
        best["options"] = ",".join(dict.fromkeys(o for o in opts if o))
    if best.get("major_minor"):
        block = _block_dir(best["major_minor"], best["device"])
        best["scheduler"] = _scheduler(block) if block else None
        # the block device's own number (btrfs reports an anonymous one for the mount)
        best["block_device"] = _read(str(block / "dev")) if block else None
        backing = _read(str(block / "loop" / "backing_file")) if block else None
        if block and backing and depth < 2:
            best["loop_backing_file"] = backing
            best["loop_direct_io"] = _read(str(block / "loop" / "dio")) == "1"
            under = mount_of(Path(backing), depth + 1)
            best["loop_backing"] = LoopBacking(
                mountpoint=under.get("mountpoint"),
                fstype=under.get("fstype"),
                device=under.get("device"),
                scheduler=under.get("scheduler"),
            )
    return best


def _block_dir(major_minor: str, device: str) -> Path | None:
    """/sys's directory of the block device: by number, else (btrfs reports an anonymous
    number) by the device's name."""
    candidates = [Path(f"/sys/dev/block/{major_minor}")]
    if device.startswith("/dev/"):
        candidates.append(Path("/sys/class/block") / Path(device).name)
    return next((c.resolve() for c in candidates if c.exists()), None)


def _scheduler(block: Path) -> str | None:
    for candidate in (block / "queue" / "scheduler", block.parent / "queue" / "scheduler"):
        text = _read(str(candidate))
        if text:  # "mq-deadline [none] kyber": the bracketed one is in use
            active = re.search(r"\[([^\]]+)\]", text)
            return active.group(1) if active else text
    return None


def host() -> Fingerprint:
    uname = platform.uname()
    return {
        "pglab_version": __version__,
        "hostname": uname.node,
        "kernel": f"{uname.system} {uname.release}",
        "machine": uname.machine,
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "ram_bytes": psutil.virtual_memory().total,
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "thp": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "python": platform.python_version(),
    }


def of_binaries(b: Binaries) -> Fingerprint:
    """Where the server's programs come from and which pgbench runs; a build's definition
    (source, its hash, options, patches with their hashes, compiler) when pglab built it."""
    out: Fingerprint = {
        "pgbench_version": b.pgbench_version,
        "source": b.source_text,
        "bindir": str(b.bindir),
        "pgbench": b.exe("pgbench"),
    }
    if b.pgbench_from is not None:
        out["pgbench_from"] = b.pgbench_from
    if b.build is not None:
        out["build"] = build.facts_of(b.build)  # git only for a build of a commit
        if (git := b.build.get("git")) is not None:  # what `pglab history` shows of each run
            out["build_commit"] = git["commit"]
    return out


def of_run(cluster: Cluster) -> Fingerprint:
    """Everything about the server of a run and the machine it ran on (a server pglab made:
    ``of_existing`` for one it did not)."""
    with cluster.connect() as conn:
        version = conn.execute(
            "SELECT version(), current_setting('server_version_num'), "
            "pg_database_size(current_database())"  # pgbench's tables live in this database
        ).fetchone()
        assert version is not None  # a SELECT without FROM returns one row
        rows = conn.execute(NON_DEFAULT_SQL).fetchall()
        built = server_build(conn)
    fp = host()
    fp.update(
        Fingerprint(
            server_version=cluster.binaries.version,
            server_version_full=version[0],
            server_version_num=int(version[1]),
        )
    )
    fp.update(of_binaries(cluster.binaries))  # after the version: the stored order of keys
    fp.update(
        Fingerprint(
            settings={
                name: {"setting": s, "unit": u, "source": src, "shown": shown}
                for name, s, u, src, shown in rows
            },
            database_bytes=int(version[2]),  # as the run starts: after any reset
            server_build=built,
            pgdata=str(cluster.datadir),
            pgdata_mount=mount_of(cluster.datadir),
        )
    )
    wal = cluster.datadir / "pg_wal"
    fp["pg_wal"] = str(wal.resolve())
    fp["pg_wal_mount"] = mount_of(wal)
    fp["client"] = "on the server's machine (a server pglab made)"
    return fp


def of_existing(server: Reach, binaries: Binaries) -> Fingerprint:
    """An existing server as pgbench's sessions see it (with the run's session settings), the
    machine pgbench runs on, where that is relative to the server (``client``) and the round
    trip between them, measured now."""
    facts = server.facts()
    with server.connect(with_options=True) as conn:
        row = conn.execute(
            "SELECT version(), current_setting('server_version'), "
            "current_setting('server_version_num'), pg_database_size(current_database())"
        ).fetchone()
        assert row is not None
        rows = conn.execute(NON_DEFAULT_SQL).fetchall()
        built = server_build(conn)
        rtt = server.round_trip_ms(conn)
    local = server.client_is_local()
    where = "on the server's machine" if local else "on another machine"
    fp = host()  # the load generator's machine: the server's is not pglab's to read
    fp.update(of_binaries(binaries))
    fp.update(
        Fingerprint(
            server_kind="existing",
            server=server.key,
            server_addr=facts.server_addr,
            server_port=facts.server_port,
            database=server.spec.database,
            role=facts.role,
            privileges=facts.privileges(),
            server_version=str(row[1]).split()[0],
            server_version_full=row[0],
            server_version_num=int(row[2]),
            source=f"existing ({binaries.label} pgbench)",
            settings={
                name: {"setting": s, "unit": u, "source": src, "shown": shown}
                for name, s, u, src, shown in rows
            },
            database_bytes=int(row[3]),
            server_build=built,
            client_local=local,
            rtt_ms=round(rtt, 4),
            client=f"{where}, round trip {rtt:.3f} ms",
        )
    )
    return fp


def of_host(server: HostServer, binaries: Binaries) -> Fingerprint:
    """A server pglab made on another host: as an existing server is seen (settings, round
    trip), with the machine it runs on read over SSH (``hostname``, ``kernel``, ``cpus``,
    ``ram_bytes`` are that host's) and pglab's own machine in ``pglab_machine``."""
    fp = of_existing(server.reach, binaries)
    here = MachineFacts(
        hostname=fp["hostname"],
        kernel=fp["kernel"],
        cpus=fp["cpus"],
        ram_bytes=fp["ram_bytes"],
        cpu_model=fp["cpu_model"],
    )
    there = server.remote.facts(f"{server.bindir}/pgbench")
    fp.update(
        Fingerprint(
            server_kind="host",
            server=server.key,
            server_host=server.host,
            server_version=server.version,
            hostname=there.get("hostname"),
            kernel=there.get("kernel"),
            cpus=there.get("cpus"),
            ram_bytes=there.get("ram_bytes"),
            os_state=there.get("os_state") or {},  # the host's THP, dirty-page sysctls, ...
            cpu_model=None,
            pglab_machine=here,
            source=f"{binaries.label} on {server.host}",
            bindir=server.bindir,
            pgdata=server.datadir_remote,
            client=f"on pglab's machine ({here['hostname']}), over the network, round trip "
            f"{fp['rtt_ms']:.3f} ms",
        )
    )
    return fp
