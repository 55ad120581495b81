"""One agent-hook pipeline for shell hooks (hooks.toml) and Python hooks (hook spec R1-R8).

A hooks.toml entry is wrapped as a :class:`ShellHook` with the same async call as a Python
:class:`~forgeflare.hooks._api.Hook`, so each event has one ordered list of hooks and one
short policy loop:

- **PreToolUse guards**: built-in guards, shell guards as declared, then Python PreToolUse
  hooks as registered; the first ``Block`` or failure wins (fail-closed) and ends the phase.
  ``Allow(updated_input=...)`` passes the new input to later hooks and the tool. Then every
  matching shell observe hook runs (fail-open) with ``blocked`` and, when blocked,
  ``blocked_by``/``block_reason``.
- **PostToolUse**: shell hooks, Python hooks, then the built-in convergence recorder; all of
  them run (fail-open), every ``Signal`` is collected, the first one is returned, and the
  recorder does one read-modify-write of convergence.json per call.
- **Stop**: shell Stop hooks observe unless they park the loop (``blocked``); the first
  decisive answer wins: ``Continue`` returns its prompt (the next user message), ``Stop`` ends
  the search, ``Blocked`` ends it with a question.
- **ExecutionStart, StepStart, StepEnd, AgentFailed**: Python hooks observe (fail-open).

Every invocation of a configured hook is one audit record (a dict; :func:`build_pipeline`
writes them as JSONL); a built-in is recorded only when it decides something.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trio

from forgeflare._clock import utc_timestamp
from forgeflare.disk import Observation, append_line, append_observations, convergence_path
from forgeflare.hooks._api import (
    DEFAULT_CONTINUE_PROMPT,
    Hook,
    HookEvent,
    HookRegistrationError,
    load_entry_point_hooks,
    load_hooks_module,
    make_hook,
    python_verdict,
)
from forgeflare.hooks._config import HOOKS_RELPATH, HookConfig, load_hooks_file, unknown_tool
from forgeflare.hooks._protocol import (
    HookFailure,
    ProcessOutcome,
    Verdict,
    block_message,
    cap_for_model,
    failure_text,
    interpret_guard,
    interpret_observe,
    interpret_post,
    interpret_stop,
    post_tool_payload,
    pre_tool_payload,
    stop_payload,
)
from forgeflare.hooks._shell import run_hook_process
from forgeflare.hooks._types import (
    Allow,
    Block,
    Blocked,
    Continue,
    ExitReason,
    HookPipeline,
    NoHooks,
    PostToolResult,
    PreToolResult,
    Signal,
    Stop,
)

__all__ = [
    "CONVERGENCE_RECORDER",
    "AgentHooks",
    "AuditSink",
    "HookDispatcher",
    "ShellHook",
    "build_pipeline",
    "collect_agent_hooks",
    "convergence_recorder",
]

AuditSink = Callable[[dict[str, Any]], None]
Kind = Literal["shell", "python", "builtin"]
Phase = Literal["guard", "observe"] | None
CONVERGENCE_RECORDER = "forgeflare:convergence"

_Interpret = Callable[[ProcessOutcome], Verdict]
_INTERPRET: dict[tuple[str, Phase], _Interpret] = {
    ("PreToolUse", "guard"): interpret_guard,
    ("PreToolUse", "observe"): interpret_observe,
    ("PostToolUse", None): interpret_post,
    ("Stop", None): interpret_stop,
}


def _encode(payload: dict[str, Any]) -> bytes:
    # default=str: a Python hook may put a non-JSON value in updated_input; never crash on it.
    return json.dumps(payload, ensure_ascii=False, default=str).encode(
        "utf-8", errors="surrogatepass"
    )


def _payload(event: str, phase: Phase, args: dict[str, Any]) -> dict[str, Any]:
    """A shell hook's stdin from the event's keyword arguments (spec R3)."""
    if event == "PreToolUse":
        keys = ("tool", "input", "tool_iterations", "cwd", "blocked", "blocked_by", "block_reason")
        return pre_tool_payload(phase=phase or "guard", **{k: args[k] for k in keys if k in args})
    if event == "PostToolUse":
        post = ("tool", "input", "result", "is_error", "tool_iterations", "cwd")
        return post_tool_payload(**{k: args[k] for k in post})
    return stop_payload(
        reason=str(args["reason"]),
        tool_iterations=args["tool_iterations"],
        total_tokens=args["total_tokens"],
        cwd=args["cwd"],
    )


@dataclass(frozen=True, slots=True)
class ShellHook:
    """A hooks.toml entry as a hook: ``await call(**event_arguments)`` gives its verdict."""

    config: HookConfig
    project_dir: Path

    async def call(self, **kwargs: Any) -> Verdict:
        """Run the command with the event's JSON on stdin; never raises for its failure."""
        event, phase = self.config.event, self.config.effective_phase
        proc = await run_hook_process(
            self.config.command,
            _encode(_payload(event, phase, kwargs)),
            cwd=self.project_dir,
            timeout_ms=self.config.effective_timeout_ms,
        )
        return _INTERPRET[event, phase](proc)


