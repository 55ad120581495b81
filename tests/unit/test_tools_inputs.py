"""Tool inputs as models: the schemas sent to the API, and the messages for bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent.tools import (
    BASH_TIMEOUT,
    MAX_BASH_OUTPUT,
    MAX_EDIT_BYTES,
    MAX_GLOB_ENTRIES,
    MAX_GREP_MATCHES,
    MAX_READ_BYTES,
    BashInput,
    EditInput,
    GlobInput,
    GrepInput,
    ReadInput,
    ToolError,
    parse_input,
    tool_schema,
    tool_schemas,
)


def test_schemas_equal_the_hand_written_ones_they_replaced() -> None:
    # tool_schemas.json is the output of the hand-written property tables before the models.
    before = json.loads(Path(__file__).with_name("tool_schemas.json").read_text())
    assert tool_schemas() == before


@pytest.mark.parametrize(
    ("model", "said"),
    [
        (ReadInput, f"Limit: {MAX_READ_BYTES // 2**20} MB;"),
        (EditInput, f"{MAX_EDIT_BYTES // 2**10} KB each; the file {MAX_READ_BYTES // 2**20} MB."),
        (BashInput, f"Timeout: {BASH_TIMEOUT:g} s"),
        (BashInput, f"Output over {MAX_BASH_OUTPUT // 2**10} KB"),
        (GlobInput, f"at most {MAX_GLOB_ENTRIES} entries."),
        (GrepInput, f"at most {MAX_GREP_MATCHES} matches."),
    ],
)
def test_each_description_tells_the_model_the_limit_its_tool_keeps(model: Any, said: str) -> None:
    assert said in tool_schema("Tool", model)["description"]


@pytest.mark.parametrize(
    ("model", "data", "message"),
    [
        (ReadInput, {}, "Read: missing required field 'file_path'"),
        (ReadInput, {"file_path": None}, "Read: missing required field 'file_path'"),
        (ReadInput, {"file_path": 7}, "Read: 'file_path' must be a string, got int"),
        (GlobInput, {"pattern": "*", "path": ["a"]}, "Glob: 'path' must be a string, got list"),
        (
            EditInput,
            {"file_path": "f", "old_str": "", "new_str": "", "replace_all": 3},
            "Edit: 'replace_all' must be true or false, got 3",
        ),
        (
            GrepInput,
            {"pattern": "x", "case_sensitive": "maybe"},
            "Grep: 'case_sensitive' must be true or false, got 'maybe'",
        ),
    ],
)
def test_bad_inputs_name_tool_and_field(model: Any, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as info:
        parse_input(model, model.__name__.removesuffix("Input"), data)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("given", "expected"), [("true", True), (" FALSE ", False), (True, True), (None, None)]
)
def test_booleans_may_come_as_strings(given: object, expected: bool | None) -> None:
    data = {"pattern": "x", "case_sensitive": given}
    assert parse_input(GrepInput, "Grep", data).case_sensitive is expected


def test_empty_optional_strings_and_unknown_keys_are_ignored() -> None:
    args = parse_input(GrepInput, "Grep", {"pattern": "x", "path": "", "extra": 1})
    assert args.path is None
    assert (
        parse_input(EditInput, "Edit", {"file_path": "f", "old_str": "", "new_str": ""}).replace_all
        is False
    )


@given(st.dictionaries(st.sampled_from(["file_path", "x"]), st.none() | st.integers() | st.text()))
def test_parse_never_raises_anything_but_tool_error(data: dict[str, Any]) -> None:
    if isinstance(data.get("file_path"), str):
        assert parse_input(ReadInput, "Read", data).file_path == data["file_path"]
    else:
        with pytest.raises(ToolError, match=r"^Read: "):
            parse_input(ReadInput, "Read", data)
