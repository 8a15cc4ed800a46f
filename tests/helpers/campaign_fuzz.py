"""Campaign documents made up by Hypothesis from the file's key names and any values (the
fault suite feeds them to the parser: a message, never a traceback; tests/unit/test_refusals.py
checks that the JSON Schema refuses those the parser refuses)."""

from __future__ import annotations

from hypothesis import strategies as st

KEYS = st.sampled_from(
    [
        "name", "repeats", "order", "on_error", "server", "dataset", "workload", "phases",
        "variants", "matrix", "derived", "telemetry", "settings", "scale", "clients", "script",
        "scripts", "duration", "transactions", "rate", "reset", "source", "bindir", "times",
        "measured", "kind", "a", "b", "weight", "file", "builtin", "latency_log", "bogus",
    ]
)  # fmt: skip
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["select-only", "tpcb-like", "1GB", "on", "interleaved", "run", "x.sql"]),
)
DOCS = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)
DOCUMENTS = st.dictionaries(KEYS, DOCS, max_size=8)
