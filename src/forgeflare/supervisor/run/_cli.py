"""Command-line commands of this part (registered on the root app by ``forgeflare.cli``).

``forgeflare loop`` and its shortcuts ``forgeflare plan`` / ``forgeflare build``.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any

import trio
import typer

from forgeflare._cliopts import OldDir, PassEnv, ProjectDir, TrustProject, project_dir
from forgeflare._errors import ConfigError
from forgeflare.disk import read_named_text, require_utf8
from forgeflare.security import scrub_environment
from forgeflare.supervisor.config._config import LoadedConfig, load_config
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.evidence._finish import FINISH_EXIT_CODES
from forgeflare.supervisor.records._records import RunRecord, RunSettings, find_resumable
from forgeflare.supervisor.run._loop import run_loop
from forgeflare.supervisor.run._preflight import lock_holder, preflight, project_lock
from forgeflare.supervisor.run._resume import kept_settings

__all__ = ["register"]

_EXIT_TABLE = "\n".join(
    f"[bold]{code:>3}[/bold]  {ft.value}"
    for ft, code in sorted(FINISH_EXIT_CODES.items(), key=lambda kv: kv[1])
)

_HELP = "\n\n".join(
    [
        "Run a Ralph loop: a fresh agent each iteration until the work converges.",
        "Runs the lifecycle hooks in .fresher/hooks/ (started, next_iteration, finished), "
        "starts the agent with the mode's prompt (.fresher/PROMPT.<mode>.md, or the built-in "
        "one) on stdin, and decides after each iteration whether to go on. Settings: flag > "
        "FRESHER_* variable > .fresher/config.toml > default. Records: .fresher/runs/<run-id>/.",
        "[bold]Exit status by finish type:[/bold]",
        _EXIT_TABLE
        + "\n[bold]  1[/bold]  run records unusable\n[bold]  2[/bold]  bad setting or usage",
        "complete: a claim (the tag <loop-done>COMPLETE</loop-done>, a hook's convergence_signal, "
        "or no '- [ ]' left in the plan in building mode) held on a clean, committed work tree. "
        "manual: Ctrl+C or SIGTERM. max_iterations / timeout: the iteration / runtime limit. "
        "no_changes: no commit and no work-tree change (git, smart_termination). "
        "error: too many error iterations in a row. hook_abort: a hook exited 2, or git "
        "internals changed during the run. "
        "stuck: block limits several iterations in a row. "
        "skips: next_iteration skipped too many iterations in a row. "
        "budget: max_cost spent. stopped: `forgeflare stop`. "
        "blocked: the agent asked a question (`forgeflare answer`, then --resume). "
        "stalled: stall_after iterations in a row without progress. "
        "quota: the account's credit or billing quota is spent (waiting cannot fix it) and no "
        "[agent] fallback is left. "
        "undelivered: a claim met uncommitted work or a failed checkpoint commit, or two "
        "checkpoints failed in a row ([fresher] checkpoint commits what the agent leaves).",
        "Bounded by default: 50 iterations and 10 hours (0 = unlimited, explicitly); "
        "--max-cost sets a spend limit. Usage limits and API outages are waited out "
        "(max_outage), not counted as errors. Before anything starts, a preflight checks the "
        "API key, hooks, the agent command, trust and that no other loop runs here.",
    ]
)


def _run(*, project_dir: Path, mode: str | None, opts: dict[str, Any]) -> None:
    env = dict(os.environ)
    # The loop keeps the secrets in `env`; a child started without an explicit environment
    # inherits none of them.
    scrub_environment(os.environ)
    if not project_dir.is_dir():
        raise ConfigError(f"--dir {project_dir}: not a directory")
    task = opts.pop("task")
    task_file = opts.pop("task_file")
    if task_file is not None:
        # named by the user: any link
        named = f"--task-file {task_file}"
        task = read_named_text(task_file, named, error=ConfigError, folder=Path("/"))
    cli: dict[str, Any] = {
        "fresher.mode": mode,
        "fresher.max_iterations": opts["max_iterations"],
        "fresher.model": opts["model"],
        "limits.max_runtime": opts["max_runtime"],
        "limits.iteration_timeout": opts["iteration_timeout"],
        "limits.max_cost": opts["max_cost"],
        "agent.command": opts["agent_cmd"],
        "agent.backend": opts["backend"],
        "security.sandbox": "off" if opts["no_sandbox"] else None,
    }
    loaded = load_config(project_dir, env=env, cli=cli)
    trust_project = bool(opts["trust_project"])
    project_command = loaded.sources.get("agent.command") not in ("command line", "environment")
    pass_env = [*loaded.config.security.pass_env, *(opts["pass_env"] or ())]
    raw = bool(opts["raw"])
    if opts["resume"]:
        stored = _stored_settings(project_dir, loaded)
        if stored is not None:
            record, settings = stored
            loaded.config = kept_settings(
                settings,
                loaded,
                run_id=record.run_id,
                flags=_FLAG_NAMES,
                task=task,
                pass_env=opts["pass_env"] or (),
            )
            task, pass_env = settings.task, list(settings.pass_env)
            raw = raw or settings.raw
            trust_project = trust_project or settings.trust_project
            project_command = settings.project_command
    if opts["dry_run"]:
        _dry_run(project_dir, loaded, env, task, pass_env, trust_project, project_command)
        return
    preflight(
        project_dir,
        loaded.config,
        env,
        trust_project=trust_project,
        resume=bool(opts["resume"]),
        warn=loaded.warnings.append,
        project_command=project_command,
    )
    if trust_project:
        env["FORGEFLARE_TRUST"] = "1"  # the agent checks trust itself: pass the decision on
    loop_opts = LoopOptions(
        project_dir=project_dir,
        config=loaded.config,
        resume=bool(opts["resume"]),
        env=env,
        python=sys.executable,
        warnings=loaded.warnings,
        task=task,
        trust_project=trust_project,
        pass_env=tuple(pass_env),
        raw=raw,
        project_command=project_command,
    )
    with project_lock(project_dir):
        result = trio.run(functools.partial(run_loop, loop_opts, signals=True))
    raise typer.Exit(result.exit_code)


def _dry_run(
    project_dir: Path,
    loaded: LoadedConfig,
    env: dict[str, str],
    task: str | None,
    pass_env: list[str],
    trust_project: bool,
    project_command: bool,
) -> None:
    """``--dry-run``: the first iteration as the loop would start it; nothing starts."""
    from forgeflare.supervisor.config._trust import loop_trust_items
    from forgeflare.supervisor.run._dryrun import first_iteration
    from forgeflare.trust import TrustError, require_trust

    for warning in loaded.warnings:
        typer.echo(f"warning: {warning}", err=True)
    items = loop_trust_items(project_dir, loaded.config, project_command=project_command)
    try:
        check = require_trust(project_dir, items, env, flag=trust_project)
        trust = f"holds ({check.reason})"
    except TrustError as exc:
        trust = f"the loop would refuse: {exc}"
    opts = LoopOptions(
        project_dir=project_dir,
        config=loaded.config,
        env=env,
        python=sys.executable,
        task=task,
        trust_project=trust_project,
        pass_env=tuple(pass_env),
        project_command=project_command,
    )
    for line in first_iteration(opts, trust):
        typer.echo(line)


def _stored_settings(
    project_dir: Path, loaded: LoadedConfig
) -> tuple[RunRecord, RunSettings] | None:
    """The settings of the run ``--resume`` will pick up, when it has them."""
    store = find_resumable(project_dir.resolve() / loaded.config.paths.log_dir)
    if store is None:
        return None  # the loop says there is nothing to resume
    record = store.load()
    if record.settings is None:
        loaded.warnings.append(
            f"run {record.run_id} was started by an older forgeflare that did not record its "
            "settings: it goes on with the current ones"
        )
        return None
    return record, record.settings


_FLAG_NAMES: dict[str, str] = {}
"""Config key -> the flag that sets it (a resume names the flags it does not follow)."""


def _setting(key: str, flag: str, help: str, *, metavar: str | None = None) -> Any:
    """The option of a flag that sets config ``key``: unset (``None``), the config decides."""
    _FLAG_NAMES[key] = flag
    return typer.Option(None, flag, metavar=metavar, help=help)


def _flag(flag: str, help: str) -> Any:
    """The option of an on/off flag, off unless given."""
    return typer.Option(False, flag, help=help)


_MODE = _setting("fresher.mode", "--mode", "planning or building (default: config, else building).")
_MAX_IT = _setting(
    "fresher.max_iterations",
    "--max-iterations",
    "Stop after N iterations (default 50; 0 = unlimited).",
)
_MAX_RT = _setting(
    "limits.max_runtime",
    "--max-runtime",
    "Wall-clock limit: 90s, 15m, 2h (default 10h; 0 = none).",
    metavar="DURATION",
)
_IT_TO = _setting(
    "limits.iteration_timeout",
    "--iteration-timeout",
    "Kill an agent run after this long (default 1h; 0 = no limit).",
    metavar="DURATION",
)
_AGENT = _setting(
    "agent.command",
    "--agent-cmd",
    "Agent command (prompt on stdin); default: forgeflare run.",
    metavar="CMD",
)
_BACKEND = _setting(
    "agent.backend",
    "--backend",
    "Agent backend: forgeflare, claude, codex or command (default: [agent] backend).",
)
_MAX_COST = _setting(
    "limits.max_cost",
    "--max-cost",
    "Spend limit; finish budget when spent (0 = none).",
    metavar="USD",
)
_MODEL = _setting("fresher.model", "--model", "Model for the agent.")
_RESUME = _flag("--resume", "Continue the newest unfinished run.")
_TASK = typer.Option(None, "--task", help="A task put first in every iteration's prompt.")
_TASK_FILE = typer.Option(None, "--task-file", help="Read --task from this file.")
_NO_SANDBOX = _flag(
    "--no-sandbox",
    "Run the agent's Bash commands unconfined (default: under bubblewrap when it works; "
    "[security] sandbox).",
)
_RAW = _flag("--raw", "Show the agent's output as it is (e.g. stream-json).")
_DRY_RUN = _flag(
    "--dry-run",
    "Print the first prompt, the agent command, its environment's names, the bounds and "
    "whether trust holds; start nothing (no agent, no hook, no run folder, no trust record).",
)


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""

    def loop_cmd(
        mode: str = _MODE,
        max_iterations: int = _MAX_IT,
        max_runtime: str = _MAX_RT,
        iteration_timeout: str = _IT_TO,
        agent_cmd: str = _AGENT,
        backend: str = _BACKEND,
        max_cost: float = _MAX_COST,
        model: str = _MODEL,
        resume: bool = _RESUME,
        task: str = _TASK,
        task_file: Path = _TASK_FILE,
        trust_project: TrustProject = False,
        pass_env: PassEnv = None,
        raw: bool = _RAW,
        no_sandbox: bool = _NO_SANDBOX,
        dry_run: bool = _DRY_RUN,
        project_dir: ProjectDir = Path("."),
    ) -> None:
        opts = dict(locals())
        _run(project_dir=opts.pop("project_dir"), mode=opts.pop("mode"), opts=opts)

    app.command("loop", help=_HELP)(loop_cmd)
    for name, mode_value in (("plan", "planning"), ("build", "building")):
        app.command(name, help=f"Shortcut for `forgeflare loop --mode {mode_value}`.\n\n" + _HELP)(
            _shortcut(loop_cmd, mode_value)
        )

    @app.command("schema", help=_SCHEMA_HELP)
    def schema_cmd(
        what: str = typer.Argument(
            ..., help="report: the iteration report a command agent writes."
        ),
    ) -> None:
        import json

        from forgeflare.supervisor.backends import IterationReport

        if what != "report":
            raise ConfigError(f"schema {what!r}: unknown; expected report")
        typer.echo(json.dumps(IterationReport.model_json_schema(), indent=2))

    @app.command("answer", help=_ANSWER_HELP)
    def answer_cmd(
        args: list[str] = typer.Argument(
            None,
            metavar='"TEXT"',
            show_default=False,
            help='The answer, in words (the older spelling `answer DIR "TEXT"` still works).',
        ),
        file: Path = typer.Option(None, "--file", metavar="FILE", help="Read the answer here."),
        project: ProjectDir = Path("."),
    ) -> None:
        old_dir, text = _answer_args(list(args or []), file)
        _answer(project_dir(project, old_dir, "answer"), text)

    @app.command("stop", help=_STOP_HELP)
    def stop_cmd(old_dir: OldDir = None, project: ProjectDir = Path(".")) -> None:
        from forgeflare.supervisor.run._stop import request_stop

        directory = project_dir(project, old_dir, "stop")
        holder = lock_holder(directory)
        if holder is None:
            # A request left for "the next loop" would stop a loop started days later.
            typer.echo(f"no loop is running in {directory}: nothing to stop")
            return
        request_stop(directory)
        typer.echo(f"asked the loop (pid {holder}) to stop after its current iteration")


_ANSWER_HELP = """Answer the question a loop stopped on (the newest run with one in the project).

