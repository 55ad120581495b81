"""The tool registry: schemas, effects and dispatch of the five tools."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.agent import tools
from forgeflare.agent.tools import (
    TOOL_NAMES,
    ToolEffect,
    ToolOutput,
    tool_effect,
    tool_schemas,
)
from tool_support import run_tool

FIELDS = {
    "Read": (["file_path"], ["file_path"]),
    "Glob": (["pattern", "path"], ["pattern"]),
    "Bash": (["command", "description"], ["command"]),
    "Edit": (
        ["file_path", "old_str", "new_str", "replace_all"],
        ["file_path", "old_str", "new_str"],
    ),
    "Grep": (["pattern", "path", "file_type", "case_sensitive"], ["pattern"]),
}


def test_five_pascal_case_tools_with_the_original_fields() -> None:
    schemas = tool_schemas()
    assert [s["name"] for s in schemas] == ["Read", "Glob", "Bash", "Edit", "Grep"]
    assert list(TOOL_NAMES) == [s["name"] for s in schemas]
    for schema in schemas:
        assert set(schema) == {"name", "description", "input_schema"}
        properties, required = FIELDS[schema["name"]]
        assert schema["input_schema"]["type"] == "object"
        assert list(schema["input_schema"]["properties"]) == properties
        assert schema["input_schema"]["required"] == required
        for prop in schema["input_schema"]["properties"].values():
            assert prop["type"] in ("string", "boolean")
            assert prop["description"]
    json.dumps(schemas)  # plain JSON, ready for the request body


def test_limits_are_in_the_descriptions() -> None:
    text = {s["name"]: s["description"] for s in tool_schemas()}
    assert "1 MB" in text["Read"]
    assert "1000 entries" in text["Glob"]
    assert "120 s" in text["Bash"]
    assert "100 KB" in text["Edit"]
    assert "50 matches" in text["Grep"]


def test_schemas_are_fresh_copies() -> None:
    first = tool_schemas()
    first[0]["input_schema"]["properties"]["file_path"]["type"] = "number"
    first[0]["input_schema"]["required"].append("x")
    assert tool_schemas()[0]["input_schema"]["properties"]["file_path"]["type"] == "string"
    assert tool_schemas()[0]["input_schema"]["required"] == ["file_path"]


def test_effects() -> None:
    assert {name: tool_effect(name) for name in TOOL_NAMES} == {
        "Read": ToolEffect.PURE,
        "Glob": ToolEffect.PURE,
        "Grep": ToolEffect.PURE,
        "Bash": ToolEffect.MUTATING,
        "Edit": ToolEffect.MUTATING,
    }


@given(st.text(max_size=20).filter(lambda name: name not in TOOL_NAMES))
def test_unknown_tools_are_mutating(name: str) -> None:
    assert tool_effect(name) is ToolEffect.MUTATING


def test_names_are_case_sensitive() -> None:
    assert tool_effect("read") is ToolEffect.MUTATING
    assert run_tool("read", {"file_path": "x"}, cwd=Path()).is_error


def test_unknown_tool(tmp_path: Path) -> None:
    assert run_tool("Write", {"file_path": "x"}, cwd=tmp_path) == ToolOutput(
        "Unknown tool 'Write'; the tools are Read, Glob, Bash, Edit, Grep", True
    )


def test_null_input(tmp_path: Path) -> None:
    for name in TOOL_NAMES:
        out = run_tool(name, None, cwd=tmp_path)
        assert out.is_error
        assert "max_tokens" in out.content


def test_non_object_input(tmp_path: Path) -> None:
    out = run_tool("Read", ["a"], cwd=tmp_path)  # type: ignore[arg-type]
    assert out == ToolOutput("Read: the tool input must be a JSON object", True)


def test_on_output_only_for_bash(tmp_path: Path) -> None:
    chunks: list[str] = []
    (tmp_path / "f.txt").write_text("hello\n")
    for name, data in [
        ("Read", {"file_path": "f.txt"}),
        ("Glob", {"pattern": "*"}),
        ("Grep", {"pattern": "hello"}),
        ("Edit", {"file_path": "f.txt", "old_str": "hello", "new_str": "bye"}),
    ]:
        assert not run_tool(name, data, cwd=tmp_path, on_output=chunks.append).is_error
    assert chunks == []
    out = run_tool("Bash", {"command": "cat f.txt"}, cwd=tmp_path, on_output=chunks.append)
    assert out == ToolOutput("bye")
    assert "".join(chunks) == "bye\n"


def test_extra_fields_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert run_tool("Read", {"file_path": "f", "offset": 3}, cwd=tmp_path) == ToolOutput("x")


def test_public_names() -> None:
    assert sorted(tools.__all__) == sorted(
        name for name in dir(tools) if not name.startswith("_") and name != "annotations"
    )


async def test_a_pure_tool_stuck_in_the_file_system_ends_on_the_first_cancel(
    tmp_path: Path,
) -> None:
    # Opening a FIFO blocks until a writer comes: a stand-in for a walk that will not end. The
    # turn's cancellation (Ctrl+C) must not wait for the worker thread.
    import os

    import trio

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    try:
        with trio.move_on_after(0.2) as scope:
            await tools.dispatch_tool("Read", {"file_path": str(fifo)}, cwd=tmp_path)
        assert scope.cancelled_caught
    finally:
        # Free the abandoned thread: open the FIFO's other end without blocking, then close.
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
