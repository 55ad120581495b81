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
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import ValidationError

from forgeflare._apiurl import checked_base_url
from forgeflare._completion import (
    BLOCKED_PROMPT,
    COMPLETE_TAG,
    LOOP_COMPLETE_PROMPT,
    completion_signal,
    find_question,
)
from forgeflare._errors import ConfigError
from forgeflare._pricing import price_usd
from forgeflare.disk import AgentReport, Final, read_limited_text
from forgeflare.security import AgentBox
from forgeflare.supervisor.backends._report import IterationReport, Tokens
from forgeflare.supervisor.backends._stream import StreamReport
from forgeflare.trust import TrustItem


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
    "AgentAccount",
    "AgentSettings",
    "Backend",
    "BaseBackend",
    "ChildEnd",
    "CommandBackend",
    "ForgeflareBackend",
    "InitTemplate",
    "LineReader",
    "StreamBackend",
    "backend_names",
    "completion_signal",
    "register_backend",
]

_DEFAULT_API = "https://api.anthropic.com"

REPORT_ENV = "FORGEFLARE_REPORT"
"""Where a ``command`` agent may write its report JSON (``forgeflare schema report``)."""


@dataclass(frozen=True, slots=True)
class AgentAccount:
    """Where a backend's agent finds its API and its credential in the environment."""

    url_vars: tuple[str, ...]
    """Variables naming the API's address, the first set wins."""
    default_url: str
    """The address when none is set."""
    key_vars: tuple[str, ...]
    """Variables holding the credential, the first set names the account."""
    home_var: str = ""
    """A variable naming the agent's login folder: its account when no key is set."""


@dataclass(frozen=True, slots=True)
class InitTemplate:
    """What ``forgeflare init --NAME`` writes for a backend's agent."""

    agent: str
    """The agent ``init --NAME`` sets up, in a few words (its help and listing say it)."""
    own_settings: tuple[str, ...] = ()
    """``[agent]`` keys of the default ``config.toml`` only this agent reads (another agent's
    such keys are left out of its ``config.toml``)."""
    agent_hooks: bool = False
    """The agent runs forgeflare's agent hooks (the Bash guard, the convergence check), so
    ``AGENTS.md`` may promise them."""
    stop_hook: bool = False
    """``init`` also installs ``forgeflare stop-hook`` as the agent's Stop hook (in
    ``.claude/settings.json``, where Claude Code reads it)."""


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
    """How to run one kind of agent: the loop's whole agent side goes through this seam.

    A new backend is one class (subclass :class:`BaseBackend` for the defaults), its reader and
    its tests: every fact forgeflare needs about an agent is a member here, and no module
    outside the backend's own tests its name. Each member's docstring says what a backend
    supplies.
    """

    name: str
    """The name ``[agent] backend`` and ``--backend`` use (and ``init --NAME`` when the
    backend has an :attr:`init` template)."""
    program: ClassVar[str]
    """The agent's executable when ``[agent] command`` names none (``""``: none); a
    ``command`` agent whose executable has this name gets this backend's trust items too."""
    prompt_suffix: str
    """Added to every iteration's prompt (how to say the task is complete), or empty."""
    secret_names: ClassVar[tuple[str, ...]]
    """Secrets the agent's process keeps (the key for its API); every other one is scrubbed."""
    keys_through_fd: ClassVar[bool]
    """The agent reads its keys from the descriptor ``FORGEFLARE_KEY_FD`` names (our own
    agent): none of them is left in its environment, where its children could read them."""
    helper_keys: ClassVar[tuple[str, ...]]
    """Of :attr:`secret_names`, those the agent takes from a one-shot key file (the first set
    goes in it, all leave the environment); :meth:`helper_argv` tells the agent the file."""
    helper_env: ClassVar[Mapping[str, str]]
    """Variables the agent gets when a key goes through the key file."""
    box: ClassVar[AgentBox]
    """Where the agent's tools run: ``bwrap`` (forgeflare's sandbox, our agent), ``env`` (the
    agent runs as it is and is told the sandbox in ``FORGEFLARE_SANDBOX``) or ``own`` (it
    runs its own tools, outside forgeflare's sandbox)."""
    account: ClassVar[AgentAccount | None]
    """Where the agent finds its API and credential in the environment: a usage window is
    keyed by them. ``None``: no known endpoint or account."""
    overshoot: ClassVar[str]
    """How far past ``[limits] max_cost`` a run of this agent can end, in words (the summary
    of a ``budget`` finish says it)."""
    init: ClassVar[InitTemplate | None]
    """What ``forgeflare init --NAME`` writes for this agent; ``None``: no such option."""

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

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        """Offline facts of ``env`` and ``argv`` that make every iteration fail, one line each
        with its fix (``root``: the loop runs as root); the loop stops at the first,
        ``forgeflare doctor`` prints them all."""
        ...

    def configured_url(self, env: Mapping[str, str]) -> str:
        """The API address the agent's own config file names (it wins over
        :attr:`account`'s variables), or ``""``."""
        ...

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        """What the agent would read and run from the project (its settings, hooks, servers;
        the files ``[agent] extra_args`` names): they need the user's trust first."""
        ...

    def agent_env(self, env: Mapping[str, str], project: Path) -> dict[str, str]:
        """Variables the agent needs besides ``env`` (its own config, its working folder);
        added last to its environment. ``{}`` for most."""
        ...

    def helper_argv(self, key_file: Path) -> list[str]:
        """Arguments that tell the agent its one-shot key file (see :attr:`helper_keys`)."""
        ...

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        """The agent's command line (``command``: ``[agent] command``; the prompt goes on
        stdin)."""
        ...

    def budget_argv(self, left_usd: float) -> list[str]:
        """Arguments that cap the agent's spend at what the loop has left (none: no cap)."""
        ...

    def requests_argv(self, left: int) -> list[str]:
        """Arguments that cap the agent's requests at what the hour has left (none: no cap)."""
        ...

    def reader(self) -> LineReader:
        """A fresh reader of one iteration's output."""
        ...

    def start_reader(self, *, argv: Sequence[str], env: Mapping[str, str]) -> LineReader:
        """The reader of an iteration whose agent runs ``argv`` in ``env`` (a reader that
        needs them, like Codex's for its model and session files, takes them here; the
        default is :meth:`reader`)."""
        ...

    def report(
        self,
        reader: LineReader,
        end: ChildEnd,
        final: Final | None,
        report_file: Path | None,
    ) -> IterationReport:
        """The iteration's report from its reader, how the agent ended, its ``final`` and the
        report file it may have written."""
        ...


