"""Agent backends: how to start an agent and read what it did into a report.

A backend is one class (the :class:`Backend` protocol): it builds the argv (the prompt goes on
stdin), names the secrets its agent keeps, checks what would make every iteration fail before
anything starts, names the project files its agent would run (trust items), turns each line of
the agent's output into what the terminal shows (the raw line always goes to the iteration
log), and builds the :class:`IterationReport` from the reader, how the process ended, the
agent's ``final`` and an optional report file. :func:`register_backend` adds it to
:data:`BACKENDS`, the one registry every list of backend names is derived from.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import ValidationError

from forgeflare._completion import (
    BLOCKED_PROMPT,
    COMPLETE_TAG,
    LOOP_COMPLETE_PROMPT,
    completion_signal,
    find_question,
)
from forgeflare._convergence import AgentReport, Final
from forgeflare._errors import ConfigError
from forgeflare._pricing import price_usd
from forgeflare._readfile import read_limited_text
from forgeflare.supervisor.backends._claude import ClaudeStreamReader
from forgeflare.supervisor.backends._codex import CodexStreamReader
from forgeflare.supervisor.backends._report import IterationReport, Tokens


class AgentSettings(Protocol):
    """What a backend reads of ``[agent]`` (the config's ``AgentSection``)."""

    @property
    def permission_mode(self) -> str: ...
    @property
    def final_required(self) -> str: ...


__all__ = [
    "BACKENDS",
    "COMPLETE_TAG",
    "REPORT_ENV",
    "AgentSettings",
    "Backend",
    "ChildEnd",
    "ClaudeBackend",
    "CodexBackend",
    "CommandBackend",
    "ForgeflareBackend",
    "LineReader",
    "backend_names",
    "completion_signal",
    "register_backend",
]

_DEFAULT_API = "https://api.anthropic.com"

REPORT_ENV = "FORGEFLARE_REPORT"
"""Where a ``command`` agent may write its report JSON (``forgeflare schema report``)."""


@dataclass(frozen=True)
class ChildEnd:
    """How the agent process ended, as the loop saw it."""

    exit_code: int | None
    """The exit status; ``None`` when a signal or the supervisor ended it."""
    timed_out: bool = False
    stopped: bool = False
    """Ended by Ctrl+C / SIGTERM of the loop."""
    signalled: bool = False
    """Killed by a signal the loop did not send."""


class LineReader(Protocol):
    """Reads an agent's output line by line."""

    def feed(self, line: str) -> list[str]:
        """One line of output in; the lines to show for it out."""
        ...


class _RawReader:
    """Shows each line as it is (the own agent's output is already for people), and keeps the
    last non-blank one: the agent's own words when it fails."""

    last_line: str = ""

    def feed(self, line: str) -> list[str]:
        shown = line.rstrip("\n")
        if shown.strip():
            self.last_line = shown.strip()
        return [shown]


def _ended(end: ChildEnd) -> str | None:
    if end.timed_out:
        return "timed_out"
    if end.stopped:
        return "interrupted"
    if end.signalled:
        return "killed"
    return None


_FINAL_OUTCOMES = {
    "api_error": "api_error",
    "rate_limited": "rate_limited",
    "refusal": "refused",
    "budget": "budget",
    "interrupted": "interrupted",
}


def _report_file(path: Path | None) -> IterationReport | None:
    if path is None:
        return None
    try:
        return IterationReport.model_validate(json.loads(read_limited_text(path)))
    except (OSError, ValueError, ValidationError):
        return None


_COMPLETE_PROMPT = LOOP_COMPLETE_PROMPT + BLOCKED_PROMPT


def _found(project: Path, argv: list[str], env: Mapping[str, str], backend: str) -> None:
    """The agent command exists (on ``PATH`` or in the project)."""
    if not argv:
        raise ConfigError("[agent] command is empty: set it, or choose another backend")
    if shutil.which(argv[0], path=env.get("PATH")) is None and not (project / argv[0]).is_file():
        raise ConfigError(
            f"agent command {argv[0]!r} ({backend} backend): not found on PATH; install it or "
            "set [agent] command / --agent-cmd"
        )


def _with_model(argv: list[str], model: str, extra: list[str]) -> list[str]:
    return [*argv, *(["--model", model] if model else []), *extra]


class Backend(Protocol):
    """How to run one kind of agent: the loop's whole agent side goes through this seam."""

    name: str
    """The name ``[agent] backend`` and ``--backend`` use."""
    prompt_suffix: str
    """Added to every iteration's prompt (how to say the task is complete), or empty."""
    secret_names: ClassVar[tuple[str, ...]]
    """Secrets the agent's process keeps (the key for its API); every other one is scrubbed."""

    @property
    def commits_itself(self) -> bool:
        """The agent can run ``git commit`` where it runs (else only the loop's checkpoint
        delivers its work)."""
        ...

    def configure(self, agent: AgentSettings) -> None:
        """Take this backend's settings from ``[agent]`` (the loop builds one instance)."""
        ...

    def preflight(self, project: Path, argv: list[str], env: Mapping[str, str]) -> None:
        """Raise ``ConfigError`` (one line) for what would make every iteration fail."""
        ...

    def trust_files(self, project: Path) -> list[Path]:
        """Project files this backend's agent would read and run (they need the user's trust)."""
        ...

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]: ...

    def budget_argv(self, left_usd: float) -> list[str]:
        """Arguments that cap the agent's spend at what the loop has left (none: no cap)."""
        ...

    def requests_argv(self, left: int) -> list[str]:
        """Arguments that cap the agent's requests at what the hour has left (none: no cap)."""
        ...

    def reader(self) -> LineReader: ...

    def report(
        self,
        reader: LineReader,
        end: ChildEnd,
        final: Final | None,
        report_file: Path | None,
    ) -> IterationReport: ...


