"""``forgeflare hooks validate|test|schema``: operator tools for the agent hooks.

It lives with the agent, above the hook layer, because it checks matchers against the agent's
tool names and runs the agent's built-in hooks.

``hooks test`` collects hooks exactly as ``forgeflare run`` does (hooks.toml, entry points,
``--hooks-module``, the built-ins) and runs them for one synthetic event.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import trio
import typer

from forgeflare._cliopts import TrustProject
from forgeflare._errors import ConfigError
from forgeflare.agent._agent_hooks import builtin_hooks
from forgeflare.agent.tools._registry import TOOL_NAMES
from forgeflare.disk import loads
from forgeflare.hooks import (
    HOOKS_RELPATH,
    SHELL_EVENTS,
    AgentHooks,
    Allow,
    Block,
    Blocked,
    Continue,
    ExitReason,
    HooksFile,
    PostToolResult,
    PreToolResult,
    Signal,
    build_pipeline,
    collect_agent_hooks,
    load_hooks_file,
)
from forgeflare.security import pass_env_from, scrub_environment
from forgeflare.trust import agent_trust_items, require_trust

__all__ = ["register"]

hooks_app = typer.Typer(
    name="hooks",
    help="Check, try out and describe the agent hooks (.forgeflare/hooks.toml, --hooks-module).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"forgeflare: error: {message}", err=True)
    return typer.Exit(1)


@hooks_app.command("validate")
def validate(
    path: Annotated[Path, typer.Argument(help="The hooks file to check.")] = HOOKS_RELPATH,
) -> None:
    """Check a hooks file with the same rules as start-up: exit 0 with "OK: N hooks", or 1."""
    try:
        loaded = load_hooks_file(path, TOOL_NAMES)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if loaded is None:
        raise _fail(f"{path}: no such file")
    n = len(loaded.hooks)
    typer.echo(f"OK: {n} hook{'' if n == 1 else 's'}")


@hooks_app.command("schema")
def schema() -> None:
    """Print the JSON schema of hooks.toml (for editors and linters)."""
    typer.echo(json.dumps(HooksFile.model_json_schema(), indent=2))


def _row(record: dict[str, Any]) -> tuple[str, str, str, str, str]:
    detail = record.get("reason", "")
    if record.get("signal"):
        detail = f"signal {record['signal']}" + (f": {detail}" if detail else "")
    if record.get("note"):
        detail = f"{detail}; {record['note']}" if detail else record["note"]
    if record.get("prompt"):
        detail = f"next prompt: {record['prompt']}"
    phase = record.get("phase") or "-"
    return (
        f"{record['event']}/{phase}" if phase != "-" else record["event"],
        str(record["hook"]),
        str(record["outcome"]),
        f"{record['duration_ms']:.1f} ms",
        str(detail),
    )


def _show(rows: list[tuple[str, str, str, str, str]], verdict: str) -> None:
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table("event", "hook", "decision", "duration", "detail / failure")
        for row in rows:
            table.add_row(*row)
        console = Console()
        console.print(table)
        console.print(verdict, markup=False, highlight=False)
        return
    for row in rows:
        typer.echo("\t".join(row))
    typer.echo(verdict)


def _verdict(result: PreToolResult | PostToolResult | Blocked | str | None) -> str:
    """What the turn loop would get, in words."""
    if isinstance(result, Allow):
        return f"result: allow, tool input {json.dumps(result.input)}"
    if isinstance(result, Block):
        return f"result: block, the model sees: {result.message}"
    if isinstance(result, Signal):
        return f"result: signal {result.signal!r}" + (
            f" ({result.reason})" if result.reason else ""
        )
    if isinstance(result, Continue):
        return "result: continue"
    if isinstance(result, str):
        return f"result: the agent goes on with the prompt: {result}"
    if isinstance(result, Blocked):
        return f"result: the agent stops on a question (a loop finishes blocked): {result.question}"
    return "result: the agent stops"


def _checked_args(event: str, input_json: str, reason: str) -> tuple[dict[str, Any], ExitReason]:
    """The event's tool input and stop reason, or a usage error naming the bad option."""
    if event not in SHELL_EVENTS:
        raise _fail(f"unknown event {event!r}; expected PreToolUse, PostToolUse or Stop")
    try:
        tool_input = loads(input_json)
    except ValueError as exc:
        raise _fail(f"--input: not valid JSON: {exc}") from None
    if not isinstance(tool_input, dict):
        raise _fail("--input: must be a JSON object")
    try:
        return tool_input, ExitReason(reason)
    except ValueError:
        known = ", ".join(r.value for r in ExitReason)
        raise _fail(f"--reason: unknown stop reason {reason!r}; expected one of {known}") from None


