"""A campaign measured again as an *execution*: stored as its own campaign ``NAME@LABEL`` (by
default the UTC time it started, ``NAME@20261126T020000Z``), so that running the file again
measures again instead of resuming. ``pglab run FILE --execution``, ``pglab schedule`` and
``pglab bisect`` make them; ``pglab history`` reads them back as series."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from pglab.campaign.parse import Campaign
from pglab.errors import LabError

SEP = "@"
LABEL_FORMAT = "%Y%m%dT%H%M%SZ"


def label_of(when: datetime) -> str:
    """An execution's label for the time it started (or was due), in UTC."""
    return when.astimezone(UTC).strftime(LABEL_FORMAT)


def as_execution(camp: Campaign, label: str | None) -> Campaign:
    """``camp`` stored as the execution ``NAME@LABEL`` (``label`` "": now, in UTC; None: as it
    is)."""
    if label is None:
        return camp
    label = label or label_of(datetime.now(UTC))
    if not label.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise LabError(f"--execution {label!r}: letters, digits, '-', '_' and '.' only")
    return dataclasses.replace(camp, name=f"{camp.name}{SEP}{label}")