@dataclass(frozen=True, slots=True)
class _Entry:
    """One hook in an event's ordered list, shell or Python, with what the policy needs."""

    name: str
    kind: Kind
    phase: Phase
    timeout_ms: int | None
    matches: Callable[[str], bool]
    call: Callable[..., Any]
    event: HookEvent


def _shell_entry(config: HookConfig, project_dir: Path) -> _Entry:
    return _Entry(
        name=config.command,
        kind="shell",
        phase=config.effective_phase,
        timeout_ms=config.effective_timeout_ms,
        matches=config.matches,
        call=ShellHook(config, project_dir).call,
        event=HookEvent(config.event),
    )


def _python_entry(hook: Hook, kind: Kind) -> _Entry:
    timeout_ms = None if hook.timeout is None else round(hook.timeout * 1000)
    phase: Phase = "guard" if hook.event is HookEvent.PRE_TOOL_USE else None
    return _Entry(hook.name, kind, phase, timeout_ms, hook.matches, hook.call, hook.event)


def _is_cancellation(exc: BaseException) -> bool:
    """Is ``exc`` trio's cancellation (alone or inside a group), which must propagate?"""
    if isinstance(exc, trio.Cancelled):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(trio.Cancelled)[0] is not None
    return False


def _detail(verdict: Verdict) -> str:
    """What a failure's message does not already say (why the JSON was invalid)."""
    failure = verdict.failure
    return f": {failure.detail}" if failure and failure.kind == "invalid_json" else ""


