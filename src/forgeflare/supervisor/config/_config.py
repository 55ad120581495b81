"""Supervisor settings: ``.fresher/config.toml``, ``FRESHER_*`` variables and flags.

Precedence, per key: command-line flag > ``FRESHER_*`` environment variable > config.toml >
default. Each key is validated on its own so that a bad value is one line naming the key and
where it came from, e.g. ``FRESHER_MAX_ITERATIONS=abc (environment): not an integer``.
An unknown section is an error and an unknown key a warning, each naming the closest known
name (``[limit]`` is most likely a misspelt ``[limits]``).
"""

from __future__ import annotations

import difflib
import importlib.resources
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import tomli_w
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ByteSize,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

from forgeflare._clock import format_wait
from forgeflare._errors import ConfigError
from forgeflare._words import FALSE_WORDS, TRUE_WORDS, plural
from forgeflare.disk import CONFIG_LIMIT, read_named_text, validation_message
from forgeflare.security import BoxSettings

if TYPE_CHECKING:
    from forgeflare.supervisor.backends import Backend

__all__ = [
    "CONFIG_RELPATH",
    "AgentProfile",
    "AgentSection",
    "BackendName",
    "FinishSection",
    "FresherSection",
    "HooksSection",
    "LimitsSection",
    "LoadedConfig",
    "LoopConfig",
    "NotifySection",
    "PathsSection",
    "SecuritySection",
    "bounds_words",
    "box_settings",
    "default_config_toml",
    "default_prompt",
    "format_duration",
    "known_backend",
    "load_config",
    "parse_duration",
    "parse_on_blocked",
]

CONFIG_RELPATH = Path(".fresher") / "config.toml"

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: object) -> float:
    """Seconds from ``90s``, ``15m``, ``2h``, ``500ms``, ``1d`` or plain (float) seconds."""
    if isinstance(value, bool):
        # ValueError, not TypeError: pydantic turns only ValueError into a validation error.
        raise ValueError("not a duration (like 90s, 15m, 2h or seconds)")  # noqa: TRY004
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("not a duration: must not be negative")
        return float(value)
    if isinstance(value, str):
        match = _DURATION_RE.match(value)
        if match:
            return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    raise ValueError("not a duration (like 90s, 15m, 2h or seconds)")


