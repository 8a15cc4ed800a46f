"""[os] kernel-setting checks (issue 39, first part): names from the kernel's tree with
did-you-mean, values the kernel takes, transparent_hugepages modes."""

from __future__ import annotations

from pathlib import Path

from pglab.campaign.checks import Problems
from pglab.campaign.os_checks import (
    THP_MODES,
    check_scheduler,
    check_sysctls,
    schedulers,
    sysctl_names,
    sysctl_value,
)


def _tree(tmp_path: Path) -> Path:
    for name in ("vm/dirty_bytes", "vm/swappiness", "kernel/sem", "net/core/rmem_max"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("0\n")
    return tmp_path


def test_names_are_dotted_from_the_tree(tmp_path: Path) -> None:
    assert sysctl_names(_tree(tmp_path)) == [
        "kernel.sem", "net.core.rmem_max", "vm.dirty_bytes", "vm.swappiness"
    ]  # fmt: skip


def test_real_proc_sys_has_the_settings_of_seed002() -> None:
    names = set(sysctl_names())
    assert {"vm.dirty_background_bytes", "vm.swappiness", "kernel.sem"} <= names


def test_values_written_as_the_kernel_takes_them() -> None:
    assert sysctl_value("vm.dirty_background_bytes", "64MB") == str(64 * 1024**2)
    assert sysctl_value("vm.dirty_bytes", 4096) == "4096"
    assert sysctl_value("kernel.sem", "250  32000 100 128") == "250 32000 100 128"
    assert sysctl_value("vm.swappiness", "ten") is None
    assert sysctl_value("vm.swappiness", True) is None
    assert sysctl_value("vm.dirty_bytes", "64 parsecs") is None


def test_unknown_name_says_the_closest(tmp_path: Path) -> None:
    p = Problems()
    out = check_sysctls({"vm.swapiness": 10, "vm.dirty_bytes": "1MB"}, p, "[os]", _tree(tmp_path))
    assert out == {"vm.dirty_bytes": "1048576"}
    assert len(p.items) == 1
    assert 'sysctl "vm.swapiness" does not exist' in p.items[0]
    assert 'did you mean "vm.swappiness"?' in p.items[0]


def test_bad_value_and_not_a_table(tmp_path: Path) -> None:
    p = Problems()
    check_sysctls({"vm.swappiness": "lots"}, p, "[os]", _tree(tmp_path))
    check_sysctls(["vm.swappiness"], p, "[os]", _tree(tmp_path))
    assert "vm.swappiness = 'lots': not a value the kernel takes" in p.items[0]
    assert "sysctl must be a table" in p.items[1]


def test_thp_modes_are_declared() -> None:
    """transparent_hugepages is checked by its declaration (campaign/declared.py)."""
    from pglab.campaign import schema

    assert schema.key(schema.OS, "transparent_hugepages").choices == THP_MODES


def test_scheduler_line_parsed() -> None:
    assert schedulers("none [mq-deadline] kyber bfq \n") == (
        ["none", "mq-deadline", "kyber", "bfq"],
        "mq-deadline",
    )


def test_scheduler_the_device_lacks_is_refused() -> None:
    dev = sorted(d.name for d in Path("/sys/block").iterdir() if d.name.startswith("loop"))[0]
    offered, _ = schedulers((Path("/sys/block") / dev / "queue" / "scheduler").read_text())
    p = Problems()
    assert check_scheduler(dev, offered[0], p, "[os]") == offered[0]
    assert check_scheduler(dev, "cfq", p, "[os]") is None
    assert check_scheduler("nosuchdisk", "none", p, "[os]") is None
    assert p.items[0] == f"[os]: io_scheduler = 'cfq': {dev} offers {', '.join(offered)}"
    assert "block device nosuchdisk has no" in p.items[1]


def test_hard_limits_need_cap_sys_resource_in_the_effective_set() -> None:
    from pglab.campaign.os_checks import can_raise_limits

    assert can_raise_limits("Name:\tx\nCapEff:\t000001ffffffffff\n")  # root's full set
    assert not can_raise_limits("CapEff:\t000001fffeffffff\n")  # root in a container: bit 24 off
    assert not can_raise_limits("CapEff:\t0000000000000000\n")
    assert not can_raise_limits("Name:\tx\n")


def test_a_child_started_with_limits_has_them_soft_and_hard() -> None:
    """The server's way ([os] limits): prlimit sets them on itself, then runs the command (a
    real child: its /proc limits read back), lower than this process's hard limits."""
    import resource
    import subprocess

    from pglab import procs

    argv = procs._wrap(["true"], None, limits={"nproc": 900, "nofile": 321})
    assert argv[0].endswith("prlimit") and argv[1:4] == ["--nofile=321:321", "--nproc=900:900",
                                                         "--"], argv  # fmt: skip
    assert procs._wrap(["true"], None, limits={}) == procs._wrap(["true"], None)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    n = min(321, hard)
    child = procs.spawn(["cat", "/proc/self/limits"], stdout=subprocess.PIPE, limits={"nofile": n})
    with procs.owned(child):
        out, _ = child.communicate(timeout=30)
    line = next(ln for ln in out.splitlines() if ln.startswith("Max open files"))
    assert line.split()[3:5] == [str(n), str(n)], line
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] == hard  # pglab's own: as it was