A loop whose agent asked a question (<loop-done>BLOCKED</loop-done>, finish type blocked, exit
20) keeps it in run.json. This writes the answer as answer.md in that run's folder:
`forgeflare answer "use the v2 API"`, `forgeflare answer --dir DIR "text"` or `forgeflare
answer --dir DIR --file answer.md`. A second answer before the loop reads it replaces the first
(it says so). Then `forgeflare loop --resume` goes on with the same run, and its next
prompt starts with the question and the answer; a loop with [limits] on_blocked = "wait:..."
still waiting picks the answer up by itself.
"""

_SCHEMA_HELP = """Print a JSON schema.

report: the iteration report. A `command` agent may write it as JSON to the path in
$FORGEFLARE_REPORT; the loop then records its outcome, tokens, cost and the rest as for the
built-in backends. Every field is optional; unknown fields are ignored.
"""


def _answer(directory: Path, text: str) -> None:
    """Write ``text`` as the answer to the newest open question in ``directory``."""
    from forgeflare.supervisor.records._blocked import ANSWER_FILE, waiting_run, write_answer
    from forgeflare.supervisor.records._history import runs_root

    root = runs_root(directory, os.environ)
    earlier = waiting_run(root)
    replaced = earlier is not None and (earlier[0] / ANSWER_FILE).exists()
    try:
        run_dir, record = write_answer(root, text)
    except ConfigError as exc:
        parked = _stop_hook_question(directory)
        raise ConfigError(f"{exc}; {parked}" if parked else str(exc)) from exc
    verb = "replaced the earlier answer to" if replaced else "answered"
    typer.echo(f"{verb} run {record.run_id}: {run_dir / 'answer.md'}")
    if lock_holder(directory) is None:
        typer.echo(f"go on with: forgeflare loop --resume --dir {directory}")


def _stop_hook_question(directory: Path) -> str:
    """A hint when a Claude Code loop (the stop-hook's state) waits here on a question: its
    answer goes through ``stop-hook answer``, not a run folder. Empty when none does."""
    from forgeflare.stophook import waiting_question

    if waiting_question(directory) is None:
        return ""
    return (
        "a Claude Code loop here waits on a question: answer it with "
        '`forgeflare stop-hook answer "TEXT"` (or /forgeflare:answer in its session)'
    )


def _answer_args(args: list[str], file: Path | None) -> tuple[Path | None, str]:
    """``TEXT`` or ``--file F`` (after an older positional DIR, if any) as (that DIR, text)."""
    if file is not None:
        if len(args) > 1:
            raise ConfigError("answer: give the answer as TEXT or with --file, not both")
        text = read_named_text(file, f"answer --file {file}", error=ConfigError)
        return Path(args[0]) if args else None, text
    if len(args) == 1:
        return None, require_utf8(args[0], "answer", error=ConfigError)
    if len(args) == 2:
        return Path(args[0]), require_utf8(args[1], "answer", error=ConfigError)
    raise ConfigError('answer: expected "TEXT" or --file FILE (and --dir PATH)')


_STOP_HELP = """Ask the running loop to stop after its current iteration.

The loop finishes the iteration, runs the finished hook and ends with finish type stopped
(exit 18). Ctrl+C in the loop's own terminal stops it at once instead.
"""


def _shortcut(loop_cmd: Any, mode_value: str) -> Any:
    """``loop`` with ``--mode`` fixed: the same signature without it."""
    import inspect
    import typing

    signature = inspect.signature(loop_cmd)
    # Resolved types, not the strings of `from __future__ import annotations`: typer reads a
    # `bool` as a flag (a string 'bool' would make `--resume` take a value).
    hints = typing.get_type_hints(loop_cmd, include_extras=True)
    params = [
        p.replace(annotation=hints.get(name, p.annotation))
        for name, p in signature.parameters.items()
        if name != "mode"
    ]

    def shortcut(**kwargs: Any) -> None:
        loop_cmd(mode=mode_value, **kwargs)

    shortcut.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return shortcut
