"""Where [os] memory makes the server's cgroup (campaign/cgroups.place), read from the texts of
/proc/self/mountinfo and /proc/self/cgroup over a directory tree made to look like a cgroup
hierarchy: v1's memory hierarchy (a child of pglab's own group, a container's hierarchy mounted
at its group), v2 (beside pglab's group, under the root), and the reasons when there is none."""

from __future__ import annotations

from pathlib import Path

from pglab.campaign import cgroups


def _info(*mounts: tuple[str, Path, str, str]) -> str:
    return "\n".join(
        f"{30 + i} 23 0:{40 + i} {root} {point} rw,relatime - {fstype} {fstype} rw,{opts}"
        for i, (root, point, fstype, opts) in enumerate(mounts)
    )


def _group(path: Path, *files: str) -> Path:
    path.mkdir(parents=True)
    for name in files:
        (path / name).write_text("")
    return path


def test_v1_a_child_of_pglabs_own_memory_group(tmp_path: Path) -> None:
    mine = _group(tmp_path / "memory" / "lab" / "me", "memory.limit_in_bytes")
    info = _info(("/", tmp_path / "cpu", "cgroup", "cpu"), ("/", tmp_path / "memory", "cgroup",
                 "memory"), ("/", tmp_path / "unified", "cgroup2", ""))  # fmt: skip
    own = "4:memory:/lab/me\n3:cpu:/\n0::/\n"
    got = cgroups.place(info, own)
    assert got == cgroups.Place(mine, 1, mine)
    assert (got.limit_file, got.peak_file) == ("memory.limit_in_bytes", "memory.max_usage_in_bytes")


def test_v1_in_a_container_whose_hierarchy_is_mounted_at_its_group(tmp_path: Path) -> None:
    mine = _group(tmp_path / "memory", "memory.limit_in_bytes")
    info = _info(("/docker/abc", tmp_path / "memory", "cgroup", "memory"))
    assert cgroups.place(info, "4:memory:/docker/abc\n") == cgroups.Place(mine, 1, mine)


def test_v2_beside_pglabs_group_where_its_parent_enables_memory(tmp_path: Path) -> None:
    _group(tmp_path / "user.slice", "cgroup.subtree_control")
    (tmp_path / "user.slice" / "cgroup.subtree_control").write_text("cpu io memory pids\n")
    mine = _group(tmp_path / "user.slice" / "session-1.scope")
    got = cgroups.place(_info(("/", tmp_path, "cgroup2", "")), "0::/user.slice/session-1.scope\n")
    assert got == cgroups.Place(tmp_path / "user.slice", 2, mine)
    assert (got.limit_file, got.peak_file) == ("memory.max", "memory.peak")
    (tmp_path / "cgroup.subtree_control").write_text("memory\n")  # pglab in the root group
    assert cgroups.place(_info(("/", tmp_path, "cgroup2", "")), "0::/\n") == cgroups.Place(
        tmp_path, 2, tmp_path
    )


def test_the_reasons_when_no_group_can_be_made(tmp_path: Path) -> None:
    _group(tmp_path / "a", "cgroup.subtree_control")
    _group(tmp_path / "a" / "me")
    said = cgroups.place(_info(("/", tmp_path, "cgroup2", "")), "0::/a/me\n")
    assert said == (f"the memory controller is not enabled for the groups under {tmp_path / 'a'}"
                    " (cgroup v2: its cgroup.subtree_control lacks memory)")  # fmt: skip
    said = cgroups.place(_info(("/", tmp_path / "cpu", "cgroup", "cpu")), "3:cpu:/\n")
    assert isinstance(said, str) and said.startswith("no memory cgroup controller is mounted")