@dataclass
class HookDispatcher:
    """The :class:`~forgeflare.hooks.HookPipeline` for configured agent hooks.

    ``builtins`` run first in PreToolUse and last elsewhere (the convergence recorder must see
    every signal). ``audit`` gets one dict per hook invocation.
    """

    project_dir: Path
    shell_hooks: Sequence[HookConfig] = ()
    python_hooks: Sequence[Hook] = ()
    builtins: Sequence[Hook] = ()
    log: Callable[[str], None] = print
    audit: AuditSink | None = None
    pin: Callable[[], str | None] | None = None
    """Checked before every project hook call: ``None`` while what was trusted is unchanged,
    else the one line that refuses the call (a trusted hook rewritten mid-run)."""
    _lists: dict[tuple[HookEvent, Phase], list[_Entry]] = field(init=False)

    def __post_init__(self) -> None:
        self._cwd = str(self.project_dir.resolve())
        entries = [_shell_entry(h, self.project_dir) for h in self.shell_hooks]
        entries += [_python_entry(h, "python") for h in self.python_hooks]
        first = [_python_entry(h, "builtin") for h in self.builtins]
        guards = [e for e in first if e.phase == "guard"]
        # Split once at start-up: each call only filters by tool name.
        self._lists = {}
        for e in [*guards, *entries, *(e for e in first if e.phase != "guard")]:
            self._lists.setdefault((e.event, e.phase), []).append(e)

    def _hooks(
        self, event: HookEvent, phase: Phase = None, tool: str | None = None
    ) -> list[_Entry]:
        found = self._lists.get((event, phase), [])
        return found if tool is None else [e for e in found if e.matches(tool)]

    # -- running one hook -------------------------------------------------------------

    async def _invoke(self, entry: _Entry, args: dict[str, Any]) -> Verdict:
        """Call one hook with its timeout; a Python hook's exception is its failure."""
        started = time.perf_counter()
        verdict: Verdict | None = None
        refusal = self.pin() if self.pin is not None and entry.kind != "builtin" else None
        try:
            if refusal is not None:
                verdict = Verdict(failure=HookFailure("untrusted", refusal))
            elif entry.kind == "shell":  # its own process timeout, exact (SIGKILL at the limit)
                verdict = await entry.call(**args)
            else:
                seconds = entry.timeout_ms / 1000 if entry.timeout_ms else math.inf
                with trio.move_on_after(seconds):
                    value = await entry.call(**args)
                    verdict = python_verdict(entry.event, entry.name, value)
                if verdict is None:
                    verdict = Verdict(failure=HookFailure("timeout", "timed out"))
        except BaseException as exc:  # a broken hook is a failure to report, not a crash
            # SystemExit and KeyboardInterrupt raised BY the hook are its failure too; only the
            # agent's own cancellation (Ctrl+C, a timeout around the turn) goes on up.
            if _is_cancellation(exc):
                raise
            verdict = Verdict(failure=HookFailure("crash", f"raised {type(exc).__name__}: {exc}"))
        self._record(entry, args, verdict, started)
        return verdict

    def _record(
        self, entry: _Entry, args: dict[str, Any], verdict: Verdict, started: float
    ) -> None:
        if self.audit is None or (entry.kind == "builtin" and verdict.outcome == "continue"):
            return
        record: dict[str, Any] = {
            "ts": utc_timestamp(),
            "event": entry.event.value,
            "phase": entry.phase,
            "hook": entry.name,
            "kind": entry.kind,
            "tool": args.get("tool"),
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "outcome": verdict.outcome,
        }
        answer, failure = verdict.answer, verdict.failure
        reason = getattr(answer, "reason", "") if failure is None else failure.detail
        if reason:
            record["reason"] = reason
        if isinstance(answer, Signal):
            record["signal"] = answer.signal
        if isinstance(answer, Blocked):
            record["question"] = answer.question
        if failure is not None and failure.returncode is not None:
            record["exit_code"] = failure.returncode
        if verdict.note:
            record["note"] = verdict.note
        if isinstance(answer, Continue) and entry.event is HookEvent.STOP:
            record["prompt"] = answer.prompt or DEFAULT_CONTINUE_PROMPT
        if isinstance(answer, Allow) and answer.updated_input is not None:
            record["input"] = args.get("input")
            record["updated_input"] = answer.updated_input
        self.audit(record)

    def _log_ignored(self, entry: _Entry, verdict: Verdict) -> None:
        where = f"{entry.event} {'observe ' if entry.phase == 'observe' else ''}hook"
        if verdict.failure is not None:
            text = failure_text(entry.name, verdict.failure, entry.timeout_ms)
            self.log(f"{where}: {text}{_detail(verdict)} (ignored)")
        elif verdict.note:
            self.log(f"{where}: {entry.name}: {verdict.note}")

    async def _observe(self, event: HookEvent, **args: Any) -> None:
        for entry in self._hooks(event):
            self._log_ignored(entry, await self._invoke(entry, args))

    # -- the pipeline -------------------------------------------------------------------

    async def execution_start(self, *, prompt: str) -> None:
        """ExecutionStart hooks (observe)."""
        await self._observe(HookEvent.EXECUTION_START, prompt=prompt)

    async def step_start(self, *, step: int) -> None:
        """StepStart hooks (observe)."""
        await self._observe(HookEvent.STEP_START, step=step)

    async def step_end(self, *, step: int, stop_reason: str) -> None:
        """StepEnd hooks (observe)."""
        await self._observe(HookEvent.STEP_END, step=step, stop_reason=stop_reason)

    async def agent_failed(self, *, error: BaseException, reason: str) -> None:
        """AgentFailed hooks (observe)."""
        await self._observe(HookEvent.AGENT_FAILED, error=error, reason=reason)

    async def pre_tool_use(
        self, *, tool: str, input: dict[str, Any], tool_iterations: int
    ) -> PreToolResult:
        """Guards (fail-closed, first block wins), then observers (fail-open)."""
        args: dict[str, Any] = {"tool": tool, "input": input, "tool_iterations": tool_iterations,
                                "cwd": self._cwd}  # fmt: skip
        block: Block | None = None
        for entry in self._hooks(HookEvent.PRE_TOOL_USE, "guard", tool):
            verdict = await self._invoke(entry, args)
            if isinstance(verdict.answer, Allow) and verdict.answer.updated_input is not None:
                args = {**args, "input": verdict.answer.updated_input}
            elif isinstance(verdict.answer, Block) or verdict.failure is not None:
                block = self._block(entry, verdict)
                break
        observers = self._hooks(HookEvent.PRE_TOOL_USE, "observe", tool)
        if observers:
            args["blocked"] = block is not None
            if block is not None:
                args.update(blocked_by=block.blocked_by, block_reason=block.reason)
            for entry in observers:
                self._log_ignored(entry, await self._invoke(entry, args))
        return block if block is not None else Allow(args["input"])

    def _block(self, entry: _Entry, verdict: Verdict) -> Block:
        message = block_message(entry.name, verdict, entry.timeout_ms)
        if verdict.failure is not None:
            self.log(f"PreToolUse guard: {message}{_detail(verdict)}")
        reason = verdict.answer.reason if isinstance(verdict.answer, Block) else message
        return Block(reason=cap_for_model(reason), message=message, blocked_by=entry.name)

    async def post_tool_use(
        self, *, tool: str, input: dict[str, Any], result: str, is_error: bool,
        tool_iterations: int,
    ) -> PostToolResult:  # fmt: skip
        """All matching hooks (fail-open); every signal collected, the first returned."""
        signals: list[Signal] = []
        for entry in self._hooks(HookEvent.POST_TOOL_USE, None, tool):
            args = {"tool": tool, "input": input, "result": result, "is_error": is_error,
                    "tool_iterations": tool_iterations, "cwd": self._cwd,
                    "signals": tuple(signals)}  # fmt: skip
            verdict = await self._invoke(entry, args)
            self._log_ignored(entry, verdict)
            if isinstance(verdict.answer, Signal):
                signals.append(verdict.answer)
        return signals[0] if signals else Continue()

    async def stop(
        self, *, reason: ExitReason, tool_iterations: int, total_tokens: int
    ) -> str | Blocked | None:
        """The first ``Continue``, ``Stop`` or ``Blocked`` answer decides."""
        args = {"reason": reason, "tool_iterations": tool_iterations,
                "total_tokens": total_tokens, "cwd": self._cwd}  # fmt: skip
        for entry in self._hooks(HookEvent.STOP):
            verdict = await self._invoke(entry, args)
            self._log_ignored(entry, verdict)
            if isinstance(verdict.answer, Continue):
                return cap_for_model(verdict.answer.prompt or DEFAULT_CONTINUE_PROMPT)
            if isinstance(verdict.answer, Stop):
                return None
            if isinstance(verdict.answer, Blocked):
                return Blocked(cap_for_model(verdict.answer.question))
        return None


