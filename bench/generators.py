"""Where pgbench runs: a CPU-bound select-only point with pgbench on the server's CPU, and with
pgbench on a CPU of its own, interleaved, paired.

The server is an existing one this script starts (the tests' ``OutsideServer``), pinned to CPU
0. pgbench runs on a load generator host over SSH (a network namespace running sshd, the tests'
``netns_hosts``), pinned by a ``taskset`` wrapper either to CPU 0 too ("same", as when pgbench
runs on the server's machine) or to CPU 1 ("apart", as on a host of its own). Both go through
the same veth link, so only the CPU sharing differs. Each pair's ratio apart / same cancels the
drift of a shared machine; the last line is ``generator_apart_ratio: X (95% CI a–b)``, X the
median ratio (how much more TPS the same server gives when pgbench does not take its CPU).
Needs root, iproute2, openssh-server and 2 CPUs.

    .venv/bin/python bench/generators.py [--pairs 8] [--duration 10] [--clients 4]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser, run_pairs, scratch_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.existing_server import BENCH_PASSWORD, OutsideServer  # noqa: E402
from helpers.netns_hosts import Hosts  # noqa: E402

from pglab.campaign import parse as campaign  # noqa: E402
from pglab.planning.plan import make_plan  # noqa: E402
from pglab.postgres.sources import resolve  # noqa: E402
from pglab.run.executor import Executor  # noqa: E402
from pglab.run.remote import Hosts as GeneratorHosts  # noqa: E402


def wrapper(directory: Path, cpu: int, pgbench: str) -> Path:
    """A bindir whose pgbench is the real one pinned to ``cpu``."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "pgbench"
    script.write_text(f'#!/bin/sh\nexec taskset -c {cpu} {pgbench} "$@"\n')
    script.chmod(0o755)
    return directory


def main() -> None:
    ap = parser(__doc__, clients=4, scale=10)
    ap.add_argument("--pairs", type=int, default=8)
    args = ap.parse_args()
    if (os.cpu_count() or 1) < 2:
        sys.exit("needs 2 CPUs: one for the server, one for pgbench apart")
    lab = open_lab(args)
    net = Hosts(1).start()
    server = None
    executor = None
    try:
        gen = net.hosts[0]
        server = OutsideServer(
            lab, listen=("127.0.0.1", net.gateway), allow=f"10.231.{net.subnet}.0/24"
        ).start()
        pid = (server.data / "postmaster.pid").read_text().split()[0]
        subprocess.run(["taskset", "-a", "-cp", "0", pid], check=True, capture_output=True)
        pgbench = str(server.binaries.bindir / "pgbench")
        known = net.known_hosts(net.root / "known_hosts")
        hosts = {}
        for name, cpu in (("same", 0), ("apart", 1)):
            bindir = wrapper(net.root / f"bin-{name}", cpu, pgbench)
            hosts[name] = {
                "ssh": f"root@{gen.address}",
                "identity": str(net.key),
                "known_hosts": str(known),
                "bindir": str(bindir),
            }
        os.environ["PGPASSWORD"] = BENCH_PASSWORD
        doc = {
            "name": "bench-generators",
            "server": {"dsn": server.dsn()},
            "dataset": {"scale": args.scale},
            "workload": {
                "script": args.script,
                "clients": args.clients,
                "duration": args.duration,
                "latency_log": "aggregate",
            },
            "hosts": hosts,
            "variants": {
                "same": {"workload": {"generators": ["same"]}},
                "apart": {"workload": {"generators": ["apart"]}},
            },
        }
        camp = campaign.parse(doc, default_name="bench-generators")
        points = {p.variant: p for p in make_plan(camp).points}
        binaries = resolve(points["same"].server, lab)
        executor = Executor(lab, store=scratch_store(), hosts=GeneratorHosts(camp.hosts))
        tps = run_pairs(
            executor, binaries, {"same": points["same"], "apart": points["apart"]}, args.pairs
        )
    finally:
        if executor is not None:
            executor.close()
        if server is not None:
            server.stop()
        net.stop()
    ratios = [a / s for a, s in zip(tps["apart"], tps["same"], strict=True)]
    low, high = bootstrap_median_ci(ratios)
    print(
        f"median tps: pgbench on the server's CPU {statistics.median(tps['same']):.1f}, on its "
        f"own CPU {statistics.median(tps['apart']):.1f} ({args.pairs} pairs, {args.script}, "
        f"{args.clients} clients, {args.duration} s, scale {args.scale})"
    )
    print(f"generator_apart_ratio: {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f})")


if __name__ == "__main__":
    main()
