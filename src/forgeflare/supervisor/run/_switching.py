"""The loop's agent switching: which backend and profile run the next iteration.

The choice is :func:`~forgeflare.supervisor.agents._fallback.choose_agent`'s (pure); this is
the shell: it learns windows from rate-limited iterations, shares them through the machine's
store (:mod:`~forgeflare.supervisor.agents._windowstore`), builds the chosen backend and says
every switch and wait with its reason (``loop.log``, the status line, ``events.jsonl``).

Windows are kept in the loop's own time: with ``FORGEFLARE_TIME_SCALE`` a reset in 2 h is
stored ``2 h × scale`` ahead, so a test (or demo) sees the primary come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from forgeflare._clock import parse_time
from forgeflare.supervisor.agents._fallback import (
    AgentSpec,
    Choice,
    Window,
    choose_agent,
    credit_line,
    credit_of,
    credit_window,
    month_spend,
    parse_agent_spec,
)
from forgeflare.supervisor.agents._windowkey import WindowKey, agent_account
from forgeflare.supervisor.agents._windowstore import read_windows, record_window, window_store_path
from forgeflare.supervisor.backends import Backend
from forgeflare.supervisor.records._records import RecordError, read_run
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup

__all__ = ["AgentSwitching"]


class AgentSwitching:
    """Which agent runs: the primary, its fallbacks, the windows that keep them out, and the
    backend and profile of the current one."""

    def __init__(self, setup: LoopSetup, book: RunBook) -> None:
        self.setup = setup
        self.book = book
        cfg = setup.cfg
        self.backend: Backend = cfg.backend()
        self.profile = ""
        """The ``[agent.profiles]`` profile of the current agent (empty: none)."""
        self.primary = self.current = AgentSpec(self.backend.name)
        self.fallbacks = [parse_agent_spec(text) for text in cfg.agent.fallback]
        if self.fallbacks:
            setup.display.agent = self.primary.label
        self.windows: dict[AgentSpec, Window] = {}
        self.failed: set[AgentSpec] = set()
        """Agents out for good on a failure retrying cannot fix (not a spent quota)."""
        self.window_file = window_store_path(setup.opts.env)
        """The machine's store of usage windows, shared by its loops."""

    @property
    def label(self) -> str:
        """The current agent as the terminal names it (``backend[:profile]``)."""
        return f"{self.backend.name}:{self.profile}" if self.profile else self.backend.name

    def spend_quota(self) -> None:
        """The current agent's quota is spent: it is out until the loop ends."""
        self.windows[self.current] = Window(None, "quota spent")

    def give_up(self, reason: str) -> None:
        """The current agent failed in a way retrying cannot fix: it is out until the loop
        ends (not a spent quota: :meth:`any_spent` does not count it)."""
        self.windows[self.current] = Window(None, reason)
        self.failed.add(self.current)

    def any_spent(self) -> bool:
        """Whether an agent is out for good (a spent quota or credit with no reset)."""
        return any(
            w.resets_at is None and spec not in self.failed for spec, w in self.windows.items()
        )

    def known_windows(self) -> Mapping[AgentSpec, Window]:
        """This loop's windows and the machine's (the later reset wins)."""
        stored = read_windows(self.window_file, warn=self.setup.display.warn)
        # The machine's windows of these agents at the endpoint and account they use here.
        known = {
            spec: window
            for spec in (self.primary, *self.fallbacks)
            if (window := stored.get(self.window_key(spec))) is not None
        }
        for spec, window in self.windows.items():
            theirs = known.get(spec)
            if (
                theirs is None
                or window.resets_at is None
                or (theirs.resets_at is not None and window.resets_at > theirs.resets_at)
            ):
                known[spec] = window
        return known

    def window_key(self, spec: AgentSpec) -> WindowKey:
        """``spec``'s key in the machine's store: its endpoint and account in its environment."""
        env = {**self.setup.opts.env, **self.setup.cfg.profile_env(spec.profile)}
        backend = self.setup.cfg.backend_for(spec.backend)
        url = backend.configured_url(env)
        endpoint, account = agent_account(backend.account, env, configured_url=url)
        return WindowKey(spec, endpoint, account)

    def learn_window(self, seconds: float, reason: str = "usage limit") -> None:
        """The current agent is out of its window for ``seconds`` (its true reset, scaled to
        the loop's time), here and in the machine's store."""
        now = datetime.now(UTC)
        window = Window(now + timedelta(seconds=seconds * self.setup.time_scale), reason)
        self.windows[self.current] = window
        try:
            record_window(self.window_file, self.window_key(self.current), window, now)
        except OSError as exc:
            self.setup.display.warn(f"{self.window_file}: cannot share the usage window: {exc}")

    def check_credit(self, log_root: Path) -> None:
        """Before the first iteration: has an agent spent its monthly credit (``[limits]
        monthly_credit`` for the primary, ``[agent.profiles.NAME] monthly_credit``)?"""
        profiles = {name: p.monthly_credit for name, p in self.setup.cfg.agent.profiles.items()}
        credits = {
            spec: credit
            for spec in [self.primary, *self.fallbacks]
            if (
                credit := credit_of(
                    spec, self.primary, self.setup.cfg.limits.monthly_credit, profiles
                )
            )
        }
        if not credits:
            return
        rows = []
        for path in sorted(log_root.glob("*/run.json")):
            try:
                run = read_run(path)
            except (RecordError, OSError):
                continue  # a damaged record is reported by `runs`; it adds nothing here
            for it in run.iterations:
                spec = AgentSpec(it.backend or run.backend, it.profile)
                rows.append((parse_time(it.started_at), spec, it.cost_usd))
        now = datetime.now(UTC)
        for spec, credit in credits.items():
            spent = month_spend(rows, spec, now)
            self.setup.display.info(credit_line(spent, credit, spec))
            window = credit_window(spent, credit, now)
            if window is None or window.resets_at is None:
                continue
            self.windows[spec] = window
            if spec != self.primary:
                then = "skipped"
            else:
                then = "falling back" if self.fallbacks else "waiting"
            until = f"{window.resets_at:%Y-%m-%d}"
            self.setup.display.warn(
                f"{spec.label}: {window.reason} this month: {then} until {until}"
            )

    def choose(self) -> Choice:
        """The choice for the next iteration; switches to its agent when it names one."""
        choice = choose_agent(
            self.primary,
            self.fallbacks,
            self.known_windows(),
            datetime.now(UTC),
            fallback_after=timedelta(
                seconds=self.setup.cfg.agent.fallback_after * self.setup.time_scale
            ),
            current=self.current,
        )
        if choice.agent is not None and choice.agent != self.current:
            self.switch_to(choice.agent, choice.reason)
        return choice

    def switch_to(self, spec: AgentSpec, reason: str) -> None:
        """Run the next iterations on ``spec``, saying so with ``reason``."""
        was = self.current
        self.current, self.profile = spec, spec.profile
        self.backend = self.setup.cfg.backend_for(spec.backend)
        self.setup.display.agent = spec.label
        self.setup.display.warn(f"agent {was.label} -> {spec.label}: {reason}")
        self.book.store.event(
            "agent_switched", backend=spec.backend, profile=spec.profile, reason=reason
        )