def convergence_recorder(path: Path, log: Callable[[str], None]) -> Hook:
    """The built-in last PostToolUse hook: one read-modify-write of ``path`` per call with
    every signal the hooks before it returned (spec R8). A write failure is a warning."""

    def record(signals: tuple[Signal, ...], tool_iterations: int) -> None:
        if not signals:
            return
        observations = [
            Observation(signal=s.signal, reason=s.reason, tool_iterations=tool_iterations)
            for s in signals
        ]
        try:
            append_observations(path, observations)
        except OSError as exc:
            log(f"warning: could not record convergence signal in {path}: {exc.strerror or exc}")

    return make_hook(record, "PostToolUse", name=CONVERGENCE_RECORDER)


@dataclass(frozen=True)
class AgentHooks:
    """Every agent hook of a run, as :func:`collect_agent_hooks` found them."""

    hooks_file: Path
    file_found: bool
    shell: tuple[HookConfig, ...] = ()
    python: tuple[Hook, ...] = ()
    builtins: tuple[Hook, ...] = ()

    @property
    def configured(self) -> bool:
        """Whether the user configured any hook (built-ins aside)."""
        return bool(self.shell or self.python)


def collect_agent_hooks(
    *,
    project_dir: Path,
    hooks_file: Path | None = None,
    hooks_modules: Sequence[str] = (),
    python_hooks: Sequence[Hook] = (),
    entry_points: bool = True,
    builtins: Sequence[Hook] = (),
    tools: Collection[str] | None = None,
) -> AgentHooks:
    """The one collection of agent hooks, for ``forgeflare run`` and ``forgeflare hooks test``.

    In order: hooks.toml (default ``project_dir/.forgeflare/hooks.toml``), ``python_hooks``
    given in code, entry points (group ``forgeflare.hooks``), ``--hooks-module`` modules
    (imported with ``project_dir`` on ``sys.path``), and forgeflare's ``builtins``. Given the
    agent's ``tools``, a matcher naming no tool is an error ("did you mean Bash?"). Raises
    :class:`~forgeflare.hooks.HookConfigError` or
    :class:`~forgeflare.hooks.HookRegistrationError`.
    """
    path = hooks_file if hooks_file is not None else project_dir / HOOKS_RELPATH
    loaded = load_hooks_file(path, tools)
    python = [*python_hooks, *(load_entry_point_hooks() if entry_points else ())]
    if hooks_modules and str(project_dir) not in sys.path:
        # A hooks module usually lives in the project; the console script does not put the
        # working directory on sys.path the way `python -m` does.
        sys.path.insert(0, str(project_dir))
    for module in hooks_modules:
        python.extend(load_hooks_module(module))
    if tools is not None:
        _check_matchers(python, tools)
    return AgentHooks(
        hooks_file=path,
        file_found=loaded is not None,
        shell=tuple(loaded.hooks) if loaded is not None else (),
        python=tuple(python),
        builtins=tuple(builtins),
    )