class _Base:
    """What every built-in backend shares: no budget flag, its command found, no trust files,
    and an agent that can commit."""

    deterministic_errors: ClassVar[tuple[str, ...]] = ()
    """Patterns of this agent's error lines that no retry fixes (beside the common ones of
    ``supervisor._deterministic``): such an iteration falls back or ends the loop at once.
    Optional for a backend (not part of :class:`Backend`): none means the common ones."""
    structured_errors: ClassVar[bool] = False
    """The report's ``detail`` is the agent's own error text (not just its last line of
    output): the same text twice is then a failure no retry fixes."""
    demo_api: ClassVar[str | None] = None
    """The mock API ``forgeflare demo --backend`` runs this agent against (``messages`` or
    ``responses``); ``None`` (or a backend without it): no offline demo of this agent."""
    install_hint: ClassVar[str] = ""
    """How to install the agent's CLI, said when the demo does not find it."""

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """What the agent needs in its environment to work against the demo's mock at ``url``
        (files it needs are written under ``scratch``)."""
        return {}

    @property
    def commits_itself(self) -> bool:
        return True

    def budget_argv(self, left_usd: float) -> list[str]:
        return []

    def requests_argv(self, left: int) -> list[str]:
        return []

    def configure(self, agent: AgentSettings) -> None:
        return None

    def preflight(self, project: Path, argv: list[str], env: Mapping[str, str]) -> None:
        _found(project, argv, env, getattr(self, "name", "command"))

    def trust_files(self, project: Path) -> list[Path]:
        return []


@dataclass
class _PlainBackend(_Base):
    """An agent whose output is for people (shown as it is) and that has no completion tag."""

    final_required: bool = False
    """``[agent] final_required``: the agent always writes ``convergence.json``'s ``final``, so
    an iteration without one is an ``agent_error`` even when it exited 0."""
    prompt_suffix: str = ""
    secret_names: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")

    def reader(self) -> LineReader:
        return _RawReader()

    def configure(self, agent: AgentSettings) -> None:
        if agent.final_required != "auto":  # auto: the class's own (yes for forgeflare only)
            self.final_required = agent.final_required == "yes"


