"""``.forgeflare/hooks.toml``: the agent's shell hooks (hook spec R2).

These are agent hooks, run by ``forgeflare run``; not the lifecycle hooks of ``forgeflare
loop`` (``.fresher/hooks``) nor Claude Code's Stop hook (``forgeflare stop-hook``).

The file is read once, at start-up. Every problem a user can make in it becomes one
:class:`HookConfigError` whose message names the file, the entry and the problem, e.g.
``hooks.toml: hooks[2] (event 'PreTool'): unknown event; expected PreToolUse, PostToolUse or Stop``.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgeflare._errors import ConfigError
from forgeflare.disk import CONFIG_LIMIT, read_text, validation_message

__all__ = [
    "DEFAULT_STOP_TIMEOUT_MS",
    "DEFAULT_TIMEOUT_MS",
    "HOOKS_RELPATH",
    "SHELL_EVENTS",
    "HookConfig",
    "HookConfigError",
    "HooksFile",
    "load_hooks_file",
    "parse_hooks_text",
    "unknown_tool",
]

HOOKS_RELPATH = Path(".forgeflare") / "hooks.toml"
DEFAULT_TIMEOUT_MS = 5000
DEFAULT_STOP_TIMEOUT_MS = 3000

ShellEvent = Literal["PreToolUse", "PostToolUse", "Stop"]
SHELL_EVENTS: tuple[str, ...] = get_args(ShellEvent)
"""The events a shell hook can be declared for (hooks.toml and ``forgeflare hooks test``)."""
_PHASES: tuple[str, ...] = ("guard", "observe")


class HookConfigError(ConfigError):
    """hooks.toml is malformed: TOML syntax, unknown event/phase/key, bad timeout or command.

    Distinct from a hook that *fails* while running, which is never an exception (guards
    block, observers log).
    """


class HookConfig(BaseModel):
    """One ``[[hooks]]`` entry: a shell command run for one event."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    event: ShellEvent = Field(
        description="When the hook runs: before a tool (PreToolUse), after it (PostToolUse), or "
        "when the agent's turn ends (Stop)."
    )

    command: str = Field(
        min_length=1,
        description="Run as ``bash -c COMMAND`` in the project directory; JSON on stdin, JSON on "
        "stdout.",
    )

    match_tool: str | None = Field(
        None,
        description="Only for this tool name (exact match, no prefix). Omitted: every tool. "
        "Ignored for Stop.",
    )

    phase: Literal["guard", "observe"] | None = Field(
        None,
        description="PreToolUse only: ``guard`` (the default) can block and fails closed; "
        "``observe`` always runs, sees the guard outcome, and cannot block. Ignored for other "
        "events.",
    )

    timeout_ms: int | None = Field(
        default=None,
        gt=0,
        description="Kill the hook's whole process group after this many milliseconds (spawn, "
        "write and read included). Default 5000, 3000 for Stop hooks.",
    )

    @property
    def effective_timeout_ms(self) -> int:
        """``timeout_ms``, or the event's default."""
        if self.timeout_ms is not None:
            return self.timeout_ms
        return DEFAULT_STOP_TIMEOUT_MS if self.event == "Stop" else DEFAULT_TIMEOUT_MS

    @property
    def effective_phase(self) -> Literal["guard", "observe"] | None:
        """``guard`` or ``observe`` for PreToolUse (``None`` means guard), ``None`` otherwise."""
        if self.event != "PreToolUse":
            return None
        return self.phase or "guard"

    def matches(self, tool: str) -> bool:
        """Exact tool-name match; no ``match_tool`` matches every tool."""
        return self.match_tool is None or self.match_tool == tool