def _check_matchers(hooks: Sequence[Hook], tools: Collection[str]) -> None:
    """A Python hook's exact tool names must name tools too (a regex may match none)."""
    for h in hooks:
        for name in sorted(h.names or ()):
            problem = unknown_tool(name, tools)
            if problem is not None:
                raise HookRegistrationError(f"hook {h.name!r} ({h.event}): match {problem}")


def _jsonl_writer(path: Path, log: Callable[[str], None]) -> AuditSink:
    """Append each record as one JSON line; a write failure is a warning, logged once."""
    warned = False

    def write(record: dict[str, Any]) -> None:
        nonlocal warned
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        try:
            append_line(path, line)
        except OSError as exc:
            if not warned:
                warned = True
                log(f"warning: cannot write hook audit log {path}: {exc.strerror or exc}")

    return write


def build_pipeline(
    *,
    project_dir: Path,
    hooks_file: Path | None = None,
    python_hooks: Sequence[Hook] = (),
    hooks: AgentHooks | None = None,
    audit_path: Path | None = None,
    log: Callable[[str], None],
    record_convergence: bool = True,
    audit: AuditSink | None = None,
    pin: Callable[[], str | None] | None = None,
) -> HookPipeline:
    """The pipeline for ``hooks`` (default: hooks.toml and ``python_hooks``, no entry points).

    Returns :class:`NoHooks` when there is no hook at all: then no hook work happens. The
    convergence recorder joins when a PostToolUse hook can signal (``record_convergence``).
    Raises :class:`~forgeflare.hooks.HookConfigError` for a malformed file.
    """
    if hooks is None:
        hooks = collect_agent_hooks(
            project_dir=project_dir,
            hooks_file=hooks_file,
            python_hooks=python_hooks,
            entry_points=False,
        )
    builtins = list(hooks.builtins)
    signalling = any(h.event == "PostToolUse" for h in hooks.shell) or any(
        h.event is HookEvent.POST_TOOL_USE for h in hooks.python
    )
    if record_convergence and signalling:
        builtins.append(convergence_recorder(convergence_path(project_dir), log))
    if not hooks.configured and not builtins:
        return NoHooks()
    if audit is None and audit_path is not None:
        audit = _jsonl_writer(audit_path, log)
    return HookDispatcher(
        project_dir=project_dir,
        shell_hooks=hooks.shell,
        python_hooks=hooks.python,
        builtins=builtins,
        log=log,
        audit=audit,
        pin=pin,
    )
