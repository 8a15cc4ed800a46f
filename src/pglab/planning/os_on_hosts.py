"""``[os]`` on hosts, checked before the first run (``preflight``): pglab may act as root on
every host a run sets the kernel of or starts under raised limits (``sudo -n true`` works
there, or its SSH user is root), every sysctl asked exists on the hosts it is set on, the
limits can be set there, and a server host has the CPUs ``cpus`` asks."""

from __future__ import annotations

from pglab.campaign.os_where import hosts_of, sudo_hosts
from pglab.errors import CampaignError, LabError
from pglab.hosts import sudo
from pglab.hosts.pool import HostPool
from pglab.planning.plan import Plan


def problems(plan: Plan, pool: HostPool) -> list[LabError]:
    """What stops the plan's [os] on its hosts, each host said once."""
    names = sorted({h for pt in plan.points for h in sudo_hosts(pt, pool.specs)})
    found: list[LabError] = []
    refused = set()
    for name in names:
        if (why := sudo.check(pool.ssh(name))) is not None:
            found.append(why)
            refused.add(name)
    found += _limits(plan, pool, refused)
    found += _cpus(plan, pool)
    missing: dict[str, set[str]] = {}
    for pt in plan.points:
        for name in [h for h in hosts_of(pt) if h not in refused]:
            paths = {"/proc/sys/" + n.replace(".", "/"): n for n, _ in pt.os.sysctl}
            there = sudo.HostKernel(pool.ssh(name)).read_all(sorted(paths))
            missing.setdefault(name, set()).update(n for p, n in paths.items() if p not in there)
    said = [f"{name}: {', '.join(sorted(n))}" for name, n in sorted(missing.items()) if n]
    if said:
        found.append(
            CampaignError(
                "[os] sysctl names that the host's kernel does not have:\n  " + "\n  ".join(said),
                hint="leave them out, or run those points on hosts whose kernel has them",
            )
        )
    return found


def _limits(plan: Plan, pool: HostPool, refused: set[str]) -> list[LabError]:
    """Limits a host with sudo = true gives its server or pgbench: set there as root on a
    shell of the SSH user's, as they will be (root needs CAP_SYS_RESOURCE to raise a hard
    limit, nofile up to the host's fs.nr_open)."""
    asked: dict[str, dict[str, int]] = {}
    for pt in plan.points:
        for name in sudo_hosts(pt, pool.specs):
            for key, n in pt.os.limits:
                asked.setdefault(name, {})[key] = max(n, asked.get(name, {}).get(key, 0))
    said = []
    for name, limits in sorted(asked.items()):
        if name in refused or not limits:
            continue
        done = pool.ssh(name).run(sudo.with_limits(["true"], limits), check=False)
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()
            asks = ", ".join(f"{k} = {n}" for k, n in sorted(limits.items()))
            said.append(f"{name}: limits {asks}: {why[-1] if why else done.returncode}")
    if not said:
        return []
    return [
        CampaignError(
            "[os] limits cannot be set on these hosts, even as root:\n  " + "\n  ".join(said),
            hint="lower them (root raises a hard limit only with CAP_SYS_RESOURCE, which a "
            "container may lack; nofile up to fs.nr_open)",
        )
    ]


def _cpus(plan: Plan, pool: HostPool) -> list[LabError]:
    """``cpus`` of a server on a host: no more than its SSH user may use there."""
    asked: dict[str, int] = {}
    for pt in plan.points:
        if pt.server.host is not None and pt.os.cpus is not None:
            asked[pt.server.host] = max(pt.os.cpus, asked.get(pt.server.host, 0))
    said = []
    for name, n in sorted(asked.items()):
        there = pool.ssh(name).run(["nproc"], check=False).stdout.strip()
        if there.isdigit() and n > int(there):
            said.append(f"{name}: cpus = {n}, and its SSH user may use {there} CPU(s) there")
    return (
        [
            CampaignError(
                "[os] cpus beyond a server host's CPUs:\n  " + "\n  ".join(said),
                hint="ask for fewer",
            )
        ]
        if said
        else []
    )
