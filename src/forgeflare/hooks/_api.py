"""The in-process Python hook API: events, answers, the ``@hook`` marker and registries.

These are *agent hooks* (run by ``forgeflare run``, like the shell hooks of hooks.toml), not the
*lifecycle hooks* of ``forgeflare loop`` (.fresher/hooks) nor *Claude Code's Stop hook*
(``forgeflare stop-hook``). A hook is a plain function, sync or async, that takes keyword
arguments only and names the ones it wants (like pluggy), and returns one of the pipeline's
typed answers, or ``None`` for no opinion::

    from forgeflare.hooks import Allow, Block, hook

    @hook("PreToolUse", match="Bash", timeout=2)
    def no_force_push(input):
        if "push --force" in input.get("command", ""):
            return Block("no force pushes")
        return None  # no opinion; Allow(updated_input={...}) would change the input

Answers by event (anything else is the hook's failure): PreToolUse ``Allow(updated_input=...)``
or ``Block(reason)``; PostToolUse ``Signal(name, reason)`` (a convergence signal) or
``Continue()``; Stop ``Continue(prompt=...)`` (go on with that user message), ``Stop()`` (let
it stop, ask no later Stop hook) or ``Blocked(question)`` (stop on a question only a person can
answer: a loop finishes ``blocked`` with it); other events observe and return ``None``.

Arguments by event: ExecutionStart ``prompt``; StepStart ``step``; StepEnd ``step,
stop_reason`` (after the step's tools ran); PreToolUse ``tool, input, tool_iterations``;
PostToolUse ``tool, input, result, is_error, tool_iterations, signals`` (the signals earlier
hooks of this call returned); Stop ``reason, tool_iterations, total_tokens``; AgentFailed
``error, reason`` (on every failure exit: an API error, a refusal, a limit, an interrupt, an
internal error). Everything is checked when the hook is made, so a typo fails at start-up
with an error naming the hook, not in the middle of a night's loop.

Python hooks run in the agent's process. Without ``timeout=`` (seconds) a sync hook runs on the
event loop, so keep it quick; with one, a sync hook runs in a worker thread and is abandoned
when the time is up. A hook that raises, times out or returns the wrong type fails like a shell
hook: a PreToolUse hook's failure blocks the tool (fail-closed), any other is logged.

Deprecated: ``HookOutcome(decision=...)`` (whose meaning changed per event) still works and is
translated to the answers above with a :class:`DeprecationWarning`.

Hooks are collected from code (:class:`HookRegistry` or ``@hook``), from a module given on the
command line (:func:`load_hooks_module`) and from installed distributions' entry points in the
group ``forgeflare.hooks`` (:func:`load_entry_point_hooks`). forgeflare's own built-ins (the
Bash deny-list check, the convergence recorder) are made with :func:`make_hook` too.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import math
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType
from typing import Any, Literal, TypeVar

import trio

from forgeflare._errors import ConfigError
from forgeflare.hooks._protocol import HookFailure, Verdict
from forgeflare.hooks._types import ANSWERS, Allow, Block, Continue, HookAnswer, Signal, Stop

__all__ = [
    "DEFAULT_CONTINUE_PROMPT",
    "ENTRY_POINT_GROUP",
    "EVENT_ARGUMENTS",
    "Decision",
    "Hook",
    "HookEvent",
    "HookOutcome",
    "HookRegistrationError",
    "HookRegistry",
    "Matcher",
    "collect_hooks",
    "hook",
    "load_entry_point_hooks",
    "load_hooks_module",
    "make_hook",
    "python_verdict",
]

ENTRY_POINT_GROUP = "forgeflare.hooks"
_MARK = "__forgeflare_hooks__"


class HookEvent(StrEnum):
    """Points in the agent's run where Python hooks are called."""

    EXECUTION_START = "ExecutionStart"
    STEP_START = "StepStart"
    STEP_END = "StepEnd"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"
    AGENT_FAILED = "AgentFailed"


