"""How pytest-xdist's workers are given the suite (``helpers.xdist_files``): whole files, and
the files that share the machine's build cache or kernel together."""

from __future__ import annotations

from pathlib import Path

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