@dataclass
class ForgeflareBackend(_PlainBackend):
    """Our own agent: ``python -P -m forgeflare run``; it reports through ``final``.

    ``-P``: the agent runs with the project as its working directory, and ``-m`` would put that
    directory first on ``sys.path`` (a committed ``trio.py`` would be imported instead of trio).
    """

    name: str = "forgeflare"
    final_required: bool = True
    structured_errors: ClassVar[bool] = True  # its final's detail is the API's error
    prompt_suffix: str = BLOCKED_PROMPT
    """The model is told how to ask a question (it completes through ``final``, no tag)."""
    secret_names: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

    def preflight(self, project: Path, argv: list[str], env: Mapping[str, str]) -> None:
        url = (env.get("ANTHROPIC_API_URL") or env.get("ANTHROPIC_BASE_URL") or "").strip()
        if not env.get("ANTHROPIC_API_KEY") and (not url or url.rstrip("/") == _DEFAULT_API):
            raise ConfigError(
                "ANTHROPIC_API_KEY is not set: every iteration would fail; export it, or point "
                "ANTHROPIC_API_URL at another endpoint (e.g. `forgeflare mock-api`)"
            )
        from forgeflare.hooks import HOOKS_RELPATH, load_hooks_file

        load_hooks_file(project / HOOKS_RELPATH)

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        return _with_model([python, "-P", "-m", "forgeflare", "run"], model, extra)

    def budget_argv(self, left_usd: float) -> list[str]:
        return ["--max-cost", f"{max(0.0, left_usd):.6f}"]

    def requests_argv(self, left: int) -> list[str]:
        return ["--max-requests", str(max(0, left))]

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        outcome = _ended(end)
        if final is None:
            if not self.final_required:
                return _by_exit_status(end, outcome)
            return IterationReport(outcome=outcome or "agent_error", detail="no final written")
        tokens = final.tokens or Tokens(output=final.total_tokens)
        return IterationReport(
            outcome=outcome or _FINAL_OUTCOMES.get(final.reason, "ok"),
            transient=bool(final.transient) and final.reason == "api_error",
            stop_reason=final.reason,
            signal=final.signal,
            tokens=tokens,
            turns=final.requests,
            **final.model_dump(include=set(AgentReport.model_fields)),
        )


@dataclass
class CommandBackend(_PlainBackend):
    """Any command, prompt on stdin; judged by its exit status, or by its report file."""

    name: str = "command"

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        return shlex.split(command) + extra

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        outcome = _ended(end)
        written = _report_file(report_file)
        if written is not None:
            if outcome is not None:
                written = written.model_copy(update={"outcome": outcome})
            if written.cost_usd is None:
                cost = price_usd(written.model, written.tokens.model_dump())
                written = written.model_copy(update={"cost_usd": cost})
            return written
        if final is not None or self.final_required:  # an agent that writes final like ours
            return ForgeflareBackend(final_required=self.final_required).report(
                reader, end, final, None
            )
        return _by_exit_status(end, outcome, getattr(reader, "last_line", ""))


def _by_exit_status(end: ChildEnd, outcome: str | None, last_line: str = "") -> IterationReport:
    """The report of an agent that wrote none: its exit status decides; a failed one's last
    line of output is its ``detail``."""
    if outcome is not None:
        return IterationReport(outcome=outcome)
    good = end.exit_code == 0
    return IterationReport(
        outcome="ok" if good else "agent_error",
        stop_reason=None if good else f"exit {end.exit_code}",
        detail=None if good else last_line[:300] or None,
    )


@runtime_checkable
class _StreamReader(LineReader, Protocol):
    def report(self) -> dict[str, Any]: ...


@dataclass
class _StreamBackend(_Base):
    """An agent whose JSON event stream on stdout is its report, and that completes by the tag."""

    prompt_suffix: str = _COMPLETE_PROMPT
    secret_names: ClassVar[tuple[str, ...]] = ()
    structured_errors: ClassVar[bool] = True
    program: ClassVar[str]
    """The command when ``[agent] command`` names none."""
    args: ClassVar[tuple[str, ...]]
    last: ClassVar[tuple[str, ...]] = ()

    def options(self) -> list[str]:
        """This backend's own settings as arguments."""
        return []

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        argv = [*(shlex.split(command) if command else [self.program]), *self.args, *self.options()]
        return [*_with_model(argv, model, extra), *self.last]

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        assert isinstance(reader, _StreamReader), "a stream backend reads with its own reader"
        return _from_stream(reader.report(), end)


@dataclass
class ClaudeBackend(_StreamBackend):
    """Claude Code headless: ``claude -p --output-format stream-json --verbose``."""

    name: str = "claude"
    secret_names: ClassVar[tuple[str, ...]] = (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    )
    permission_mode: str = "bypassPermissions"
    program: ClassVar[str] = "claude"
    deterministic_errors: ClassVar[tuple[str, ...]] = (
        r"--dangerously-skip-permissions",
        r"please run /login",
    )
    args: ClassVar[tuple[str, ...]] = ("-p", "--output-format", "stream-json", "--verbose")

    def configure(self, agent: AgentSettings) -> None:
        self.permission_mode = agent.permission_mode

    def options(self) -> list[str]:
        return ["--permission-mode", self.permission_mode] if self.permission_mode else []

    def budget_argv(self, left_usd: float) -> list[str]:
        # Claude Code checks it between API requests: one request can still pass it.
        return ["--max-budget-usd", f"{max(0.0, left_usd):.6f}"]

    def reader(self) -> LineReader:
        return ClaudeStreamReader()

    demo_api: ClassVar[str | None] = "messages"
    install_hint: ClassVar[str] = "npm install -g @anthropic-ai/claude-code"

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """Claude Code reads ``ANTHROPIC_BASE_URL`` (not ``ANTHROPIC_API_URL``) and a key; as
        root it runs without permission prompts only with ``IS_SANDBOX=1``; its settings go to
        a configuration folder of the demo's own (the user's stay untouched)."""
        config = scratch / "claude-config"
        config.mkdir(parents=True, exist_ok=True)
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "demo-key-offline",
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        return env

    def trust_files(self, project: Path) -> list[Path]:
        """Claude Code runs the hooks, helpers and MCP servers these name."""
        claude = project / ".claude"
        return [claude / "settings.json", claude / "settings.local.json", project / ".mcp.json"]