def _collected_hooks(hooks: Path | None, hooks_module: Sequence[str]) -> AgentHooks:
    """The same collection as `forgeflare run` (entry points and built-ins included)."""
    try:
        collected = collect_agent_hooks(
            project_dir=Path.cwd(),
            hooks_file=hooks,
            hooks_modules=hooks_module,
            builtins=builtin_hooks(Path.cwd()),
            tools=TOOL_NAMES,
        )
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if not collected.file_found and not collected.python:
        raise _fail(f"{collected.hooks_file}: no such file")
    return collected


@hooks_app.command("test")
def run_test(
    event: Annotated[str, typer.Argument(help="PreToolUse, PostToolUse or Stop.")],
    tool: Annotated[str, typer.Option(help="Tool name for PreToolUse/PostToolUse.")] = "Bash",
    input_json: Annotated[str, typer.Option("--input", help="Tool input as a JSON object.")] = "{}",
    result: Annotated[str, typer.Option(help="Tool result text (PostToolUse).")] = "",
    is_error: Annotated[bool, typer.Option(help="The tool result is an error.")] = False,
    reason: Annotated[str, typer.Option(help="Stop reason (Stop).")] = "end_turn",
    tool_iterations: Annotated[int, typer.Option(help="tool_iterations sent.")] = 1,
    hooks: Annotated[
        Path | None, typer.Option(help="Hooks file (default: .forgeflare/hooks.toml here).")
    ] = None,
    hooks_module: Annotated[
        list[str] | None,
        typer.Option(help="Also load Python hooks from this module (repeatable)."),
    ] = None,
    trust_project: TrustProject = False,
) -> None:
    """Run the configured hooks for one synthetic event; show each decision, time, failure.

    Nothing is recorded in convergence.json; hooks run for real (in this directory), once you
    trusted them (`forgeflare trust`), with secret-looking variables removed, like `run`.
    """
    tool_input, stop_reason = _checked_args(event, input_json, reason)
    # Trust first, like `forgeflare run`: nothing from the project is imported or run before.
    env = dict(os.environ)
    here = Path.cwd()
    try:
        require_trust(
            here, agent_trust_items(here, hooks, hooks_module or ()), env, flag=trust_project
        )
    except ConfigError as exc:
        typer.echo(f"forgeflare: error: {exc}", err=True)
        raise typer.Exit(2) from None
    scrub_environment(os.environ, pass_env_from(env))
    collected = _collected_hooks(hooks, hooks_module or ())
    records: list[dict[str, Any]] = []
    logs: list[str] = []
    pipeline = build_pipeline(
        project_dir=Path.cwd(),
        hooks=collected,
        log=logs.append,
        audit=records.append,
        record_convergence=False,
    )

    async def run() -> PreToolResult | PostToolResult | Blocked | str | None:
        if event == "PreToolUse":
            return await pipeline.pre_tool_use(
                tool=tool, input=tool_input, tool_iterations=tool_iterations
            )
        if event == "PostToolUse":
            return await pipeline.post_tool_use(
                tool=tool,
                input=tool_input,
                result=result,
                is_error=is_error,
                tool_iterations=tool_iterations,
            )
        return await pipeline.stop(
            reason=stop_reason, tool_iterations=tool_iterations, total_tokens=0
        )

    answer = trio.run(run)
    if not records:
        typer.echo(f"no hook matches {event}" + (f" for tool {tool}" if event != "Stop" else ""))
    _show([_row(r) for r in records], _verdict(answer))


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""
    app.add_typer(hooks_app, name="hooks")