EVENT_ARGUMENTS: dict[HookEvent, tuple[str, ...]] = {
    HookEvent.EXECUTION_START: ("prompt",),
    HookEvent.STEP_START: ("step",),
    HookEvent.STEP_END: ("step", "stop_reason"),
    HookEvent.PRE_TOOL_USE: ("tool", "input", "tool_iterations"),
    HookEvent.POST_TOOL_USE: (
        "tool",
        "input",
        "result",
        "is_error",
        "tool_iterations",
        "signals",
    ),
    HookEvent.STOP: ("reason", "tool_iterations", "total_tokens"),
    HookEvent.AGENT_FAILED: ("error", "reason"),
}
"""The keyword arguments each event passes; a hook takes any subset of them."""

_TOOL_EVENTS = (HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE)

Decision = Literal["allow", "deny", "stop", "continue"]
"""The decisions of the deprecated :class:`HookOutcome`."""
_DECISIONS: tuple[str, ...] = ("allow", "deny", "stop", "continue")

Matcher = str | Sequence[str] | re.Pattern[str] | None
"""Which tools a PreToolUse/PostToolUse hook sees: an exact name, a list of names, or a
compiled regex that must match the whole name. ``None``: every tool."""


class HookRegistrationError(ConfigError):
    """A Python hook cannot be registered (bad event, argument, matcher), or a hooks module
    or entry point cannot be loaded. The message names the hook or the module."""


DEFAULT_CONTINUE_PROMPT = "Continue."
"""The next user prompt when a Stop hook answers ``Continue()`` without a prompt."""


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """Deprecated: return :class:`Allow`, :class:`Block`, :class:`Signal`, :class:`Continue`
    or :class:`Stop` instead. Kept (with a :class:`DeprecationWarning`) so published hook
    packages do not break; :meth:`answer` says what each decision meant per event.
    """

    decision: Decision
    updated_input: dict[str, Any] | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        warnings.warn(
            "HookOutcome is deprecated: return Allow, Block, Signal, Continue or Stop from "
            "forgeflare.hooks instead",
            DeprecationWarning,
            stacklevel=3,  # the hook's own line, past the dataclass __init__
        )
        if self.decision not in _DECISIONS:
            raise ValueError(
                f"unknown decision {self.decision!r}; expected allow, deny, stop or continue"
            )
        if self.updated_input is not None:
            if self.decision != "allow":
                raise ValueError("updated_input goes with decision 'allow' only")
            if not isinstance(self.updated_input, dict):
                raise ValueError("updated_input must be a dict")

    def answer(self, event: HookEvent, hook: str) -> Verdict:
        """The typed answer this decision meant for ``event`` (the old per-event rules)."""
        decision, reason = self.decision, self.reason
        if event is HookEvent.PRE_TOOL_USE:
            if decision in ("deny", "stop"):
                return Verdict(Block(reason or "denied"))
            return Verdict(Allow(self.updated_input) if decision == "allow" else None)
        if event is HookEvent.POST_TOOL_USE:
            if decision == "stop":
                return Verdict(Signal(reason or hook, reason or ""))
            if decision == "deny":
                return Verdict(note="decision 'deny' after the tool ran is ignored")
        if event is HookEvent.STOP:
            if decision == "continue":
                return Verdict(Continue(reason or DEFAULT_CONTINUE_PROMPT))
            if decision == "stop":
                return Verdict(Stop(reason or ""))
        return Verdict()


def python_verdict(event: HookEvent, hook: str, value: object) -> Verdict:
    """What a Python hook's return value means for ``event``; a wrong type is a failure."""
    if value is None:
        return Verdict()
    if isinstance(value, HookOutcome):
        return value.answer(event, hook)
    accepted: tuple[type, ...] = ANSWERS.get(event.value, ())
    if isinstance(value, accepted):
        answer: HookAnswer = value  # type: ignore[assignment]  # narrowed by ANSWERS
        return Verdict(answer)
    expected = ", ".join(t.__name__ for t in accepted)
    return Verdict(
        failure=HookFailure(
            "crash",
            f"returned {type(value).__name__}, expected "
            + (f"{expected} or None" if expected else "None"),
        )
    )