class HooksFile(BaseModel):
    """The whole ``.forgeflare/hooks.toml``: a list of ``[[hooks]]`` tables."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    hooks: list[HookConfig] = Field(
        default_factory=list,
        description="Hooks in declaration order: guards, observers and signals run in this order.",
    )


def _entry_error(path: Path, index: int, entry: dict[str, Any], problem: str) -> HookConfigError:
    event = entry.get("event")
    where = f"hooks[{index}]"
    if isinstance(event, str):
        where += f" (event {event!r})"
    return HookConfigError(f"{path}: {where}: {problem}")


def _check_entry(path: Path, index: int, entry: object) -> HookConfig:
    """Validate one entry with a message per kind of mistake, then build the model."""
    if not isinstance(entry, dict):
        raise HookConfigError(f"{path}: hooks[{index}]: expected a table ([[hooks]])")
    unknown = sorted(set(entry) - set(HookConfig.model_fields))
    if unknown:
        known = ", ".join(HookConfig.model_fields)
        raise _entry_error(path, index, entry, f"unknown key {unknown[0]!r}; expected {known}")
    event = entry.get("event")
    if event is None:
        raise _entry_error(path, index, entry, "missing 'event'")
    if event not in SHELL_EVENTS:
        raise _entry_error(
            path, index, entry, "unknown event; expected PreToolUse, PostToolUse or Stop"
        )
    phase = entry.get("phase")
    if phase is not None and phase not in _PHASES:
        raise _entry_error(
            path, index, entry, f"unknown phase {phase!r}; expected guard or observe"
        )
    command = entry.get("command")
    if command is None:
        raise _entry_error(path, index, entry, "missing 'command'")
    if not isinstance(command, str) or not command.strip():
        raise _entry_error(path, index, entry, "'command' must be a non-empty string")
    timeout = entry.get("timeout_ms")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0
    ):
        raise _entry_error(
            path, index, entry, f"timeout_ms must be a positive integer, got {timeout!r}"
        )
    match_tool = entry.get("match_tool")
    if match_tool is not None and (not isinstance(match_tool, str) or not match_tool):
        raise _entry_error(path, index, entry, "'match_tool' must be a non-empty string")
    try:
        return HookConfig.model_validate(entry)
    except ValidationError as exc:  # a case the checks above missed: still one line
        raise _entry_error(path, index, entry, validation_message(exc)) from exc


def parse_hooks_text(text: str, path: Path) -> HooksFile:
    """Parse hooks.toml content; ``path`` only names the file in messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line L, column C)".
        raise HookConfigError(f"{path}: invalid TOML: {exc}") from exc
    unknown = sorted(set(data) - {"hooks"})
    if unknown:
        raise HookConfigError(f"{path}: unknown top-level key {unknown[0]!r}; expected [[hooks]]")
    entries = data.get("hooks", [])
    if not isinstance(entries, list):
        raise HookConfigError(f"{path}: 'hooks' must be an array of tables ([[hooks]])")
    return HooksFile(hooks=[_check_entry(path, i, e) for i, e in enumerate(entries)])


def unknown_tool(name: str, tools: Collection[str]) -> str | None:
    """The problem with a tool matcher naming no tool (``None`` if it names one), with a
    suggestion: ``match_tool 'bash' names no tool; did you mean Bash?``."""
    if name in tools:
        return None
    same = [t for t in tools if t.lower() == name.lower()]
    close = same or difflib.get_close_matches(name, list(tools), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "tools: " + ", ".join(tools)
    return f"{name!r} names no tool; {hint}"


def _check_tools(path: Path, hooks: HooksFile, tools: Collection[str]) -> None:
    for index, h in enumerate(hooks.hooks):
        problem = None if h.match_tool is None else unknown_tool(h.match_tool, tools)
        if problem is not None:
            raise HookConfigError(
                f"{path}: hooks[{index}] (event {h.event!r}): match_tool {problem}"
            )


def load_hooks_file(path: Path, tools: Collection[str] | None = None) -> HooksFile | None:
    """Read and validate a hooks file. ``None`` when it does not exist (no hooks at all).

    Raises :class:`HookConfigError` for anything else that is wrong, including a file that
    exists but cannot be read, and (given the agent's ``tools``) a ``match_tool`` naming none.
    """
    text = read_text(path, error=HookConfigError, limit=CONFIG_LIMIT)
    if text is None:
        return None
    hooks = parse_hooks_text(text, path)
    if tools is not None:
        _check_tools(path, hooks, tools)
    return hooks
