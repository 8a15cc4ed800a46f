"""Storage targets in campaign files: parsing, validation, the matrix axes, identities."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pglab.campaign import parse as campaign
from pglab.campaign.spec import StorageSpec, dataset_key
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.planning.plan import expand_points
from pglab.targets import targets as storage_targets

TARGETS = {
    "ordered": {
        "kind": "loop",
        "fstype": "ext4",
        "size": "300MB",
        "mkfs_options": "-J size=64",
        "mount_options": "noatime,data=ordered",
    },
    "writeback": {
        "kind": "loop",
        "fstype": "ext4",
        "size": "1GiB",
        "mount_options": ["noatime", "data=writeback"],
        "direct_io": True,
    },
    "ram": {"kind": "tmpfs", "size": "256M"},
    "disk": {"path": "/srv"},
}


def parse(doc: dict) -> campaign.Campaign:
    return campaign.parse(doc, default_name="t")


def problems(doc: dict) -> str:
    with pytest.raises(CampaignError) as info:
        parse(doc)
    return str(info.value)


def test_targets_are_parsed_with_sizes_and_options() -> None:
    c = parse({"targets": TARGETS, "storage": {"data": "ordered", "wal": "ram"}})
    t = dict(c.targets)
    assert t["ordered"].size == 300 * 2**20 and t["writeback"].size == 2**30
    assert t["ordered"].mkfs_options == ("-J", "size=64")
    assert t["ordered"].mount_options == ("noatime", "data=ordered")
    assert t["writeback"].mount_options == ("noatime", "data=writeback")
    assert t["writeback"].direct_io is True
    assert t["ram"].kind == "tmpfs" and t["ram"].fstype == "tmpfs"
    assert t["disk"].kind == "path" and t["disk"].path == "/srv"
    (pt,) = expand_points(c)
    assert pt.storage.data.name == "ordered" and pt.storage.wal.name == "ram"


def test_matrix_axes_sweep_data_and_wal_targets() -> None:
    c = parse(
        {
            "targets": TARGETS,
            "storage": {"wal": "ram"},
            "matrix": {"storage": ["ordered", "writeback"], "clients": [1, 10]},
        }
    )
    points = expand_points(c)
    assert [(p.storage.data.name, p.storage.wal.name) for p in points] == [
        ("ordered", "ram"), ("ordered", "ram"), ("writeback", "ram"), ("writeback", "ram"),
    ]  # fmt: skip
    assert len({p.point_key for p in points}) == 4
    c = parse({"targets": TARGETS, "matrix": {"wal_storage": ["ordered", "ram"]}})
    assert [(p.storage.data, p.storage.wal.name) for p in expand_points(c)] == [
        (None, "ordered"),
        (None, "ram"),
    ]


def test_variants_override_storage_by_name_or_table() -> None:
    c = parse(
        {
            "targets": TARGETS,
            "storage": {"data": "ordered"},
            "variants": {
                "base": {},
                "wb": {"storage": "writeback"},
                "split": {"storage": {"wal": "ram"}},
            },
        }
    )
    got = {p.variant: (p.storage.data.name, p.storage.wal and p.storage.wal.name) for p in
           expand_points(c)}  # fmt: skip
    assert got == {
        "base": ("ordered", None),
        "wb": ("writeback", None),
        "split": ("ordered", "ram"),
    }


def test_every_problem_is_reported_at_once_naming_the_key() -> None:
    text = problems(
        {
            "targets": {
                "a": {"kind": "zfs"},
                "b": {"kind": "tmpfs", "size": "1GB", "fstype": "xfs"},
                "c": {"kind": "loop", "fstype": "xfs", "size": "100MB", "mkfs_opts": "-f"},
                "d": {"kind": "loop", "fstype": "ntfs", "size": "1GB"},
                "e": {"kind": "loop", "fstype": "ext4", "size": "lots"},
                "f": {"path": "relative/dir"},
            },
            "storage": {"data": "nope", "wall": "a"},
            "variants": {"v": {"storage": "ordred"}},
            "matrix": {"storage": ["a", "zz"]},
        }
    )
    assert 'kind = "zfs"' in text
    assert 'key "fstype" does not apply to kind = "tmpfs"' in text
    assert 'unknown key "mkfs_opts" — did you mean "mkfs_options"?' in text
    assert "too small for xfs: at least 300 MB" in text
    assert 'fstype = "ntfs"' in text
    assert "size = 'lots'" in text
    assert "path = 'relative/dir'" in text
    assert 'unknown key "wall" — did you mean "wal"?' in text
    assert "storage target 'nope' is not defined" in text
    assert "storage target 'ordred' is not defined" in text
    assert "storage target 'zz' is not defined" in text
    assert "storage target 'a'" not in text  # defined (with problems of its own): not again


def test_storage_is_part_of_the_point_and_dataset_identity_only_when_set() -> None:
    plain = parse({})
    (pt,) = expand_points(plain)
    assert "storage" not in pt.point_dict()  # points stored before storage targets keep keys
    c = parse({"targets": TARGETS, "matrix": {"storage": ["ordered", "writeback"]}})
    a, b = expand_points(c)
    keys = {dataset_key(p.server, p.dataset, p.storage) for p in (pt, a, b)}
    assert len(keys) == 3  # a dataset is never shared between targets
    assert dataset_key(pt.server, pt.dataset) == dataset_key(pt.server, pt.dataset, StorageSpec())
    renamed = parse({"targets": {"x": TARGETS["ordered"]}, "storage": {"data": "x"}})
    (r,) = expand_points(renamed)
    same = dataset_key(a.server, a.dataset, a.storage)
    assert dataset_key(r.server, r.dataset, r.storage) == same  # by definition, not by name


def test_check_names_root_and_the_debian_package(monkeypatch, tmp_path: Path) -> None:
    c = parse({"targets": {**TARGETS, "x": {"kind": "loop", "fstype": "xfs", "size": "1GB"}}})
    t = dict(c.targets)
    lab = Lab(home=tmp_path, run_as=None)
    monkeypatch.setattr(storage_targets.os, "geteuid", lambda: 1000)
    monkeypatch.setenv("PATH", str(tmp_path))  # no tool at all
    found = storage_targets.check([t["x"], t["ram"], t["disk"]], lab)
    text = "\n".join(found)
    assert 'storage target "x" (loop): pglab makes and mounts it itself, which needs root' in text
    assert "mkfs.xfs is not installed (Debian package xfsprogs" in text
    assert "losetup is not installed (Debian package mount" in text
    assert 'storage target "ram" (tmpfs)' in text
    monkeypatch.undo()
    assert storage_targets.check([t["disk"]], lab) == [] or not Path("/srv").is_dir()
    huge = parse({"targets": {"h": {"fstype": "ext4", "size": "1000000TB"}}})
    too_big = storage_targets.check([dict(huge.targets)["h"]], lab)
    assert any("MB free where its file goes" in line for line in too_big), too_big
    missing = parse({"targets": {"d": {"path": str(tmp_path / "absent")}}})
    assert (
        "is not an existing directory"
        in storage_targets.check([dict(missing.targets)["d"]], lab)[0]
    )


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 2**40),
    st.floats(allow_nan=False),
    st.sampled_from(["", "1GB", "300MB", "ext4", "xfs", "tmpfs", "loop", "path", "/srv", "x"]),
    st.lists(st.sampled_from(["noatime", "-J", "size=8", 3]), max_size=3),
    st.dictionaries(st.sampled_from(["data", "wal", "kind"]), st.just("a"), max_size=2),
)
_target = st.dictionaries(
    st.sampled_from(
        [
            "kind",
            "path",
            "size",
            "fstype",
            "mkfs_options",
            "mount_options",
            "dir",
            "direct_io",
            "sise",
        ]
    ),  # fmt: skip
    _values,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    targets=st.one_of(_values, st.dictionaries(st.sampled_from(["a", "b"]), _target, max_size=2)),
    storage=st.one_of(_values, st.dictionaries(st.sampled_from(["data", "wal", "x"]), _values)),
    variant=_values,
    axis=_values,
)
def test_any_storage_document_gives_a_campaign_or_a_campaign_error(
    targets, storage, variant, axis
) -> None:
    doc = {"targets": targets, "storage": storage, "variants": {"v": {"storage": variant}},
           "matrix": {"storage": axis}}  # fmt: skip
    try:
        c = parse(doc)
    except CampaignError as exc:
        assert str(exc)
        return
    for pt in expand_points(c):
        assert pt.point_key


def test_target_names_make_distinct_safe_file_names() -> None:
    names = ["a b", "a_b", "a/b", "../x", "é" * 50, "plain-name.1"]
    safe = [storage_targets._safe(n) for n in names]
    assert len(set(safe)) == len(names)
    assert all("/" not in s and s not in (".", "..") for s in safe)
    assert storage_targets._safe("plain-name.1") == "plain-name.1"


def test_the_estimate_counts_the_storage_benchmarks() -> None:
    from pglab.planning.plan import STORAGE_BENCH_OVERHEAD_S, make_plan

    doc = {"targets": TARGETS, "storage": {"wal": "ram"},
           "matrix": {"storage": ["ordered", "writeback"], "clients": [1, 10]}}  # fmt: skip
    plain = make_plan(parse(doc))
    assert plain.storage_bench_seconds() == 0
    benched = make_plan(parse({**doc, "storage_bench": {"seconds": 2, "fio": True}}))
    # three directories (ordered, writeback, ram): 16 pg_test_fsync tests + 4 fio jobs, 2 s each
    expected = 3 * (20 * 2 + STORAGE_BENCH_OVERHEAD_S)
    assert benched.storage_bench_seconds() == expected
    assert benched.estimated_seconds() == pytest.approx(plain.estimated_seconds() + expected)
    # no target for the data: the lab's clusters directory is measured too
    lab_dir = make_plan(parse({"targets": TARGETS, "storage_bench": {}, "storage": {"wal": "ram"}}))
    assert lab_dir.storage_bench_seconds() == 2 * (16 * 1 + STORAGE_BENCH_OVERHEAD_S)
