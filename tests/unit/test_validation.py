"""One line per pydantic error, the same words in every config reader."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, field_validator

from forgeflare.disk import error_key, validation_message


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    count: int = 0
    on: bool = False

    @field_validator("count")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must not be negative")
        return value


class _File(BaseModel):
    items: list[_Item]


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _File.model_validate(data)
    return info.value


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ({}, "f.toml: items: missing"),
        ({"items": [{}]}, "f.toml: items[0].name: missing"),
        ({"items": [{"name": "a", "x": 1}]}, "f.toml: items[0].x: unknown key"),
        ({"items": [{"name": "a", "count": "many"}]}, "f.toml: items[0].count: not an integer"),
        ({"items": [{"name": "a", "count": 1.5}]}, "f.toml: items[0].count: not an integer"),
        ({"items": [{"name": "a", "count": -1}]}, "f.toml: items[0].count: must not be negative"),
        (
            {"items": [{"name": "a", "on": "perhaps"}]},
            "f.toml: items[0].on: not a boolean (true or false)",
        ),
        ({"items": [{"name": 3}]}, "f.toml: items[0].name: not a string"),
        ({"items": 3}, "f.toml: items: Input should be a valid list"),
    ],
)
def test_one_line_names_source_key_and_problem(data: object, line: str) -> None:
    assert validation_message(_error(data), "f.toml") == line


def test_no_source_no_key_and_the_count_of_others() -> None:
    with pytest.raises(ValidationError) as info:
        TypeAdapter(int).validate_python("x")
    assert validation_message(info.value) == "not an integer"
    two = _error({"items": [{}, {}]})
    assert validation_message(two, "f", count_others=True) == (
        "f: items[0].name: missing (and 1 more problems)"
    )
    assert validation_message(two, "f", key=lambda loc: "KEY") == "f: KEY: missing"


def test_error_key_leaves_out_tags_after_an_index() -> None:
    loc = ("responses", 0, "content", 1, "tool_use", "name")
    assert error_key(loc) == "responses[0].content[1].tool_use.name"
    assert error_key(loc, tags=frozenset({"tool_use"})) == "responses[0].content[1].name"
    assert error_key(()) == ""
