"""The one units module: each amount reads and parses as it did where it used to be written
(``cli/fmt.duration``, ``planning/capacity.duration_text``, ``campaign/storage._size``,
``tune/space._size``, ``analysis/derived``'s and ``campaign/os_spec``'s unit tables)."""

from __future__ import annotations

import pytest

from pglab import units


@pytest.mark.parametrize(
    ("seconds", "shown", "estimated"),
    [
        (0.4, "0s", "1s"),
        (42.0, "42s", "42s"),
        (64.6, "1m05s", "1m05s"),
        (3600.0, "1h00m", "1h00m"),
        (3903.2, "1h05m", "1h05m04s"),  # a person's clock vs an estimate never shorter
        (7199.9, "2h00m", "2h00m"),
    ],
)
def test_durations_read_as_before(seconds: float, shown: str, estimated: str) -> None:
    assert units.duration_text(seconds) == shown
    assert units.duration_text(seconds, estimate=True) == estimated


@pytest.mark.parametrize(
    ("text", "size"),
    [("300MB", 300 * 2**20), ("1GiB", 2**30), ("512M", 512 * 2**20), ("1g", 2**30),
     ("2048", 2048), (" 1.5 GB ", 3 * 2**29), ("1.5GB", 3 * 2**29), ("0MB", None), ("lots", None),
     ("1PB", None)],
)  # fmt: skip
def test_a_campaign_size_parses(text: str, size: int | None) -> None:
    assert units.parse_size(text) == size


def test_a_size_as_a_setting_value_is_whole_megabytes() -> None:
    assert units.guc_megabytes(1.5 * 2**30) == "1536MB"
    assert units.guc_megabytes(10) == "1MB"


@pytest.mark.parametrize(
    ("value", "unit", "in_unit"),
    [("1GB", "8kB", 131072), ("16384", "8kB", 16384), ("5min", "s", 300), ("1.5GB", "kB",
     1536 * 1024), ("0x10", None, 16), ("1GB", "s", None), ("ten", "s", None)],
)  # fmt: skip
def test_a_guc_amount_reads_as_postgresql_reads_it(value: str, unit: str, in_unit: float) -> None:
    assert units.guc_number(value, unit) == in_unit


def test_a_guc_amount_in_bytes() -> None:
    assert units.guc_bytes("16384", "8kB") == units.guc_bytes("128MB", "8kB") == 128 * 2**20
    assert units.guc_bytes("5min", "s") is None  # no memory setting
    assert units.guc_bytes("a lot", "8kB") is None
