"""``forgeflare run``: the agent on one task (or interactively)."""

from __future__ import annotations

import os
from pathlib import Path

import trio
import typer

from forgeflare._cliopts import PassEnv, TrustProject
from forgeflare._errors import ConfigError
from forgeflare.agent._run import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    RunOptions,
    prompt_source,
    run_agent,
)
from forgeflare.agent.tools._types import ALLOW_PATHS_ENV
from forgeflare.platform import become_subreaper
from forgeflare.security import SANDBOX_ENV, pass_env_from, scrub_environment

__all__ = ["register"]

_HELP = """\
Run the coding agent on a task.

The prompt comes from the argument, else from piped stdin (one prompt, then exit), else from an
interactive prompt (exit with Ctrl+D or `exit`). The model's text goes to stdout; one tagged
line per tool call, result, block and API response goes to stderr, with the output of Bash
commands as they run.

Hooks come from .forgeflare/hooks.toml (or --hooks), Python hooks from --hooks-module and from
installed packages (entry point group `forgeflare.hooks`). The turn's end is always recorded in
.forgeflare/convergence.json (`final`), the transcript in .entire/metadata/<session-id>/.

Exit status: 0 end_turn or convergence_signal; 1 internal error; 2 bad usage or
configuration (unknown option, bad hooks.toml, missing API key, untrusted project hooks:
see `forgeflare trust`); 3 api_error;
4 iteration_limit (50 tool iterations); 5 continuation_cap; 6 block_limit_consecutive or
block_limit_total; 7 rate_limited (a usage limit beyond the 60 s retry cap: `final.resets_at`
says when it resets); 8 refusal (the model refused); 9 budget (--max-cost spent);
130 interrupted (SIGINT); 143 terminated (SIGTERM).
"""


def run(
    prompt: str | None = typer.Argument(None, help="The task. Omit to read stdin."),
    model: str = typer.Option(DEFAULT_MODEL, "--model", help="Model name sent to the API."),
    max_tokens: int = typer.Option(
        DEFAULT_MAX_TOKENS, "--max-tokens", min=1, help="max_tokens of each API request."
    ),
    api_url: str | None = typer.Option(
        None,
        "--api-url",
        help="API base URL. Default: ANTHROPIC_API_URL, then ANTHROPIC_BASE_URL, "
        "then https://api.anthropic.com.",
    ),
    cwd: Path = typer.Option(
        Path("."), "--dir", "--cwd", help="Project directory the tools work in."
    ),
    hooks: Path | None = typer.Option(
        None, "--hooks", help="hooks.toml to use instead of .forgeflare/hooks.toml."
    ),
    hooks_module: list[str] = typer.Option(
        [], "--hooks-module", help="Import a Python module that registers hooks (repeatable)."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Also show the resolved API URL and how each turn ended."
    ),
    allow_path: list[Path] = typer.Option(
        [],
        "--allow-path",
        metavar="DIR",
        help="Let Read, Glob, Grep and Edit use this directory outside the project too.",
    ),
    sandbox: bool = typer.Option(
        False,
        "--sandbox",
        help="Run Bash commands under bubblewrap: read-only but for the project, its git dir, "
        "a private /tmp and the package caches (loops do this by default).",
    ),
    sandbox_network: bool = typer.Option(
        False, "--sandbox-network", help="With --sandbox: allow network access."
    ),
    pass_env: PassEnv = None,
    max_cost: float = typer.Option(
        None,
        "--max-cost",
        min=0,
        metavar="USD",
        help="End the turn once its requests cost this much at list prices (exit 9, budget).",
    ),
    max_requests: int = typer.Option(
        None,
        "--max-requests",
        min=0,
        help="Send at most N requests, then end as rate_limited (exit 7): the loop passes what "
        "is left of [limits] max_requests_per_hour.",
    ),
    trust_project: TrustProject = False,
) -> None:
    if hooks is not None and not hooks.is_file():
        # Named on purpose: running without them would silently drop the user's guards.
        raise ConfigError(f"--hooks {hooks}: no such file")
    env = _agent_environment(allow_path, sandbox, sandbox_network, pass_env or [])
    options = RunOptions(
        env=env,
        cwd=cwd,
        model=model,
        max_tokens=max_tokens,
        api_url=api_url,
        verbose=verbose,
        hooks_file=hooks,
        hooks_modules=tuple(hooks_module),
        trust_project=trust_project,
        max_cost=max_cost,
        max_requests=max_requests,
    )
    # The CLI's own process, as `forgeflare loop` does: orphans of the tools and hooks (a
    # guard's `sleep &` moved to a session of its own) adopt this process and are ended with
    # their command.
    become_subreaper()
    code = trio.run(run_agent, options, prompt_source(prompt))
    raise typer.Exit(code)


def _agent_environment(
    allow_path: list[Path], sandbox: bool, sandbox_network: bool, pass_env: list[str]
) -> dict[str, str]:
    """The agent's own environment (its key kept); this process's is left without secrets."""
    if allow_path:
        extra = os.pathsep.join(str(p.resolve()) for p in allow_path)
        known = os.environ.get(ALLOW_PATHS_ENV)
        os.environ[ALLOW_PATHS_ENV] = f"{known}{os.pathsep}{extra}" if known else extra
    if sandbox or sandbox_network:
        os.environ[SANDBOX_ENV] = "network" if sandbox_network else "1"
    env = dict(os.environ)
    # Hooks and Bash commands inherit this process's environment: the agent keeps its key in
    # `env` (and in memory), its children get no secret-looking variable unless passed.
    scrub_environment(os.environ, pass_env_from(env, pass_env))
    return env


def register(app: typer.Typer) -> None:
    """Add ``run``."""
    app.command("run", help=_HELP)(run)
