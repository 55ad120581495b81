"""Damaged files and text from across a process boundary: one line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from forgeflare.disk._damaged import (
    DamagedFileError,
    loads,
    read_json,
    read_text,
    read_toml,
    scrub_surrogates,
    validate_as,
)


class Shape(BaseModel):
    count: int


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"a": "\xff"}', "not UTF-8 text (byte 7)"),
        (b"{", "invalid JSON: Expecting property name"),
        (b"[" * 100_000, "too deeply nested"),
    ],
)
def test_damaged_json_is_one_line_naming_the_file(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(content)
    with pytest.raises(DamagedFileError) as info:
        read_json(path)
    assert str(info.value).startswith(f"{path}: {problem}")
    assert "\n" not in str(info.value)


def test_damaged_toml_and_text(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"a = 1\nb = \n")
    with pytest.raises(DamagedFileError, match=r"c.toml: invalid TOML: .*line 2"):
        read_toml(path)
    path.write_bytes(b"a = '\xfe'")
    with pytest.raises(DamagedFileError, match=r"c.toml: not UTF-8 text \(byte 5\)"):
        read_text(path)
    assert read_text(tmp_path / "missing") is None
    with pytest.raises(DamagedFileError, match="file not found"):
        read_text(tmp_path / "missing", missing_ok=False)
    with pytest.raises(DamagedFileError, match="cannot read"):
        read_text(tmp_path)  # a directory


def test_a_wrong_shape_names_the_key() -> None:
    with pytest.raises(ValueError, match=r"^f.json: count: not an integer$"):
        validate_as({"count": "x"}, Shape, "f.json", error=ValueError)


def test_lone_surrogates_are_replaced_on_the_way_in() -> None:
    value = loads(r'{"\ud800k": ["a\udfffb", {"x": "\ud83d\ude00"}], "n": 1}')
    assert value == {"\ufffdk": ["a\ufffdb", {"x": "\U0001f600"}], "n": 1}
    assert loads(b'"\\\\ud800"') == "\\ud800"  # an escaped backslash, no surrogate


@given(st.recursive(st.none() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)))
def test_scrubbed_values_always_encode(value: object) -> None:
    import json

    json.dumps(scrub_surrogates(value), ensure_ascii=False).encode("utf-8")