@dataclass
class CodexBackend(_StreamBackend):
    """Codex: ``codex exec --json`` with the prompt on stdin (``-``)."""

    name: str = "codex"
    secret_names: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY")
    sandbox: str = "workspace-write"
    program: ClassVar[str] = "codex"
    deterministic_errors: ClassVar[tuple[str, ...]] = (
        r"\bbwrap: execvp\b",
        r"codex-linux-sandbox",
        r"\binvalid_api_key\b",
        r"\bmodel_not_found\b",
    )
    args: ClassVar[tuple[str, ...]] = ("exec", "--json", "--skip-git-repo-check")
    last: ClassVar[tuple[str, ...]] = ("-",)
    """The prompt comes on stdin."""

    def options(self) -> list[str]:
        return ["--sandbox", self.sandbox] if self.sandbox else []

    @property
    def commits_itself(self) -> bool:
        # Codex's own sandbox keeps .git read-only (workspace-write) or everything (read-only).
        return self.sandbox not in ("workspace-write", "read-only")

    def reader(self) -> LineReader:
        return CodexStreamReader()

    demo_api: ClassVar[str | None] = "responses"
    install_hint: ClassVar[str] = "npm install -g @openai/codex"

    def demo_env(self, url: str, scratch: Path) -> dict[str, str]:
        """A ``CODEX_HOME`` of the demo's own whose provider is the mock's Responses API, a key
        for it, and a ``TMPDIR`` outside ``CODEX_HOME`` (Codex loses its sandbox helper when
        its temporary files sit in its home)."""
        home, tmp = scratch / "codex-home", scratch / "codex-tmp"
        home.mkdir(parents=True, exist_ok=True)
        tmp.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "demo"\n\n'
            "[model_providers.demo]\n"
            'name = "forgeflare demo"\n'
            f"base_url = {json.dumps(url)}\n"
            'wire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
            "\n[features]\nshell_snapshot = false\n",
            encoding="utf-8",
        )
        return {"CODEX_HOME": str(home), "OPENAI_API_KEY": "demo-key-offline", "TMPDIR": str(tmp)}


def _from_stream(fields: Mapping[str, Any], end: ChildEnd) -> IterationReport:
    outcome = _ended(end) or fields["outcome"]
    tokens = Tokens(**fields["tokens"])
    cost = fields.get("cost_usd")
    if cost is None:
        cost = price_usd(fields.get("model"), tokens.model_dump())
    return IterationReport(
        outcome=outcome,
        transient=bool(fields.get("transient")),
        stop_reason=fields.get("stop_reason"),
        tokens=tokens,
        cost_usd=cost,
        resets_at=fields.get("resets_at"),
        turns=int(fields.get("turns") or 0),
        session_id=fields.get("session_id"),
        model=fields.get("model"),
        signal=completion_signal(str(fields.get("final_text") or "")),
        question=find_question(str(fields.get("final_text") or "")) or fields.get("question"),
        detail=fields.get("detail"),
    )


BACKENDS: dict[str, type[Backend]] = {}
"""Backends by the name ``[agent] backend`` uses: the one registry (:func:`register_backend`)."""

_B = TypeVar("_B", bound=type)


def register_backend(cls: _B) -> _B:
    """Add a backend class to :data:`BACKENDS` under its ``name`` (a class decorator).

    The config's ``[agent] backend``, ``--backend``, the fleet file's ``backend`` and the loop
    all take their names from here: a backend defined anywhere is usable once registered.
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__}: a backend needs a class-level `name`")
    BACKENDS[name] = cls
    return cls


def backend_names() -> tuple[str, ...]:
    """Every registered backend's name, sorted."""
    return tuple(sorted(BACKENDS))


for _builtin in (ForgeflareBackend, CommandBackend, ClaudeBackend, CodexBackend):
    register_backend(_builtin)
