"""Loading and validating mock-api scripts."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import forgeflare.mockapi as pkg
from forgeflare._errors import ConfigError
from forgeflare.mockapi import (
    MockScriptError,
    Script,
    TextSpec,
    ToolUseSpec,
    load_script,
    parse_script,
)

DESIGN_EXAMPLE = {
    "responses": [
        {
            "content": [
                {"type": "text", "text": "Running the tests."},
                {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1200, "output_tokens": 40},
        },
        {
            "error": {
                "status": 529,
                "type": "overloaded_error",
                "message": "Overloaded",
                "headers": {"retry-after": "0"},
            }
        },
        {"stream_error": {"type": "overloaded_error", "after_events": 3}},
        {
            "truncate_after_events": 4,
            "content": [{"type": "text", "text": "cut short"}],
            "stop_reason": "end_turn",
        },
        {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn", "delay_ms": 20},
    ],
    "when_exhausted": "error",
}


def test_design_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(DESIGN_EXAMPLE))
    script = load_script(path)
    assert len(script.responses) == 5
    first = script.responses[0]
    assert first.content[0] == TextSpec(type="text", text="Running the tests.")
    assert isinstance(first.content[1], ToolUseSpec)
    assert first.content[1].id is None
    err = script.responses[1].error
    assert err is not None
    assert (err.error_status, err.error_type, err.headers) == (
        529,
        "overloaded_error",
        {"retry-after": "0"},
    )
    assert script.responses[2].stream_error is not None
    assert script.responses[2].stream_error.error_message == "Overloaded"
    assert script.responses[4].delay_ms == 20


def test_toml_script(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'when_exhausted = "end_turn"\n'
        "[[responses]]\n"
        'stop_reason = "end_turn"\n'
        "[[responses.content]]\n"
        'type = "text"\n'
        'text = "hello"\n'
    )
    script = load_script(path)
    assert script.when_exhausted == "end_turn"
    assert script.responses[0].content == [TextSpec(type="text", text="hello")]


@pytest.mark.parametrize(
    ("status", "type_", "want_status", "want_type"),
    [
        (429, None, 429, "rate_limit_error"),
        (503, None, 503, "api_error"),
        (418, None, 418, "invalid_request_error"),
        (None, "overloaded_error", 529, "overloaded_error"),
        (None, "mystery_error", 500, "mystery_error"),
        (400, "invalid_request_error", 400, "invalid_request_error"),
    ],
)
def test_error_status_and_type_complete_each_other(
    status: int | None, type_: str | None, want_status: int, want_type: str
) -> None:
    err: dict[str, object] = {}
    if status is not None:
        err["status"] = status
    if type_ is not None:
        err["type"] = type_
    script = parse_script({"responses": [{"error": err}]})
    spec = script.responses[0].error
    assert spec is not None
    assert (spec.error_status, spec.error_type) == (want_status, want_type)
    assert spec.error_message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"responses": [{"content": [{"type": "video"}]}]}, "responses[0].content[0]"),
        ({"responses": [{"content": [{"type": "tool_use"}]}]}, "responses[0].content[0].name"),
        ({"responses": [{"stop_reason": "bored"}]}, "responses[0].stop_reason"),
        ({"responses": [{"delay_ms": -1}]}, "responses[0].delay_ms"),
        ({"responses": [{"contents": []}]}, "responses[0].contents: unknown key"),
        ({"responses": [{"error": {}}]}, "an error needs a status or a type"),
        (
            {"responses": [{"error": {"status": 500}, "content": [{"type": "text", "text": "x"}]}]},
            "'error' cannot be combined",
        ),
        ({"responses": [], "when_exhausted": "crash"}, "when_exhausted"),
        ({"responses": 3}, "responses: Input should be a valid list"),
    ],
)
def test_invalid_scripts_name_the_place(data: object, fragment: str) -> None:
    with pytest.raises(MockScriptError) as info:
        parse_script(data, source="s.json")
    message = str(info.value)
    assert message.startswith("mock script s.json: ")
    assert fragment in message
    assert "\n" not in message


def test_bad_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(MockScriptError, match=r"missing\.json: file not found"):
        load_script(missing)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{nope")
    with pytest.raises(MockScriptError, match=r"bad\.json: invalid JSON"):
        load_script(bad_json)
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("responses = [")
    with pytest.raises(MockScriptError, match=r"bad\.toml: invalid TOML"):
        load_script(bad_toml)
    not_object = tmp_path / "list.json"
    not_object.write_text("[]")
    with pytest.raises(MockScriptError, match="expected an object"):
        load_script(not_object)


def test_script_errors_are_config_errors() -> None:
    assert issubclass(MockScriptError, ConfigError)
    assert MockScriptError("x").exit_code == 2


def test_defaults() -> None:
    script = Script()
    assert script.responses == []
    assert script.when_exhausted == "error"
    assert not script.require_auth


def test_public_exports_are_complete() -> None:
    for name in ("_decide", "_errors", "_render", "_script", "_server"):
        module = importlib.import_module(f"forgeflare.mockapi.{name}")
        missing = set(module.__all__) - set(pkg.__all__)
        assert not missing, f"{name} exports {missing} but the package does not"
    for name in pkg.__all__:
        assert hasattr(pkg, name)
