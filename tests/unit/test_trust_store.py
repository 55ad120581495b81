"""The trust store: a round trip, revoking, where it lives, and a damaged store as one line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgeflare.trust import (
    TrustStore,
    TrustStoreError,
    check_trust,
    default_trust_file,
    fingerprint,
)
from trust_support import A2, A, B


def test_store_round_trip_and_revoke(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "cfg" / "trust.json")
    assert store.load() == {}
    store.trust("/p", [A, B], "2026-01-01T00:00:00Z")
    records = store.load()
    assert records["/p"].fingerprint == fingerprint([A, B])
    assert check_trust([A, B], records, "/p").trusted
    assert oct(store.path.stat().st_mode & 0o777) == "0o600"
    store.trust("/p", [A2], "later")  # merged: b stays trusted
    assert check_trust([B], store.load(), "/p").trusted
    assert not check_trust([A], store.load(), "/p").trusted
    assert store.revoke("/p")
    assert not store.revoke("/p")


def test_default_trust_file_honours_xdg(tmp_path: Path) -> None:
    path = default_trust_file({"XDG_CONFIG_HOME": str(tmp_path)})
    assert path == tmp_path / "forgeflare" / "trust.json"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


shapes = st.one_of(
    json_values,
    json_values.map(lambda v: {"projects": v}),
    json_values.map(lambda v: {"projects": {"/p": v}}),
    json_values.map(lambda v: {"projects": {"/p": {"fingerprint": "f", "items": v}}}),
    json_values.map(lambda v: {"projects": {"/p": {"fingerprint": v, "trusted_at": v}}}),
)


damaged = st.one_of(
    st.binary(max_size=64),
    shapes.map(lambda v: json.dumps(v).encode()),
    st.integers(1, 3000).map(lambda n: b"[" * n),
)


@settings(max_examples=300, deadline=None, derandomize=bool(os.environ.get("CI")))
@given(damaged)
def test_a_damaged_store_is_one_line_never_a_traceback(tmp_path_factory: Any, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("store") / "trust.json"
    path.write_bytes(raw)
    try:
        records = TrustStore(path).load()
    except TrustStoreError as exc:
        message = str(exc)
        records = {}
    else:
        message = f"{path}: loaded"
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    for where, record in records.items():
        assert isinstance(where, str)
        assert isinstance(record.fingerprint, str)
        assert all(isinstance(v, str) for v in record.items.values())
    check_trust([A], records, "/p")  # the decision takes whatever loaded


def test_store_file_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "trust.json").mkdir()
    with pytest.raises(TrustStoreError, match=r"trust\.json: cannot read"):
        TrustStore(tmp_path / "trust.json").load()