class BaseBackend:
    """The defaults a backend inherits: no secret kept (its keys, once named, in its
    environment), its tools run as they are, no known account, no budget or request flag,
    its command found, nothing to trust, no ``init`` option, and an agent that can commit."""

    program: ClassVar[str] = ""
    secret_names: ClassVar[tuple[str, ...]] = ()
    keys_through_fd: ClassVar[bool] = False
    helper_keys: ClassVar[tuple[str, ...]] = ()
    helper_env: ClassVar[Mapping[str, str]] = {}
    box: ClassVar[AgentBox] = "env"
    account: ClassVar[AgentAccount | None] = None
    overshoot: ClassVar[str] = (
        "one iteration: a command agent's cost is known only from its report at the end"
    )
    init: ClassVar[InitTemplate | None] = None

    deterministic_errors: ClassVar[tuple[str, ...]] = ()
    """Patterns of this agent's error lines that no retry fixes (beside the common ones of
    ``supervisor.agents._deterministic``): such an iteration falls back or ends the loop at once.
    Optional for a backend (not part of :class:`Backend`): none means the common ones."""
    structured_errors: ClassVar[bool] = False
    """The report's ``detail`` is the agent's own error text (not just its last line of
    output): the same text twice is then a failure no retry fixes."""
    demo_api: ClassVar[str | None] = None
    """The mock API ``forgeflare demo --backend`` runs this agent against (``messages`` or
    ``responses``); ``None`` (or a backend without it): no offline demo of this agent."""
    install_hint: ClassVar[str] = ""
    """How to install the agent's CLI, said when the demo does not find it."""
    demo_args: ClassVar[tuple[str, ...]] = ()
    demo_shell_tool: ClassVar[str] = "Bash"
    """The name the agent gives its shell tool: the demo's story calls it so."""
    """More ``forgeflare loop`` arguments the demo gives this agent (e.g. a ``--model`` in the
    agent's own spelling)."""

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

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        return []

    def configured_url(self, env: Mapping[str, str]) -> str:
        return ""

    def trust_items(self, project: Path, extra_args: str) -> list[TrustItem]:
        return []

    def agent_env(self, env: Mapping[str, str], project: Path) -> dict[str, str]:
        return {}

    def helper_argv(self, key_file: Path) -> list[str]:
        return []

    def start_reader(self, *, argv: Sequence[str], env: Mapping[str, str]) -> LineReader:
        reader: LineReader = getattr(self, "reader")()  # noqa: B009 (a subclass supplies it)
        return reader


