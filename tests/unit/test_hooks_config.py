"""hooks.toml: defaults, phases, and one clear line for each kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare._errors import ConfigError
from forgeflare.hooks import HookConfigError, HooksFile, load_hooks_file, unknown_tool


def _load(tmp_path: Path, text: str) -> HooksFile | None:
    path = tmp_path / "hooks.toml"
    path.write_text(text)
    return load_hooks_file(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(HookConfigError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'hooks.toml'}: ")
    return message


SPEC_EXAMPLE = """
[[hooks]]
event = "PreToolUse"
phase = "guard"
match_tool = "Bash"
command = ".claude/hooks/ralph-guard.sh"
timeout_ms = 5000

[[hooks]]
event = "PreToolUse"
phase = "observe"
command = ".claude/hooks/audit-log.sh"
timeout_ms = 3000

[[hooks]]
event = "PreToolUse"
command = "default-phase.sh"

[[hooks]]
event = "PostToolUse"
command = ".claude/hooks/convergence-check.sh"

[[hooks]]
event = "Stop"
command = ".claude/hooks/session-end.sh"
"""


def test_missing_file_is_none(tmp_path: Path) -> None:
    assert load_hooks_file(tmp_path / "nope.toml") is None


def test_spec_example_and_defaults(tmp_path: Path) -> None:
    loaded = _load(tmp_path, SPEC_EXAMPLE)
    assert loaded is not None
    hooks = loaded.hooks
    assert [h.event for h in hooks] == ["PreToolUse"] * 3 + ["PostToolUse", "Stop"]
    assert [h.effective_phase for h in hooks] == ["guard", "observe", "guard", None, None]
    assert [h.effective_timeout_ms for h in hooks] == [5000, 3000, 5000, 5000, 3000]
    assert hooks[2].phase is None  # no default stored: only PreToolUse reads it as guard


def test_phase_ignored_outside_pre_tool_use(tmp_path: Path) -> None:
    loaded = _load(tmp_path, '[[hooks]]\nevent = "PostToolUse"\nphase = "guard"\ncommand = "x"\n')
    assert loaded is not None
    assert loaded.hooks[0].effective_phase is None


def test_match_tool_is_exact(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path, '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "Bash"\ncommand = "x"\n'
    )
    assert loaded is not None
    h = loaded.hooks[0]
    assert h.matches("Bash")
    assert not h.matches("BashScript")
    assert not h.matches("bash")
    assert not h.matches("Bas")


def test_empty_file_has_no_hooks(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "")
    assert loaded is not None
    assert loaded.hooks == []


def test_unknown_event_message_is_exact(tmp_path: Path) -> None:
    text = '[[hooks]]\nevent = "Stop"\ncommand = "a"\n' * 2 + '[[hooks]]\nevent = "PreTool"\n'
    assert _error(tmp_path, text) == (
        f"{tmp_path / 'hooks.toml'}: hooks[2] (event 'PreTool'): unknown event; "
        "expected PreToolUse, PostToolUse or Stop"
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[hooks]\nevent = "Stop"\n', "invalid TOML"),
        ('[[hooks]]\nevent = "PreToolUse"\nphase = "audit"\ncommand = "x"\n',
         "hooks[0] (event 'PreToolUse'): unknown phase 'audit'; expected guard or observe"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "x"\nmatchtool = "Bash"\n',
         "hooks[0] (event 'Stop'): unknown key 'matchtool'"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "x"\ntimeout_ms = 0\n',
         "hooks[0] (event 'Stop'): timeout_ms must be a positive integer, got 0"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "x"\ntimeout_ms = -5\n',
         "timeout_ms must be a positive integer, got -5"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "x"\ntimeout_ms = "5s"\n',
         "timeout_ms must be a positive integer, got '5s'"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "x"\ntimeout_ms = true\n',
         "timeout_ms must be a positive integer"),
        ('[[hooks]]\nevent = "Stop"\n', "hooks[0] (event 'Stop'): missing 'command'"),
        ('[[hooks]]\nevent = "Stop"\ncommand = "  "\n', "'command' must be a non-empty string"),
        ('[[hooks]]\ncommand = "x"\n', "hooks[0]: missing 'event'"),
        ('[[hooks]]\nevent = "PreToolUse"\ncommand = "x"\nmatch_tool = ""\n',
         "'match_tool' must be a non-empty string"),
        ('hooks = "x"\n', "'hooks' must be an array of tables"),
        ('[hook]\nevent = "Stop"\n', "unknown top-level key 'hook'"),
        ("hooks = [1]\n", "hooks[0]: expected a table"),
    ],
)  # fmt: skip
def test_each_mistake_is_one_line_naming_entry_and_problem(
    tmp_path: Path, text: str, needle: str
) -> None:
    assert needle in _error(tmp_path, text)


def test_toml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    message = _error(tmp_path, '[[hooks]]\nevent = "Stop"\ncommand = \n')
    assert "line 3" in message
    assert "column" in message


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "hooks.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(HookConfigError, match="not UTF-8"):
        load_hooks_file(path)


def test_unreadable_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HookConfigError, match="cannot read"):
        load_hooks_file(tmp_path)  # a directory


def test_is_a_config_error() -> None:
    assert issubclass(HookConfigError, ConfigError)


def test_schema_has_field_descriptions() -> None:
    schema = HooksFile.model_json_schema()
    props = schema["$defs"]["HookConfig"]["properties"]
    assert set(props) == {"event", "command", "match_tool", "phase", "timeout_ms"}
    assert all(p.get("description") for p in props.values())
    assert props["event"]["enum"] == ["PreToolUse", "PostToolUse", "Stop"]


TOOLS = ("Bash", "Read", "Glob", "Grep", "Edit")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Bash", None),
        ("bash", "'bash' names no tool; did you mean Bash?"),
        ("Bsh", "'Bsh' names no tool; did you mean Bash?"),
        ("grep", "'grep' names no tool; did you mean Grep?"),
        ("Reed", "'Reed' names no tool; did you mean Read?"),
        ("Deploy", "'Deploy' names no tool; tools: Bash, Read, Glob, Grep, Edit"),
    ],
)
def test_unknown_tool_suggests_the_nearest(name: str, problem: str | None) -> None:
    assert unknown_tool(name, TOOLS) == problem


def test_match_tool_naming_no_tool_is_an_error_given_the_tools(tmp_path: Path) -> None:
    path = tmp_path / "hooks.toml"
    path.write_text(
        '[[hooks]]\nevent = "Stop"\ncommand = "a"\n\n'
        '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "bash"\ncommand = "x"\n'
    )
    assert load_hooks_file(path) is not None  # without the tools: only the syntax is checked
    with pytest.raises(HookConfigError) as info:
        load_hooks_file(path, TOOLS)
    assert str(info.value) == (
        f"{path}: hooks[1] (event 'PreToolUse'): match_tool 'bash' names no tool; "
        "did you mean Bash?"
    )
