"""The two names for untyped data at pglab's edges, and only there.

Everything that crosses stages inside pglab has a type (dataclasses in ``records``/``rows``,
TypedDicts for JSON-shaped stored data). Data is untyped only where it enters or leaves as text:

- :data:`JsonObject`: a JSON object read from or written to JSON text (``json.loads`` /
  ``json.dumps``, a tool's JSON output, ``EXPLAIN (FORMAT JSON)``, a JSON Schema), in the
  function that parses it into a type or writes it out;
- :data:`TomlTable`: a table of a TOML document as ``tomllib`` parses it (or as ``pglab quick``
  writes one), and its values as the campaign parser reads them (``campaign.declared.check``)
  into the fields of a ``CampaignSpec``: never beyond ``pglab.campaign``'s parser and
  ``tune.spec``; what leaves them is typed.

Naming them says where the edge is; ``grep -rn "JsonObject\\|TomlTable" src`` lists every edge.
"""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]
TomlTable = dict[str, Any]