@dataclass(frozen=True, slots=True)
class Hook:
    """A validated Python hook; build one with :func:`make_hook`, ``@hook`` or a registry."""

    event: HookEvent
    func: Callable[..., Any]
    name: str
    names: frozenset[str] | None
    pattern: re.Pattern[str] | None
    arguments: tuple[str, ...]
    timeout: float | None = None
    """Seconds before the hook counts as failed (``None``: no limit)."""

    def matches(self, tool: str) -> bool:
        """Whether this hook wants a call for ``tool`` (every tool when it has no matcher)."""
        if self.names is not None:
            return tool in self.names
        if self.pattern is not None:
            return self.pattern.fullmatch(tool) is not None
        return True

    async def call(self, **kwargs: Any) -> Any:
        """Call with the arguments it asked for; await it if it is async. Returns what it did.

        With a timeout a sync hook runs in a worker thread, so the caller's deadline can
        abandon it (a sync call on the event loop could not be interrupted).
        """
        args = {k: kwargs[k] for k in self.arguments}
        if self.timeout is not None and not inspect.iscoroutinefunction(self.func):
            call = functools.partial(self.func, **args)
            result = await trio.to_thread.run_sync(call, abandon_on_cancel=True)
        else:
            result = self.func(**args)
        if inspect.isawaitable(result):
            result = await result
        return result


def _event(value: HookEvent | str, name: str) -> HookEvent:
    try:
        return HookEvent(value)
    except ValueError:
        known = ", ".join(e.value for e in HookEvent)
        raise HookRegistrationError(
            f"hook {name!r}: unknown event {value!r}; expected one of {known}"
        ) from None


def _matcher(
    match: Matcher, event: HookEvent, name: str
) -> tuple[frozenset[str] | None, re.Pattern[str] | None]:
    if match is None:
        return None, None
    if event not in _TOOL_EVENTS:
        raise HookRegistrationError(
            f"hook {name!r} ({event}): a tool matcher needs PreToolUse or PostToolUse"
        )
    if isinstance(match, re.Pattern):
        return None, match
    if isinstance(match, str):
        match = [match]
    names = list(match) if isinstance(match, list | tuple | set | frozenset) else []
    if not names or not all(isinstance(n, str) and n for n in names):
        raise HookRegistrationError(
            f"hook {name!r} ({event}): match must be a tool name, a list of names or a "
            "compiled regex"
        )
    return frozenset(names), None


def _arguments(func: Callable[..., Any], event: HookEvent, name: str) -> tuple[str, ...]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError) as exc:
        raise HookRegistrationError(f"hook {name!r}: not a callable with a signature") from exc
    offered = EVENT_ARGUMENTS[event]
    wanted: list[str] = []
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            return offered
        if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL):
            raise HookRegistrationError(
                f"hook {name!r} ({event}): argument {p.name!r} must be passable by keyword"
            )
        if p.name not in offered:
            if p.default is not p.empty:
                continue  # an optional argument the event never passes is harmless
            raise HookRegistrationError(
                f"hook {name!r} ({event}): unknown argument {p.name!r}; {event} hooks get "
                + ", ".join(offered)
            )
        wanted.append(p.name)
    return tuple(wanted)


def make_hook(
    func: Callable[..., Any],
    event: HookEvent | str,
    *,
    match: Matcher = None,
    name: str | None = None,
    timeout: float | None = None,
) -> Hook:
    """Validate ``func`` as a hook for ``event``. Raises :class:`HookRegistrationError`.

    ``timeout`` (seconds): a guard that takes longer blocks the tool, any other hook's
    overrun is logged, as with shell hooks.
    """
    if not callable(func):
        raise HookRegistrationError(f"hook {name or func!r}: not callable")
    label = name or f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', func)}"
    ev = _event(event, label)
    names, pattern = _matcher(match, ev, label)
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise HookRegistrationError(
            f"hook {label!r} ({ev}): timeout must be a positive number of seconds, got {timeout!r}"
        )
    return Hook(
        event=ev,
        func=func,
        name=label,
        names=names,
        pattern=pattern,
        arguments=_arguments(func, ev, label),
        timeout=timeout,
    )


_F = TypeVar("_F", bound=Callable[..., Any])


def hook(
    event: HookEvent | str,
    *,
    match: Matcher = None,
    name: str | None = None,
    timeout: float | None = None,
) -> Callable[[_F], _F]:
    """Mark a function as a hook; :func:`load_hooks_module` and entry points find it.

    The function is returned unchanged (still callable in tests); it may carry several marks.
    """

    def mark(func: _F) -> _F:
        made = make_hook(func, event, match=match, name=name, timeout=timeout)
        marks: list[Hook] = list(getattr(func, _MARK, ()))
        marks.append(made)
        setattr(func, _MARK, marks)
        return func

    return mark