@dataclass
class _PlainBackend(BaseBackend):
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
    keys_through_fd: ClassVar[bool] = True
    box: ClassVar[AgentBox] = "bwrap"
    account: ClassVar[AgentAccount | None] = AgentAccount(
        ("ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL"),
        _DEFAULT_API,
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    )
    overshoot: ClassVar[str] = "$0: each request's worst case is checked before it is sent"

    def preflight(self, project: Path, argv: list[str], env: Mapping[str, str]) -> None:
        checked_base_url(None, env)  # `notaurl` is a usage error, not a failed request later
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
    def report(self) -> StreamReport: ...


@dataclass
class StreamBackend(BaseBackend):
    """An agent whose JSON event stream on stdout is its report, and that completes by the tag
    (Claude Code, Codex): its reader's ``report()`` gives a :class:`StreamReport`."""

    prompt_suffix: str = _COMPLETE_PROMPT
    secret_names: ClassVar[tuple[str, ...]] = ()
    box: ClassVar[AgentBox] = "own"
    structured_errors: ClassVar[bool] = True
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


def _from_stream(read: StreamReport, end: ChildEnd) -> IterationReport:
    cost = read.cost_usd
    if cost is None:
        cost = price_usd(read.model, read.tokens.model_dump())
    return IterationReport(
        outcome=_ended(end) or read.outcome,
        transient=read.transient,
        stop_reason=read.stop_reason,
        tokens=read.tokens,
        cost_usd=cost,
        resets_at=read.resets_at,
        turns=read.turns,
        session_id=read.session_id,
        model=read.model,
        signal=completion_signal(read.final_text),
        question=find_question(read.final_text) or read.question,
        detail=read.detail,
    )


BACKENDS: dict[str, type[Backend]] = {}
"""Backends by the name ``[agent] backend`` uses: the one registry (:func:`register_backend`)."""

_B = TypeVar("_B", bound=type)


def _members() -> tuple[str, ...]:
    """Every member of the :class:`Backend` protocol: what a backend class must supply."""
    names = set(Backend.__annotations__)
    names |= {n for n in vars(Backend) if not n.startswith("_")}
    return tuple(sorted(names))


def register_backend(cls: _B) -> _B:
    """Add a backend class to :data:`BACKENDS` under its ``name`` (a class decorator).

    The config's ``[agent] backend``, ``--backend``, the fleet file's ``backend``, ``init``
    and the loop all take their names from here: a backend defined anywhere is usable once
    registered. Raises ``TypeError`` naming what a class lacks of the :class:`Backend`
    protocol (subclass :class:`BaseBackend` for the defaults).
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__}: a backend needs a class-level `name`")
    missing = [member for member in _members() if not hasattr(cls, member)]
    if missing:
        raise TypeError(
            f"backend {name!r} ({cls.__name__}) lacks {', '.join(missing)}: subclass "
            "BaseBackend for the defaults"
        )
    BACKENDS[name] = cls
    return cls


_StreamBackend = StreamBackend
"""The name this class had before it was public (backends written against it still load)."""


def backend_names() -> tuple[str, ...]:
    """Every registered backend's name, sorted."""
    return tuple(sorted(BACKENDS))


for _builtin in (ForgeflareBackend, CommandBackend):
    register_backend(_builtin)
