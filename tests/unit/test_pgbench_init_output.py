"""``pgbench -i``'s own words on recorded output of 15 and 18 (tests/data/pgbench): progress
through the rows, the steps it starts, each step's time at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.postgres import init_output

DATA = Path(__file__).resolve().parents[1] / "data" / "pgbench"


@pytest.mark.parametrize("version", ["15", "18"])
def test_progress_steps_and_times_as_pgbench_says_them(version: str) -> None:
    text = (DATA / f"pg{version}_init_s3.stderr").read_text()
    lines = text.splitlines()
    found = [p for line in lines if (p := init_output.progress(line))]
    assert [(p.done, p.total, p.pct, p.table) for p in found] == [
        (100_000, 300_000, 33, "pgbench_accounts"),
        (200_000, 300_000, 66, "pgbench_accounts"),
        (300_000, 300_000, 100, "pgbench_accounts"),
    ]
    assert found[0].remaining_s == 0.07 and found[-1].remaining_s == 0.0
    steps = [s for line in lines if (s := init_output.step(line))]
    assert steps == ["dropping old tables", "creating tables", "generating data (client-side)",
                     "vacuuming", "creating primary keys"]  # fmt: skip
    times = init_output.step_times(text)
    assert list(times) == [
        "drop tables", "create tables", "client-side generate", "vacuum", "primary keys"
    ]  # fmt: skip
    assert 0 < times["client-side generate"] < 1 and times["primary keys"] == 0.06


def test_18_names_the_table_it_counts_and_15_does_not() -> None:
    said18 = (DATA / "pg18_init_q_s60.stderr").read_text().splitlines()
    tables = [p.table for line in said18 if (p := init_output.progress(line))]
    assert tables == ["pgbench_tellers", "pgbench_accounts"]
    said15 = (DATA / "pg15_init_q_s60.stderr").read_text().splitlines()
    (p,) = [p for line in said15 if (p := init_output.progress(line))]
    assert p.table == "pgbench_accounts" and p.total == 6_000_000
    assert init_output.step_times("no end line") == {}


def test_a_progress_line_in_words() -> None:
    p = init_output.progress(
        "2400000 of 6000000 tuples (40%) of pgbench_accounts done (elapsed 8.10 s, "
        "remaining 72.4 s)"
    )
    assert p is not None
    assert init_output.said(p) == "pgbench_accounts 40% (2,400,000 of 6,000,000 tuples), ETA 1:12"


def test_a_dataset_copy_is_told_in_mib_with_its_rate_and_eta() -> None:
    from pglab.postgres.dataset import said_copy

    mib = 2**20
    assert said_copy(0, 3210 * mib, 0.0) == "0 of 3,210 MiB (0%)"
    # 1,234 MiB in 3 s: 431 MB/s, the 1,976 MiB left in 4.8 s
    assert said_copy(1234 * mib, 3210 * mib, 3.0) == "1,234 of 3,210 MiB (38%), 431 MB/s, ETA 0:04"
    assert said_copy(3210 * mib, 3210 * mib, 100.0).endswith("(100%), 34 MB/s, ETA 0:00")
    assert said_copy(5 * mib, 0, 1.0).startswith("5 of 0 MiB (100%)")
