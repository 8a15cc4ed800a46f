"""How pytest-xdist's workers are given the suite (``helpers.xdist_files``): whole files, and
the files that share the machine's build cache or kernel together, and a test marked ``alone``
with no other test beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.xdist_files import SHARED, scope_of

REPO = Path(__file__).resolve().parents[2]


def test_a_file_s_tests_are_one_unit() -> None:
    a = scope_of("tests/unit/test_compare.py::test_user_errors")
    b = scope_of("tests/unit/test_compare.py::test_cli_compare_prints_the_table_and_json")
    assert a == b == "tests/unit/test_compare.py"
    assert scope_of("tests/unit/test_x.py::TestY::test_z[a::b]") == "tests/unit/test_x.py"


def test_files_sharing_the_machine_s_things_are_one_unit() -> None:
    builds = ("tests/integration/test_builds.py", "tests/integration/test_bisect.py")
    kernel = ("tests/integration/test_os_axis.py", "tests/faults/test_storage_faults.py")
    assert {scope_of(f"{p}::test_it") for p in builds} == {"the build cache"}
    assert {scope_of(f"{p}::test_it") for p in kernel} == {"the kernel"}


def test_every_shared_file_exists() -> None:
    # a file renamed without this table would run beside the others again
    missing = [p for p in SHARED if not (REPO / p).is_file()]
    assert not missing, missing


def test_an_alone_test_runs_while_the_other_worker_runs_none(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two files on two workers, each test writing when it started and ended: the ``alone`` one
    # overlaps none of the other file's, which would all overlap it without the lock
    log = pytester.path / "log"
    pytester.makepyfile(
        test_a=f"""
        import time, pytest
        @pytest.mark.alone
        def test_alone():
            with open({str(log)!r}, "a") as f: f.write(f"alone {{time.time()}} ")
            time.sleep(1.0)
            with open({str(log)!r}, "a") as f: f.write(f"{{time.time()}}\\n")
        """,
        test_b=f"""
        import time, pytest
        @pytest.mark.parametrize("i", range(8))
        def test_other(i):
            with open({str(log)!r}, "a") as f: f.write(f"other {{time.time()}} ")
            time.sleep(0.2)
            with open({str(log)!r}, "a") as f: f.write(f"{{time.time()}}\\n")
        """,
    )
    monkeypatch.setenv("PYTHONPATH", str(REPO / "tests"))
    result = pytester.runpytest_subprocess(
        "-p", "helpers.xdist_files", "-n", "2", "-p", "no:cacheprovider", "--rootdir",
        str(pytester.path))  # fmt: skip
    result.assert_outcomes(passed=9)
    spans = [line.split() for line in log.read_text().splitlines()]
    alone = [(float(a), float(b)) for kind, a, b in spans if kind == "alone"]
    others = [(float(a), float(b)) for kind, a, b in spans if kind == "other"]
    assert len(alone) == 1 and len(others) == 8
    (start, end) = alone[0]
    assert all(b <= start or a >= end for a, b in others), (alone, others)