class HookRegistry:
    """An ordered collection of hooks, e.g. one per plugin module or library user."""

    def __init__(self, hooks: Iterable[Hook] = ()) -> None:
        self._hooks: list[Hook] = list(hooks)

    def hook(
        self,
        event: HookEvent | str,
        *,
        match: Matcher = None,
        name: str | None = None,
        timeout: float | None = None,
    ) -> Callable[[_F], _F]:
        """Decorator: validate and register ``func`` here (returned unchanged)."""

        def register(func: _F) -> _F:
            self.add(func, event, match=match, name=name, timeout=timeout)
            return func

        return register

    def add(
        self,
        func: Callable[..., Any] | Hook,
        event: HookEvent | str | None = None,
        *,
        match: Matcher = None,
        name: str | None = None,
        timeout: float | None = None,
    ) -> Hook:
        """Register a made :class:`Hook`, or make one from ``func`` and ``event``."""
        if isinstance(func, Hook):
            made = func
        elif event is None:
            raise HookRegistrationError(f"hook {name or func!r}: no event given")
        else:
            made = make_hook(func, event, match=match, name=name, timeout=timeout)
        self._hooks.append(made)
        return made

    @property
    def hooks(self) -> tuple[Hook, ...]:
        """All hooks, in registration order."""
        return tuple(self._hooks)

    def for_event(self, event: HookEvent | str) -> list[Hook]:
        """The hooks of one event, in registration order."""
        ev = HookEvent(event)
        return [h for h in self._hooks if h.event is ev]

    def __len__(self) -> int:
        return len(self._hooks)


def collect_hooks(obj: object) -> list[Hook]:
    """The hooks an object provides: a Hook, a registry, a marked function, a module (all
    of those among its attributes, in definition order) or a list of any of these."""
    found: list[Hook] = []
    seen: set[int] = set()

    def add(items: Iterable[Hook]) -> None:
        for h in items:
            if id(h) not in seen:
                seen.add(id(h))
                found.append(h)

    def visit(item: object, top: bool) -> None:
        if isinstance(item, Hook):
            add([item])
        elif isinstance(item, HookRegistry):
            add(item.hooks)
        elif isinstance(item, ModuleType):
            if top:
                for value in list(vars(item).values()):
                    visit(value, top=False)
        elif isinstance(item, list | tuple):
            if top:
                for value in item:
                    visit(value, top=True)
        elif callable(item):
            add(getattr(item, _MARK, ()))

    visit(obj, top=True)
    return found


def _load(where: str, verb: str, load: Callable[[], object], empty: str) -> list[Hook]:
    """Load an object and collect its hooks; every failure names ``where``."""
    try:
        obj = load()
    except HookRegistrationError as exc:
        raise HookRegistrationError(f"{where}: {exc}") from exc
    except Exception as exc:
        raise HookRegistrationError(f"{where}: cannot {verb}: {type(exc).__name__}: {exc}") from exc
    hooks = collect_hooks(obj)
    if not hooks:
        raise HookRegistrationError(f"{where}: {empty}")
    return hooks


def _import_without_bytecode(name: str) -> object:
    """Import a project's module without writing its bytecode: a ``__pycache__/*.pyc`` that
    appeared in the project would change what was trusted (``.pyc`` files are trust items),
    and the next run would refuse the module the user trusted."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        return importlib.import_module(name)
    finally:
        sys.dont_write_bytecode = before


def load_hooks_module(name: str) -> list[Hook]:
    """Import module ``name`` (``--hooks-module``) and return the hooks it defines.

    Raises :class:`HookRegistrationError` when the import fails or it defines no hook.
    """
    return _load(
        f"hooks module {name!r}",
        "import",
        functools.partial(_import_without_bytecode, name),
        "defines no hooks (use @forgeflare.hooks.hook or a HookRegistry)",
    )


def load_entry_point_hooks() -> list[Hook]:
    """Hooks from installed distributions: entry points in the group ``forgeflare.hooks``.

    Each entry point names a module, a registry, a hook, a marked function or a list.
    Raises :class:`HookRegistrationError` naming the entry point when one cannot be loaded.
    """
    hooks: list[Hook] = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} ({ep.value}) in group {ENTRY_POINT_GROUP}"
        hooks.extend(_load(where, "load", ep.load, "provides no hooks"))
    return hooks
