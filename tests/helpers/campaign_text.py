"""A campaign written as TOML text, parsed as ``pglab run`` parses a file (relative paths from
/tmp), or the message of its refusal: what the unit tests of campaign keys share."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.errors import CampaignError


def parsed(text: str, default_name: str = "k") -> campaign.Campaign:
    return campaign.parse(tomllib.loads(text), default_name=default_name, base_dir=Path("/tmp"))


def refused(text: str, default_name: str = "k") -> str:
    """The message of the CampaignError that parsing ``text`` raises (failing if it parses)."""
    with pytest.raises(CampaignError) as err:
        parsed(text, default_name)
    return err.value.message
