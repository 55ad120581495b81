"""``forgeflare stop-hook``: the hook (no subcommand), start, status, cancel, answer, install."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from forgeflare._completion import blocked_hint
from forgeflare._errors import ConfigError
from forgeflare._termtext import for_terminal
from forgeflare.disk import CONFIG_LIMIT, read_limited_text
from forgeflare.stophook._answer import answer_loop, answer_text
from forgeflare.stophook._completion import completion_hint
from forgeflare.stophook._entry import run_stop_hook_process
from forgeflare.stophook._install import (
    PORTABLE_COMMAND,
    PORTABLE_RELPATH,
    SETTINGS_RELPATH,
    command_problem,
    forgeflare_command,
    hook_command,
    install_hook,
    is_stop_hook_command,
    write_portable_wrapper,
)
from forgeflare.stophook._loops import (
    cancel_loops,
    describe_state,
    loop_status,
    start_loop,
)
from forgeflare.stophook._machine import LoopRecord
from forgeflare.stophook._plugin import (
    default_plugin_dir,
    install_plugin,
    parse_loop_args,
)
from forgeflare.stophook._signals import Mode
from forgeflare.stophook._statefile import legacy_note, legacy_states

__all__ = ["register"]

_ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--dir", "--project-dir", help="Project directory (default: the current directory)."
    ),
]


def _project(project_dir: Path | None) -> Path:
    return project_dir if project_dir is not None else Path.cwd()


def _folder_to_start_in(project: Path) -> Path:
    """The project a loop starts in: its state is named after the folder's real path, so the
    folder must exist (a typo would start a loop no session ever stops in)."""
    if not project.is_dir():
        raise ConfigError(f"stop-hook start: --dir {project}: not a directory")
    return project


def _settings_run_hook(project: Path) -> bool:
    """Whether the project's settings.json already runs the stop-hook (best effort)."""
    try:
        settings = json.loads(read_limited_text(project / SETTINGS_RELPATH, limit=CONFIG_LIMIT))
        groups = settings["hooks"]["Stop"]
        return any(
            is_stop_hook_command(str(hook.get("command", "")))
            for group in groups
            for hook in group.get("hooks", [])
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def register(app: typer.Typer) -> None:
    """Add the ``stop-hook`` command group to ``app``."""
    sub = typer.Typer(
        name="stop-hook",
        help=(
            "Claude Code's Stop hook and the loops it drives inside one agent session.\n\n"
            "With no subcommand, run as Claude Code's Stop hook: read its JSON on stdin, print "
            "a continuation prompt as JSON to keep the loop going (exit 0), or nothing to let "
            "the agent stop. "
            "IDLE_LOOP_DISABLE=1 or a .idle-disabled file in the project turns it off."
        ),
        invoke_without_command=True,
        add_completion=False,
        no_args_is_help=False,
    )

    sub.callback(invoke_without_command=True)(_hook)
    sub.command("start")(_start)
    sub.command("status")(_status)
    sub.command("cancel")(_cancel)
    sub.command("answer")(_answer)
    sub.command("install")(_install)
    app.add_typer(sub, name="stop-hook")


def _hook(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        raise typer.Exit(run_stop_hook_process())


def _start(
    max_iterations: Annotated[
        int,
        typer.Option(
            "--max-iterations", min=1, help="Cap on iterations of this loop (as the plugin)."
        ),
    ] = 20,
    mode: Annotated[
        Mode, typer.Option("--mode", help="Kind of loop (sets its signals).")
    ] = Mode.LOOP,
    prompt: Annotated[str, typer.Option("--prompt", help="Task text repeated on each block.")] = "",
    gate: Annotated[
        str,
        typer.Option(
            "--gate",
            help=(
                "A shell command a completion claim must pass (exit 0); red, the loop goes "
                "on and the continuation starts with its exit code and output's tail."
            ),
        ),
    ] = "",
    stall_after: Annotated[
        int,
        typer.Option(
            "--stall-after",
            min=0,
            help=(
                "With --gate: end the loop after this many claims in a row refused with "
                "the same gate failures (0 = never)."
            ),
        ),
    ] = 4,
    reviewer: Annotated[
        str,
        typer.Option(
            "--reviewer",
            metavar="MODEL",
            help=(
                "A model that judges each completion claim the gate passed (one Messages API "
                "request with ANTHROPIC_API_KEY); not complete, the loop goes on with its "
                "reasons."
            ),
        ),
    ] = "",
    args_stdin: Annotated[
        bool,
        typer.Option(
            "--args-stdin",
            help=(
                "Read '<prompt> [--max-iterations N] [--mode M] [--reviewer MODEL]' as typed "
                "from stdin (what "
                "the plugin's /forgeflare:loop passes); options there win."
            ),
        ),
    ] = False,
    project_dir: _ProjectOpt = None,
) -> None:
    """Push a loop frame (nested if a loop is already running)."""
    now = datetime.now(UTC)
    project = _folder_to_start_in(_project(project_dir))
    if args_stdin:
        asked = parse_loop_args(sys.stdin.read())
        prompt = asked.prompt
        max_iterations = asked.max_iterations or max_iterations
        mode = asked.mode or mode
        reviewer = asked.reviewer or reviewer
    _check_reviewer(reviewer)
    if gate:
        _trust_gate(gate, project, now)
    record = start_loop(
        project,
        mode=mode,
        max_iterations=max_iterations,
        prompt=prompt,
        now=now,
        gate=gate,
        stall_after=stall_after,
        reviewer=reviewer,
    )
    _say_started(record, show_task=args_stdin)


def _say_started(record: LoopRecord, *, show_task: bool) -> None:
    frame = record.stack[-1]
    typer.echo(
        f"started a {frame.mode}-mode loop (frame {len(record.stack)}, "
        f"max {frame.max} iterations, run {record.run_id})"
    )
    typer.echo(completion_hint(frame.mode))
    typer.echo(blocked_hint())
    if show_task:
        # From /forgeflare:loop: the raw arguments hold options too; say what the task is.
        typer.echo(f"\nTask:\n{frame.prompt}")


def _trust_gate(gate: str, project: Path, now: datetime) -> None:
    """The user typed this gate: record it as trusted for the project (the hook runs a frame's
    gate only when it is), beside what else the user trusted there."""
    from forgeflare.stophook._check import gate_trust_item
    from forgeflare.trust import TrustStore, default_trust_file

    store = TrustStore(default_trust_file(os.environ))
    store.trust(str(project.resolve()), [gate_trust_item(gate, project)], now.isoformat())


def _check_reviewer(reviewer: str) -> None:
    """A reviewer needs a key (or an endpoint of its own): refused before the loop starts, as
    the loop's preflight does, rather than refusing every claim later."""
    env = os.environ
    url = (env.get("ANTHROPIC_API_URL") or env.get("ANTHROPIC_BASE_URL") or "").strip()
    if reviewer and not env.get("ANTHROPIC_API_KEY") and not url:
        raise ConfigError(
            f"--reviewer {reviewer}: ANTHROPIC_API_KEY is not set, so no claim could ever be "
            "reviewed; export it where Claude Code runs, or point ANTHROPIC_BASE_URL at "
            "another endpoint"
        )


def _status(
    project_dir: _ProjectOpt = None,
) -> None:
    """Show the loop stack, outermost frame first."""
    project = _project(project_dir)
    path, state = loop_status(project)
    typer.echo(for_terminal(describe_state(path, state, datetime.now(UTC))))
    for old in legacy_states(project):
        typer.echo(for_terminal(legacy_note(old)))


def _cancel(
    project_dir: _ProjectOpt = None,
) -> None:
    """Abort every loop of the project: its state is removed, the next stop is allowed."""
    project = _project(project_dir)
    removed = cancel_loops(project)
    if not removed:
        typer.echo("no loop to cancel")
    for path, _state in removed:
        typer.echo(f"cancelled: removed {path}")
    for old in legacy_states(project):  # never acted on, so nothing to cancel: say so
        typer.echo(legacy_note(old))


def _install(
    project_dir: _ProjectOpt = None,
    command: Annotated[
        str | None,
        typer.Option(
            "--command",
            help=(
                "The command Claude Code runs on Stop (default: this forgeflare by its "
                "absolute path, so it runs without PATH)."
            ),
        ),
    ] = None,
    plugin: Annotated[
        bool,
        typer.Option(
            "--plugin",
            help=(
                "Install the Claude Code plugin instead (/forgeflare:loop, "
                "/forgeflare:cancel, /forgeflare:status, /forgeflare:answer and the Stop hook)."
            ),
        ),
    ] = False,
    plugin_dir: Annotated[
        Path | None,
        typer.Option(
            "--plugin-dir",
            help="Where --plugin writes it (default: ~/.claude/skills/forgeflare).",
        ),
    ] = None,
    portable: Annotated[
        bool,
        typer.Option(
            "--portable",
            help=(
                "For a settings.json you commit: run .claude/forgeflare-stop-hook, a "
                "project-relative wrapper (written too), not this machine's path."
            ),
        ),
    ] = False,
) -> None:
    """Add the Stop hook to .claude/settings.json (keeping everything there), or the plugin."""
    project = _project(project_dir)
    if plugin:
        _install_plugin(project, plugin_dir)
    else:
        _install_hook(project, command, portable=portable)


def _install_plugin(project: Path, plugin_dir: Path | None) -> None:
    """Install the Claude Code plugin; warn when settings.json runs the hook too."""
    prefix = forgeflare_command()
    problem = command_problem(prefix)
    if problem:
        typer.echo(f"warning: {problem}", err=True)
    target = (plugin_dir or default_plugin_dir()).absolute()
    install_plugin(target, prefix)
    typer.echo(f"installed the Claude Code plugin 'forgeflare' in {target}")
    typer.echo(f"  it runs {prefix} stop-hook on Stop; new sessions load it")
    if plugin_dir is not None:
        typer.echo(f"  load it with: claude --plugin-dir {target}")
    typer.echo("  start a loop in a session: /forgeflare:loop <task> --max-iterations 20")
    typer.echo("  answer a loop's question in its session: /forgeflare:answer <answer>")
    if _settings_run_hook(project):
        typer.echo(
            f"warning: {project / SETTINGS_RELPATH} runs the stop-hook too; remove it "
            "there, or every stop counts twice",
            err=True,
        )


def _install_hook(project: Path, command: str | None, *, portable: bool) -> None:
    """Add the Stop hook to .claude/settings.json, keeping everything there."""
    if portable:
        if command is not None:
            raise ConfigError("--portable and --command: choose one")
        wrapper = write_portable_wrapper(project)
        command = PORTABLE_COMMAND
        typer.echo(f"wrote {wrapper} (finds forgeflare in the project's .venv, then PATH)")
    command = command or hook_command()
    problem = None if portable else command_problem(command)
    if problem:
        typer.echo(f"warning: {problem}", err=True)
    path, changed = install_hook(project, command=command)
    if changed:
        typer.echo(f"added Stop hook {command!r} to {path}")
    else:
        typer.echo(f"{path} already runs {command!r} on Stop; nothing changed")
    if portable:
        typer.echo(f"commit {SETTINGS_RELPATH} and {PORTABLE_RELPATH} together")
    elif changed:  # "nothing changed" and "now names" would contradict each other
        typer.echo(
            f"note: {SETTINGS_RELPATH} now names this machine's forgeflare; to commit it, "
            "install with --portable (a project-relative wrapper) instead"
        )
    plugin_hooks = default_plugin_dir() / "hooks" / "hooks.json"
    if plugin_hooks.exists():
        typer.echo(
            f"warning: the forgeflare plugin ({plugin_hooks.parent.parent}) runs the "
            "stop-hook too; use one of the two, or every stop counts twice",
            err=True,
        )


def _answer(
    text: Annotated[
        str | None, typer.Argument(metavar='"TEXT"', help="The answer.", show_default=False)
    ] = None,
    file: Annotated[
        Path | None, typer.Option("--file", metavar="FILE", help="Read the answer here.")
    ] = None,
    args_stdin: Annotated[
        bool,
        typer.Option(
            "--args-stdin", help="Read the answer from stdin (what /forgeflare:answer passes)."
        ),
    ] = False,
    project_dir: _ProjectOpt = None,
) -> None:
    """Answer the question a blocked loop stopped on; the session's next stop goes on with it.

    The agent parks its loop with <loop-done>BLOCKED</loop-done> and its question on the lines
    after it; the stop is allowed and `stop-hook status` shows the question. Inside the
    session, /forgeflare:answer TEXT runs this and the loop resumes at once; from another
    terminal, the session's next turn (claude --continue) resumes it. The continuation starts
    with the question and the answer.
    """
    if args_stdin:
        if text is not None:
            raise ConfigError("stop-hook answer: give the answer as TEXT or on stdin, not both")
        text = sys.stdin.read()
    answer = answer_text(text, file)
    record = answer_loop(_project(project_dir), answer, datetime.now(UTC))
    frame = record.stack[-1]
    typer.echo(f"answered the {frame.mode}-mode loop's question (run {record.run_id or '-'}):")
    typer.echo(f"  {frame.question.strip().splitlines()[0]}")
    typer.echo("the session's next stop goes on with the loop, the question and this answer")