def known_backend(name: str) -> str:
    """``name`` when a backend of that name is registered (the one list of names)."""
    from forgeflare.supervisor.backends import BACKENDS

    if name not in BACKENDS:
        close = difflib.get_close_matches(name, list(BACKENDS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown backend {name!r}{hint}; one of: {', '.join(sorted(BACKENDS))}")
    return name


BackendName = Annotated[str, AfterValidator(lambda name: name and known_backend(name))]
"""A backend's name, checked against the registry (empty: chosen from ``[agent] command``)."""


def format_duration(seconds: float) -> str | int:
    """The shortest spelling of ``seconds`` that :func:`parse_duration` reads back exactly."""
    if seconds == 0:
        return 0
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{seconds}s"


Duration = Annotated[float, BeforeValidator(parse_duration)]
"""Seconds; written in files and variables as ``90s``, ``15m``, ``2h`` or plain seconds."""


def bounds_words(config: LoopConfig, backend: str, fallbacks: Sequence[str] = ()) -> str:
    """Every bound of the night in one line (the start banner says the same)."""
    limits = config.limits
    n = config.fresher.max_iterations
    most = plural(n, "iteration") if n else "unlimited iterations"
    runtime = format_wait(limits.max_runtime) if limits.max_runtime else "unlimited"
    cost = f"${limits.max_cost:g}" if limits.max_cost else "no cost cap"
    timeout = format_wait(limits.iteration_timeout) if limits.iteration_timeout else "none"
    return (
        f"{most}, runtime {runtime}, {cost}, iteration timeout {timeout}, agent {backend}"
        + "".join(f", then {label}" for label in fallbacks)
    )


def parse_on_blocked(value: object) -> float | None:
    """``None`` for ``"stop"``; the seconds to wait for ``"wait:DURATION"``.

    Raises ``ValueError`` (one line) for anything else.
    """
    if not isinstance(value, str):
        raise ValueError('expected "stop" or "wait:DURATION" (like "wait:30m")')  # noqa: TRY004
    text = value.strip()
    if text == "stop":
        return None
    kind, _, duration = text.partition(":")
    if kind.strip() != "wait" or not duration.strip():
        raise ValueError(f'{value!r}: expected "stop" or "wait:DURATION" (like "wait:30m")')
    try:
        return parse_duration(duration.strip())
    except ValueError as exc:
        raise ValueError(f"{value!r}: {exc}") from None


def _on_blocked(value: object) -> object:
    parse_on_blocked(value)
    return value.strip() if isinstance(value, str) else value


OnBlocked = Annotated[str, BeforeValidator(_on_blocked)]
"""``"stop"`` or ``"wait:DURATION"``."""


def _parse_bool(value: object) -> object:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in TRUE_WORDS:
            return True
        if low in FALSE_WORDS:
            return False
        raise ValueError("not a boolean (true or false)")
    return value


Bool = Annotated[bool, BeforeValidator(_parse_bool)]
NonNegInt = Annotated[int, Field(ge=0)]
NonNegFloat = Annotated[float, Field(ge=0)]


def _shell_words(value: str) -> str:
    try:
        shlex.split(value)
    except ValueError as exc:
        raise ValueError(f"not a command line ({exc})") from exc
    return value


ShellWords = Annotated[str, AfterValidator(_shell_words)]
PositiveInt = Annotated[int, Field(ge=1)]


class _Section(BaseModel):
    # Field descriptions feed default_config_toml, --help and the reference pages.
    model_config = ConfigDict(defer_build=True, extra="ignore")


class FresherSection(_Section):
    """``[fresher]``: what the loop does."""

    mode: Literal["planning", "building"] = Field(
        "building",
        description="Loop mode: planning writes IMPLEMENTATION_PLAN.md, building works through it.",
    )
    max_iterations: NonNegInt = Field(
        50, description="Stop after this many iterations (0 = unlimited, explicitly)."
    )
    smart_termination: Bool = Field(
        True,
        description="Stop with no_changes when an iteration makes no commit and no work-tree "
        "change (git).",
    )
    model: str = Field(
        "",
        description="Model passed to the default agent as --model (empty = the agent's default).",
    )
    checkpoint: Literal["commit", "warn", "off"] = Field(
        "commit",
        description="After every iteration: commit what the agent left uncommitted (commit), only "
        "say so (warn), or neither (off). A claim completes only on a clean work tree either way.",
    )


class PathsSection(_Section):
    """``[paths]``: where things are, relative to the project directory."""

    log_dir: str = Field(
        ".fresher/runs",
        description="Run records go in <log_dir>/<run-id>/ (that folder is FRESHER_LOG_DIR in "
        "hooks).",
    )
    spec_dir: str = Field(
        "specs", description="Directory of specifications (the built-in prompts name it)."
    )
    plan_file: str = Field(
        "IMPLEMENTATION_PLAN.md",
        description="The plan (the built-in prompts name it); in building mode no unchecked "
        "'- [ ]' left means complete.",
    )
    hooks_dir: str = Field(
        ".fresher/hooks",
        description="Lifecycle hooks started, next_iteration, finished (custom/ is never run by "
        "itself).",
    )


class HooksSection(_Section):
    """``[hooks]``: lifecycle hooks."""

    enabled: Bool = Field(True, description="Run lifecycle hooks at all.")
    timeout: Duration = Field(
        30.0, description="Kill a hook's process group after this long; counts as exit 124."
    )
    fail_behavior: Literal["continue", "abort"] = Field(
        "continue",
        description="On a hook error (exit 3+ or timeout): continue, or abort the loop as "
        "hook_abort.",
    )
    started_enabled: Bool = Field(True, description="Run the started hook.")
    next_iteration_enabled: Bool = Field(True, description="Run the next_iteration hook.")
    finished_enabled: Bool = Field(True, description="Run the finished hook.")


def _spec(text: str) -> str:
    """``BACKEND[:PROFILE]`` with a registered backend."""
    from forgeflare.supervisor.agents._fallback import parse_agent_spec

    return known_backend(parse_agent_spec(text).backend) and text.strip()


def _list(value: object) -> object:
    """A list, or comma separated words (from a ``FRESHER_*`` variable)."""
    if isinstance(value, str):
        return [w.strip() for w in value.split(",") if w.strip()]
    return value


AgentSpecText = Annotated[str, AfterValidator(_spec)]


class AgentProfile(BaseModel):
    """``[agent.profiles.NAME]``: one account or setup of a backend."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    env: dict[str, str] = Field(
        default_factory=dict,
        description="Variables set in this agent's environment (e.g. CLAUDE_CONFIG_DIR, "
        "CODEX_HOME).",
    )
    command: ShellWords = Field(
        "", description="The command (or executable) of this profile, instead of [agent] command."
    )
    model: str = Field("", description="The model of this profile, instead of [fresher] model.")
    monthly_credit: NonNegFloat = Field(
        0.0,
        description="USD this profile may spend per calendar month (UTC), summed from this "
        "project's run records at list prices; spent, it is out until the 1st (0 = no credit).",
    )


class AgentSection(_Section):
    """``[agent]``: the agent started each iteration."""

    backend: BackendName = Field(
        "",
        description="Agent backend: forgeflare, claude, codex, command or a registered one (empty: "
        "command when [agent] command is set, else forgeflare).",
    )
    command: ShellWords = Field(
        "",
        description="Agent command line, prompt on stdin (with backend claude/codex: the "
        "executable).",
    )
    permission_mode: str = Field(
        "bypassPermissions", description="Claude Code's --permission-mode (backend claude)."
    )
    extra_args: ShellWords = Field(
        "", description="More arguments appended to the agent's command line (shell words)."
    )
    final_required: Literal["auto", "yes", "no"] = Field(
        "auto",
        description="Does the agent always write convergence.json final? auto: yes for the default "
        "agent.",
    )
    kill_grace: Duration = Field(
        10.0, description="After TERM, wait this long before KILL (timeouts and Ctrl+C)."
    )
    fallback: Annotated[list[AgentSpecText], BeforeValidator(_list)] = Field(
        default_factory=list,
        description="Agents (BACKEND[:PROFILE]) to run while the primary is out of its usage "
        "window.",
    )
    fallback_after: Duration = Field(
        900.0,
        description="Switch to a fallback only when the primary's window resets further away than "
        "this.",
    )
    profiles: dict[str, AgentProfile] = Field(
        default_factory=dict,
        description="Named profiles, [agent.profiles.NAME] (env, command, model, monthly_credit).",
    )


class LimitsSection(_Section):
    """``[limits]``: when the loop gives up."""

    max_runtime: Duration = Field(
        36000.0,
        description="Wall-clock limit of the whole loop, finish type timeout (0 = unlimited, "
        "explicitly).",
    )
    max_cost: NonNegFloat = Field(
        0.0,
        description="Spend limit in USD, checked before each iteration and passed to the agent; "
        "finish type budget (0 = no cost cap).",
    )
    monthly_credit: NonNegFloat = Field(
        0.0,
        description="USD the primary agent may spend per calendar month (UTC), summed from this "
        "project's run records; once spent, the loop falls back or waits until the 1st (0 = none).",
    )
    max_requests_per_hour: NonNegInt = Field(
        0,
        description="Model requests the own agent and the reviewer may send in any hour, counted "
        "from the run's rows; once used, the loop waits as for a usage window and never finishes "
        "for it (0 = no limit).",
    )
    max_outage: Duration = Field(
        7200.0,
        description="Keep waiting out transient API failures (529, 5xx) this long, then finish "
        "error.",
    )
    gate: str = Field(
        "", description="A command that must pass (exit 0) before the loop may finish complete."
    )
    iteration_timeout: Duration = Field(
        3600.0,
        description="Kill an iteration's agent after this long; an error iteration (0 = no limit).",
    )
    max_consecutive_errors: PositiveInt = Field(
        3, description="Finish with error after this many error iterations in a row."
    )
    error_pause: Duration = Field(
        30.0, description="Pause after an error iteration before the next one."
    )
    stuck_after: PositiveInt = Field(
        3, description="Finish with stuck after this many block_limit iterations in a row."
    )
    max_skips: PositiveInt = Field(
        3,
        description="Finish with skips after next_iteration skipped this many iterations in a row.",
    )
    on_blocked: OnBlocked = Field(
        "stop",
        description='When the agent asks a question: "stop" (finish blocked) or "wait:DURATION" '
        "(wait that long for `forgeflare answer`, then go on, else finish blocked).",
    )
    stall_after: NonNegInt = Field(
        4,
        description="Finish with stalled after this many iterations in a row without progress (no "
        "plan box checked, the same gate failures; 0 = off). With a gate, the gate runs every "
        "iteration.",
    )


class FinishSection(_Section):
    """``[finish]``: who else must agree before the loop finishes complete."""

    reviewer: str = Field(
        "", description="A model that judges each claim the gate passed (empty = no reviewer)."
    )
    reviewer_max_diff: ByteSize = Field(
        ByteSize(60_000),
        description="The most of the run's diff the reviewer sees (the rest is listed as cut).",
    )


def _names(value: object) -> object:
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    return value


Names = Annotated[list[str], BeforeValidator(_names)]


class SecuritySection(_Section):
    """``[security]``: what children of the loop may see."""

    pass_env: Names = Field(
        default_factory=list,
        description="Secret-looking variables (*_API_KEY, *_TOKEN, ...) passed to hooks and tools "
        "anyway.",
    )
    allow_paths: Names = Field(
        default_factory=list,
        description="Directories outside the project the own agent's file tools may use.",
    )
    sandbox: Literal["auto", "bwrap", "off"] = Field(
        "auto",
        description="The own agent's Bash commands under bubblewrap (project writable, rest "
        "read-only): auto (when bubblewrap works, else a notice), bwrap (required), off.",
    )
    sandbox_network: Bool = Field(
        True, description="In the sandbox: network access (false: a network namespace of its own)."
    )
    writable: Names = Field(
        default_factory=list,
        description="More directories the sandbox keeps writable (besides the project, its git "
        "dir, /tmp and the package caches); relative to the project, ~ expanded.",
    )
    readable: Names = Field(
        default_factory=list,
        description="Paths under the hidden ~ the sandbox shows read-only (e.g. "
        "~/.m2/settings.xml); relative to the project, ~ expanded. Loosens: a trust item.",
    )
    sockets: Names = Field(
        default_factory=list,
        description="Host unix sockets the sandbox lets in (e.g. /run/docker.sock); ~ expanded.",
    )

    def box(self) -> BoxSettings:
        """The keys a gate's box reads."""
        return BoxSettings(
            sandbox=self.sandbox,
            network=self.sandbox_network,
            writable=tuple(self.writable),
            sockets=tuple(self.sockets),
            readable=tuple(self.readable),
        )


class NotifySection(_Section):
    """``[notify]``: a message when the loop ends (URLs live in your config directory)."""

    command: str = Field(
        "", description="A command run with the run summary as JSON on stdin (empty = none)."
    )
    on: str = Field(
        "finish,blocked",
        description="When to notify, comma separated: finish, blocked, limit_wait, outage, "
        "error_streak.",
    )


class LoopConfig(BaseModel):
    """The whole of ``.fresher/config.toml``."""

    model_config = ConfigDict(defer_build=True)

    fresher: FresherSection = Field(default_factory=FresherSection)
    paths: PathsSection = Field(default_factory=PathsSection)
    hooks: HooksSection = Field(default_factory=HooksSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    limits: LimitsSection = Field(default_factory=LimitsSection)
    finish: FinishSection = Field(default_factory=FinishSection)
    notify: NotifySection = Field(default_factory=NotifySection)
    security: SecuritySection = Field(default_factory=SecuritySection)

    @property
    def backend_name(self) -> str:
        """The backend: as configured, else command when a command is set, else forgeflare."""
        if self.agent.backend:
            return self.agent.backend
        return "command" if self.agent.command.strip() else "forgeflare"

    def backend(self) -> Backend:
        """The configured backend, with its settings (the loop builds this one instance)."""
        from forgeflare.supervisor.backends import BACKENDS

        backend = BACKENDS[self.backend_name]()
        backend.configure(self.agent)
        return backend

    def agent_argv(
        self, python: str, backend: Backend | None = None, profile: str = ""
    ) -> list[str]:
        """The agent command as argv (``python`` runs the default agent); ``profile``'s
        command and model replace ``[agent] command`` and ``[fresher] model``."""
        backend = backend or self.backend()
        prof = self.agent.profiles.get(profile) if profile else None
        return backend.argv(
            python=python,
            model=(prof and prof.model) or self.fresher.model,
            command=(prof and prof.command) or self.agent.command,
            extra=shlex.split(self.agent.extra_args),
        )

    def backend_for(self, name: str) -> Backend:
        """Backend ``name`` (a fallback's), with the ``[agent]`` settings."""
        from forgeflare.supervisor.backends import BACKENDS

        backend = BACKENDS[name]()
        backend.configure(self.agent)
        return backend

    def profile_env(self, profile: str) -> dict[str, str]:
        """The variables ``[agent.profiles.PROFILE] env`` sets in the agent's environment."""
        prof = self.agent.profiles.get(profile) if profile else None
        return dict(prof.env) if prof else {}

    @property
    def final_expected(self) -> bool:
        """Whether a missing ``final`` means the agent crashed (``[agent] final_required``)."""
        if self.agent.final_required == "auto":
            return self.backend_name == "forgeflare"
        return self.agent.final_required == "yes"


_SECTIONS: dict[str, type[BaseModel]] = {
    "fresher": FresherSection,
    "paths": PathsSection,
    "hooks": HooksSection,
    "agent": AgentSection,
    "limits": LimitsSection,
    "finish": FinishSection,
    "notify": NotifySection,
    "security": SecuritySection,
}

_ENV_OVERRIDES: dict[tuple[str, str], str] = {
    ("hooks", "enabled"): "FRESHER_HOOKS_ENABLED",
    ("hooks", "timeout"): "FRESHER_HOOK_TIMEOUT",
    ("hooks", "fail_behavior"): "FRESHER_HOOK_FAIL_BEHAVIOR",
    ("hooks", "started_enabled"): "FRESHER_HOOK_STARTED_ENABLED",
    ("hooks", "next_iteration_enabled"): "FRESHER_HOOK_NEXT_ITERATION_ENABLED",
    ("hooks", "finished_enabled"): "FRESHER_HOOK_FINISHED_ENABLED",
    ("agent", "command"): "FRESHER_AGENT_COMMAND",
}


def env_name(section: str, key: str) -> str:
    """The ``FRESHER_*`` variable that overrides ``[section] key``."""
    if (section, key) in _ENV_OVERRIDES:
        return _ENV_OVERRIDES[(section, key)]
    if section in {"fresher", "paths", "limits"}:
        return f"FRESHER_{key.upper()}"
    return f"FRESHER_{section.upper()}_{key.upper()}"


@dataclass
class LoadedConfig:
    """A validated config, where each value came from, and warnings to show once."""

    config: LoopConfig
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'limits'?"`` for the closest known name, ignoring case; else ``""``."""
    by_folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=0.6)
    return f"; did you mean {by_folded[close[0]]!r}?" if close else ""


def load_config(
    project_dir: Path,
    *,
    env: Mapping[str, str],
    cli: Mapping[str, object] | None = None,
) -> LoadedConfig:
    """Merge defaults, ``.fresher/config.toml``, ``FRESHER_*`` and ``cli`` (keys ``section.key``).

    Raises :class:`ConfigError` naming the key and its source on the first bad value.
    """
    path = project_dir / CONFIG_RELPATH
    rel = CONFIG_RELPATH.as_posix()
    file_data: dict[str, Any] = {}
    warnings: list[str] = []
    if path.exists() or path.is_symlink():  # a FIFO or a dangling link is said, not skipped
        text = read_named_text(path, rel, error=ConfigError, limit=CONFIG_LIMIT)
        try:
            file_data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{rel}: invalid TOML: {exc}") from exc
    cli = dict(cli or {})
    sources: dict[str, str] = {}
    sections: dict[str, BaseModel] = {}
    # An unknown section is an error: a misspelt [limit] would leave every bound in it unset
    # for the whole night (a warning scrolls away). Unknown keys stay warnings.
    unknown = [
        f"{rel}: unknown section [{name}]{_did_you_mean(name, _SECTIONS)}"
        for name in file_data
        if name not in _SECTIONS
    ]
    if unknown:
        raise ConfigError("\n".join(unknown))
    for name, model in _SECTIONS.items():
        table = file_data.get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(f"[{name}] in {rel}: not a table")
        for key in table:
            if key not in model.model_fields:
                hint = _did_you_mean(key, model.model_fields)
                warnings.append(f"{rel}: unknown key [{name}] {key} (ignored){hint}")
        values: dict[str, Any] = {}
        for key, info in model.model_fields.items():
            dotted = f"{name}.{key}"
            var = env_name(name, key)
            if dotted in cli and cli[dotted] is not None:
                raw, where = cli[dotted], f"--{key.replace('_', '-')}={cli[dotted]} (command line)"
                source = "command line"
            elif var in env:
                raw, where, source = env[var], f"{var}={env[var]} (environment)", "environment"
            elif key in table:
                raw = table[key]
                where, source = f"[{name}] {key} = {raw!r} ({rel})", rel
            else:
                continue
            adapter = _adapter(info.annotation, tuple(info.metadata))
            try:
                values[key] = adapter.validate_python(raw)
            except ValidationError as exc:
                raise ConfigError(validation_message(exc, where)) from exc
            sources[dotted] = source
        sections[name] = model.model_validate(values)
    config = LoopConfig.model_validate({k: v.model_dump() for k, v in sections.items()})
    _check_profiles(config, rel)
    return LoadedConfig(config=config, sources=sources, warnings=warnings)


def box_settings(project: Path, env: Mapping[str, str]) -> BoxSettings:
    """``project``'s ``[security]`` settings for a gate run outside a loop (the stop-hook, a
    fleet's landing); the defaults where the config cannot be read: the box is on by
    default, so a broken file never turns it off."""
    try:
        return load_config(project, env=env).config.security.box()
    except ConfigError:
        return BoxSettings()


def _check_profiles(config: LoopConfig, rel: str) -> None:
    """Every profile a fallback names is defined."""
    from forgeflare.supervisor.agents._fallback import parse_agent_spec

    for text in config.agent.fallback:
        profile = parse_agent_spec(text).profile
        if profile and profile not in config.agent.profiles:
            known = ", ".join(sorted(config.agent.profiles)) or "none defined"
            raise ConfigError(
                f"[agent] fallback {text!r} ({rel}): no [agent.profiles.{profile}] ({known})"
            )


def _adapter(annotation: Any, metadata: tuple[Any, ...]) -> TypeAdapter[Any]:
    if metadata:
        return TypeAdapter(Annotated.__class_getitem__((annotation, *metadata)))  # type: ignore[attr-defined]
    return TypeAdapter(annotation)


def _field_doc(model: type[BaseModel], key: str) -> str:
    desc = model.model_fields[key].description
    return desc or ""


def default_config_toml() -> str:
    """``.fresher/config.toml`` with every setting at its default, one comment per key."""
    out = [
        "# forgeflare loop settings (fresher compatible).",
        "# Precedence: command-line flag > FRESHER_* environment variable > this file > default.",
        "# Durations: 90s, 15m, 2h, or plain seconds.",
    ]
    defaults = LoopConfig()
    for name, model in _SECTIONS.items():
        out.append("")
        out.append(f"[{name}]")
        section = getattr(defaults, name)
        for key in model.model_fields:
            if key == "profiles":
                out.append("# Named profiles: [agent.profiles.NAME] with env, command, model.")
                continue
            value = getattr(section, key)
            if key in _DURATION_KEYS:
                value = format_duration(value)
            doc = " ".join(_field_doc(model, key).split())
            out.append(f"# {doc} [env {env_name(name, key)}]")
            out.append(tomli_w.dumps({key: value}).strip())
    return "\n".join(out) + "\n"


_DURATION_KEYS = frozenset(
    {
        "timeout",
        "kill_grace",
        "fallback_after",
        "max_runtime",
        "iteration_timeout",
        "error_pause",
        "max_outage",
    }
)


_PROMPT_MODES = ("planning", "building")


def default_prompt(
    mode: str, *, spec_dir: str = "specs", plan_file: str = "IMPLEMENTATION_PLAN.md"
) -> str:
    """The built-in prompt of ``mode`` (used when ``.fresher/PROMPT.<mode>.md`` is absent),
    naming ``[paths] spec_dir`` and ``plan_file`` (the agent works where the loop looks).

    The prompts are package data (``forgeflare/templates/prompts/<mode>.md``), so they read
    and diff as the Markdown the agent gets.
    """
    if mode not in _PROMPT_MODES:
        raise ConfigError(f"unknown mode {mode!r}: expected planning or building")
    prompts = importlib.resources.files("forgeflare") / "templates" / "prompts"
    text = (prompts / f"{mode}.md").read_text(encoding="utf-8")
    spec = spec_dir.rstrip("/") or "."
    return text.replace("`specs/`", f"`{spec}/`").replace(
        "`IMPLEMENTATION_PLAN.md`", f"`{plan_file}`"
    )
