"""Which agent runs the next iteration: the primary, a fallback, or none for now (pure).

``[agent] fallback = ["codex", "claude:work"]`` lists agents (a backend, optionally with a
profile) to use while the primary is out of its usage window. :func:`choose_agent` decides from
the windows known (reset times per agent, from this loop or the machine's shared store):

- the primary whenever its window is open (so the loop goes back to it once it has reset);
- while the primary waits no longer than ``fallback_after`` and the loop is on the primary,
  wait for it (a short wait is not worth a switch);
- else the first fallback whose window is open;
- else wait for the earliest reset; with no reset known at all (quota spent), finish.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from forgeflare._clock import format_wait

__all__ = [
    "AgentSpec",
    "Choice",
    "Window",
    "choose_agent",
    "credit_line",
    "credit_of",
    "credit_window",
    "month_spend",
    "parse_agent_spec",
]


@dataclass(frozen=True, slots=True, order=True)
class AgentSpec:
    """A backend with an optional profile (``claude:work``)."""

    backend: str
    profile: str = ""

    @property
    def label(self) -> str:
        return f"{self.backend}:{self.profile}" if self.profile else self.backend


def parse_agent_spec(text: str) -> AgentSpec:
    """``BACKEND[:PROFILE]``; raises ``ValueError`` with what is wrong."""
    backend, sep, profile = text.strip().partition(":")
    if not backend or (sep and not profile) or ":" in profile:
        raise ValueError(f"{text!r} is not BACKEND[:PROFILE]")
    return AgentSpec(backend, profile)


@dataclass(frozen=True, slots=True)
class Window:
    """An agent out of its window until ``resets_at``; ``None``: its quota is spent (no reset)."""

    resets_at: datetime | None
    reason: str = "usage limit"

    def open_at(self, now: datetime) -> bool:
        return self.resets_at is not None and self.resets_at <= now


@dataclass(frozen=True, slots=True)
class Choice:
    """Run ``agent``; or, with ``agent`` None, wait until ``wait_until`` (None: finish)."""

    agent: AgentSpec | None
    wait_until: datetime | None
    reason: str


def _open(spec: AgentSpec, windows: Mapping[AgentSpec, Window], now: datetime) -> bool:
    window = windows.get(spec)
    return window is None or window.open_at(now)


def _waiting(spec: AgentSpec, window: Window, now: datetime) -> str:
    if window.resets_at is None:
        return f"{spec.label}: {window.reason}, no reset known"
    left = (window.resets_at - now).total_seconds()
    return f"{spec.label}: {window.reason} for {format_wait(left)}"


def choose_agent(
    primary: AgentSpec,
    fallbacks: Sequence[AgentSpec],
    windows: Mapping[AgentSpec, Window],
    now: datetime,
    *,
    fallback_after: timedelta = timedelta(minutes=15),
    current: AgentSpec | None = None,
) -> Choice:
    """The agent for the next iteration (see the module's docstring)."""
    if _open(primary, windows, now):
        back = current is not None and current != primary
        return Choice(primary, None, "back to the primary: its window reset" if back else "")
    pw = windows[primary]
    why = _waiting(primary, pw, now)
    on_primary = current is None or current == primary
    short = pw.resets_at is not None and pw.resets_at - now <= fallback_after
    if not (short and on_primary):
        for spec in fallbacks:
            if spec != primary and _open(spec, windows, now):
                return Choice(spec, None, f"{why}; on {spec.label}" if spec != current else "")
    if short and on_primary:
        return Choice(None, pw.resets_at, why)
    resets = [w.resets_at for s in (primary, *fallbacks) if (w := windows.get(s)) and w.resets_at]
    if not resets:
        return Choice(None, None, f"{why}, and no fallback is open")
    return Choice(None, min(resets), f"{why}; no fallback open")


def month_spend(
    rows: Iterable[tuple[datetime | None, AgentSpec, float | None]], spec: AgentSpec, now: datetime
) -> float:
    """What ``spec`` spent in ``now``'s calendar month (UTC): rows are (start, agent, cost)."""
    return sum(
        cost or 0.0
        for start, agent, cost in rows
        if agent == spec
        and start is not None
        and (start.year, start.month) == (now.year, now.month)
    )


def credit_of(
    spec: AgentSpec, primary: AgentSpec, limit: float, profiles: Mapping[str, float]
) -> float:
    """``spec``'s monthly credit: its profile's if set, else ``[limits]``'s for the primary."""
    own = profiles.get(spec.profile, 0.0) if spec.profile else 0.0
    return own or (limit if spec == primary else 0.0)


def credit_line(spent: float, credit: float, spec: AgentSpec) -> str:
    """The banner's word on a monthly credit: what is left of it (never below nothing)."""
    left = max(credit - spent, 0.0)
    return f"monthly credit: ${left:.2f} of ${credit:g} left this month ({spec.label})"


def credit_window(spent: float, credit: float, now: datetime) -> Window | None:
    """A spent monthly ``credit`` (0: none) is a window that opens on the 1st (UTC)."""
    if not credit or spent < credit:
        return None
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    first = now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    return Window(first, f"monthly credit ${credit:g} spent (${spent:.2f})")
