"""Each query of the store returns the columns its row type (``store.columns``) declares: every
row read while a run, a storage result, a file and tidy rows are written, read and deleted is
checked against the TypedDict its query names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.store_checks import sample_run

from pglab.records import StorageResult
from pglab.store import open_store
from pglab.store.base import Store


def _declared(shape: Any) -> tuple[set[str], set[str]]:
    """Required and optional keys (``NotRequired[...]`` read from the annotation's text: under
    ``from __future__ import annotations`` the class's own key sets do not see it)."""
    hints = {k: str(v) for k, v in shape.__annotations__.items()}
    optional = set(shape.__optional_keys__) | {k for k, v in hints.items() if "NotRequired[" in v}
    return set(hints) - optional, optional


def test_every_row_has_the_columns_of_its_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    rows_of = Store._rows

    def checked(self: Store, sql: str, params: Any = (), *, shape: Any) -> list[Any]:
        rows = rows_of(self, sql, params, shape=shape)
        required, optional = _declared(shape)
        for row in rows:
            assert required <= set(row) <= required | optional, (shape.__name__, sql)
        seen.append(shape.__name__)
        return rows

    monkeypatch.setattr(Store, "_rows", checked)
    result = StorageResult("/var/tmp", "fio", "fio-3.36", 1.0, 2.0, {"fstype": "ext4"},
                           {"version": "fio-3.36", "jobs": []}, output="{}")  # fmt: skip
    with open_store(str(tmp_path / "r.sqlite")) as store:
        store.ensure_campaign("camp", {"name": "camp"}, None)
        run_id = store.save_run(sample_run())
        assert store.save_run(sample_run()) == run_id  # kept: the 'ok' run's row is read
        store.list_campaigns(), store.get_campaign("camp"), store.list_runs("camp")
        run = store.get_run(run_id)
        assert run is not None and run.axes == dict(run.spec.get("axes") or [])
        store.runs_phases([run_id]), store.run_fingerprint(run_id), store.done_run_keys("camp")
        store.runs_without_tidy("camp"), store.save_tidy({run_id: {"tps": 1.0}})
        store.campaign_facts()
        assert store.point_specs()[("camp", run.point_key)] == run.spec
        assert store.get_file(store.put_file(b"x")) == b"x"
        stored = store.save_storage_result(result)
        assert list(store.list_storage_results()[0]) == [
            "id", "measured_at", "elapsed_s", "target_path", "mountpoint", "fstype",
            "mount_options", "device", "tool", "tool_version", "results", "facts",
        ]  # fmt: skip
        one = store.get_storage_result(stored)
        assert one is not None and list(one)[10:] == ["output", "results", "facts"]
        assert store.delete_points("camp", [run.point_key]) == 1
        assert store.delete_campaign("camp")
    assert set(seen) >= {"IdRow", "CampaignRow", "SpecJsonRow", "RunStatusRow", "RunListRow",
                         "RunFullRow", "PhaseColumns", "SeriesRow", "FingerprintJsonRow",
                         "RunKeyRow", "FileRow", "StorageColumns", "CountRow",
                         "CampaignFactsRow", "VersionRow", "PointSpecRow"}  # fmt: skip
