"""The loop's waits between iterations: for a usage window, out an API outage, for an answer,
and while paused (``forgeflare pause``; a hint from ``forgeflare hint`` is taken here too).

When to wait and how long is :mod:`~forgeflare.supervisor.evidence._waits`' (pure); this is the
shell: it waits by the wall clock (a laptop suspend does not stretch it), ends early on a
stop, records the wait in ``run.json`` and ``events.jsonl`` and notifies.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio

from forgeflare._clock import format_wait, utc_timestamp
from forgeflare.supervisor.records._blocked import read_answer
from forgeflare.supervisor.records._hourly import HOUR, hour_allowance, sent_by_rows
from forgeflare.supervisor.records._records import IterationRecord, WaitRecord
from forgeflare.supervisor.run._hand import pause_requested, take_hint
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._stop import stop_requested

__all__ = ["LoopWaits", "wait_line"]


def wait_line(kind: str, seconds: float, local: str, opens_in: float) -> str:
    """What the terminal says of a wait of ``seconds`` for what opens at ``local`` (HH:MM),
    ``opens_in`` seconds from now: both, when the wait stops short of it (the runtime left)."""
    if kind != "limit_wait":
        return f"waiting for the API (outage) until {local} ({format_wait(seconds)})"
    if seconds + 1 >= opens_in:  # a second's rounding is no cap
        return f"waiting for the usage window until {local} ({format_wait(seconds)})"
    return (
        f"window opens {local} ({format_wait(opens_in)}); "
        f"waiting {format_wait(seconds)}, the runtime left"
    )


class LoopWaits:
    """The loop's waits: for a usage window or out an outage, for an answer, while paused,
    and while the hour's requests are used."""

    def __init__(self, setup: LoopSetup, book: RunBook) -> None:
        self.setup = setup
        self.book = book
        self.requests_left: int | None = None
        """What ``[limits] max_requests_per_hour`` leaves the next agent (``None``: no limit)."""

    async def wait(
        self, kind: str, seconds: float, until: datetime, *, opens_in: float | None = None
    ) -> None:
        """Wait ``seconds`` by the wall clock (a suspend does not stretch it), or a stop;
        ``until`` is when the window opens, ``opens_in`` (default: from now) how far off that is
        in the loop's time."""
        local = until.astimezone().strftime("%H:%M")
        if opens_in is None:
            opens_in = (until - datetime.now(UTC)).total_seconds()
        self.setup.display.warn(wait_line(kind, seconds, local, opens_in))
        started = utc_timestamp()
        self.book.store.event(
            "wait_started", kind=kind, until=utc_timestamp(until), seconds=seconds
        )
        await self.setup.notifier.send(
            kind,
            {**self.book.summary(), "until": local, "detail": f"waiting {format_wait(seconds)}"},
        )
        scale = self.setup.time_scale
        deadline = datetime.now(UTC) + timedelta(seconds=seconds * scale)
        t0 = time.monotonic()
        while not self.setup.stop.stop.is_set() and not stop_requested(self.setup.project):
            left = (deadline - datetime.now(UTC)).total_seconds()
            if left <= 0:
                break
            # Poll the stop request each second (a file: `forgeflare stop` from another shell).
            with trio.move_on_after(min(left, 1.0)):
                await self.setup.stop.stop.wait()
        waited = round(time.monotonic() - t0, 3)
        self.book.record.totals.waited_seconds = round(
            self.book.record.totals.waited_seconds + waited, 3
        )
        self.book.record.waits.append(
            WaitRecord(kind=kind, started_at=started, duration=waited, until=utc_timestamp(until))
        )
        self.book.store.event("wait_ended", kind=kind, waited=waited)

    async def wait_for_answer(self, seconds: float, poll: float = 0.2) -> bool:
        """Wait up to ``seconds`` (wall clock) for ``answer.md``; ``True`` once it is there.

        Ends early on a stop (Ctrl+C or ``forgeflare stop``); the file is polled, since it is
        written from another terminal.
        """
        self.setup.display.warn(
            f"waiting up to {format_wait(seconds)} for an answer: forgeflare answer --dir "
            f'{self.setup.project} "TEXT"'
        )
        started = utc_timestamp()
        self.book.store.event("wait_started", kind="answer_wait", seconds=seconds)
        deadline = time.time() + seconds
        t0 = time.monotonic()
        answered = False
        while not self.setup.stop.stop.is_set() and not stop_requested(self.setup.project):
            if read_answer(self.book.store.dir) is not None:
                answered = True
                break
            left = deadline - time.time()
            if left <= 0:
                break
            with trio.move_on_after(min(left, poll)):
                await self.setup.stop.stop.wait()
        waited = round(time.monotonic() - t0, 3)
        self.book.record.totals.waited_seconds = round(
            self.book.record.totals.waited_seconds + waited, 3
        )
        self.book.record.waits.append(
            WaitRecord(kind="answer_wait", started_at=started, duration=waited)
        )
        self.book.store.event("wait_ended", kind="answer_wait", waited=waited, answered=answered)
        return answered

    async def hold_while_paused(self, poll: float = 0.2) -> None:
        """Wait while ``forgeflare pause`` holds the run, until ``unpause``, a stop or the
        runtime limit (paused time counts toward ``max_runtime``: the night is bounded)."""
        run_dir = self.book.store.dir
        if not pause_requested(run_dir):
            return
        done = self.book.record.iterations_done
        where = f" --dir {self.setup.project}" if self.setup.project != Path.cwd().resolve() else ""
        self.setup.display.warn(
            f"paused after iteration {done}: `forgeflare unpause{where}` goes on, "
            f"`forgeflare stop{where}` ends the run"
        )
        self.setup.display.hold(f"paused after iteration {done} (forgeflare unpause)")
        started = utc_timestamp()
        self.book.store.event("wait_started", kind="paused")
        t0 = time.monotonic()
        runtime = self.setup.limits.max_runtime
        while not self.setup.stop.stop.is_set() and not stop_requested(self.setup.project):
            if not pause_requested(run_dir) or (runtime and self.book.elapsed() >= runtime):
                break
            with trio.move_on_after(poll):
                await self.setup.stop.stop.wait()
        self.setup.display.hold(None)
        waited = round(time.monotonic() - t0, 3)
        self.book.record.waits.append(
            WaitRecord(kind="paused", started_at=started, duration=waited)
        )
        self.book.store.event("wait_ended", kind="paused", waited=waited)
        if not pause_requested(run_dir):
            self.setup.display.info("unpaused: going on")

    async def hold_for_requests(self, pending: Sequence[IterationRecord] = ()) -> None:
        """Wait while ``[limits] max_requests_per_hour`` is used up (like a usage window: the
        loop never finishes for it); then :attr:`requests_left` is what the agent may send.
        ``pending``: an iteration not yet recorded whose requests count (before its review)."""
        limit = self.setup.cfg.limits.max_requests_per_hour
        self.requests_left = None
        if not limit:
            return
        window = HOUR * self.setup.time_scale
        while not self.setup.stop.stop.is_set() and not stop_requested(self.setup.project):
            now = datetime.now(UTC)
            sent = sent_by_rows([*self.book.record.iterations, *pending])
            left, free_at = hour_allowance(sent, limit=limit, now=now, window=window)
            if free_at is None:
                self.requests_left = left
                return
            runtime = self.setup.limits.max_runtime
            if runtime and self.book.elapsed() >= runtime:
                return  # the checks between iterations finish the run: timeout
            self.setup.display.warn(
                f"the hour's {limit} request(s) are used (max_requests_per_hour)"
            )
            seconds = (free_at - now).total_seconds() / (self.setup.time_scale or 1.0)
            if runtime:
                seconds = min(seconds, max(0.0, runtime - self.book.elapsed()))
            until = now + timedelta(seconds=seconds)
            await self.wait("limit_wait", max(0.0, seconds), until)

    def take_user_hint(self) -> str | None:
        """The hint waiting for this iteration (taken once): the prompt starts with it."""
        hint = take_hint(self.book.store.dir)
        if hint is not None:
            self.setup.display.info(
                f"this iteration's prompt starts with your hint ({len(hint)} chars)"
            )
            self.book.store.event("hint_taken", chars=len(hint))
        return hint
