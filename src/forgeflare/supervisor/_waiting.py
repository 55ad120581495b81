"""The loop's waits between iterations: for a usage window, out an API outage, for an answer,
and while paused (``forgeflare pause``; a hint from ``forgeflare hint`` is taken here too).

When to wait and how long is :mod:`~forgeflare.supervisor._waits`' (pure); this is the shell: it
waits by the wall clock (a laptop suspend does not stretch it), ends early on a stop, records
the wait in ``run.json`` and ``events.jsonl`` and notifies.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trio

from forgeflare._clock import format_wait, utc_timestamp
from forgeflare.supervisor._blocked import read_answer
from forgeflare.supervisor._hand import hint_preamble, pause_requested, take_hint
from forgeflare.supervisor._hourly import HOUR, hour_allowance, sent_by_rows
from forgeflare.supervisor._loopstate import LoopState
from forgeflare.supervisor._records import IterationRecord, WaitRecord
from forgeflare.supervisor._stop import stop_requested

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


class LoopWaits(LoopState):
    """The waiting part of the loop (a base of the loop; its state is :class:`LoopState`)."""

    async def wait(
        self, kind: str, seconds: float, until: datetime, *, opens_in: float | None = None
    ) -> None:
        """Wait ``seconds`` by the wall clock (a suspend does not stretch it), or a stop;
        ``until`` is when the window opens, ``opens_in`` (default: from now) how far off that is
        in the loop's time."""
        local = until.astimezone().strftime("%H:%M")
        if opens_in is None:
            opens_in = (until - datetime.now(UTC)).total_seconds()
        self.display.warn(wait_line(kind, seconds, local, opens_in))
        started = utc_timestamp()
        self.store.event("wait_started", kind=kind, until=utc_timestamp(until), seconds=seconds)
        await self.notifier.send(
            kind,
            {**self.summary(), "until": local, "detail": f"waiting {format_wait(seconds)}"},
        )
        scale = self.time_scale
        deadline = datetime.now(UTC) + timedelta(seconds=seconds * scale)
        t0 = time.monotonic()
        while not self.stop.stop.is_set() and not stop_requested(self.project):
            left = (deadline - datetime.now(UTC)).total_seconds()
            if left <= 0:
                break
            # Poll the stop request each second (a file: `forgeflare stop` from another shell).
            with trio.move_on_after(min(left, 1.0)):
                await self.stop.stop.wait()
        waited = round(time.monotonic() - t0, 3)
        self.record.totals.waited_seconds = round(self.record.totals.waited_seconds + waited, 3)
        self.record.waits.append(
            WaitRecord(kind=kind, started_at=started, duration=waited, until=utc_timestamp(until))
        )
        self.store.event("wait_ended", kind=kind, waited=waited)

    async def wait_for_answer(self, seconds: float, poll: float = 0.2) -> bool:
        """Wait up to ``seconds`` (wall clock) for ``answer.md``; ``True`` once it is there.

        Ends early on a stop (Ctrl+C or ``forgeflare stop``); the file is polled, since it is
        written from another terminal.
        """
        self.display.warn(
            f"waiting up to {format_wait(seconds)} for an answer: forgeflare answer --dir "
            f'{self.project} "TEXT"'
        )
        started = utc_timestamp()
        self.store.event("wait_started", kind="answer_wait", seconds=seconds)
        deadline = time.time() + seconds
        t0 = time.monotonic()
        answered = False
        while not self.stop.stop.is_set() and not stop_requested(self.project):
            if read_answer(self.store.dir) is not None:
                answered = True
                break
            left = deadline - time.time()
            if left <= 0:
                break
            with trio.move_on_after(min(left, poll)):
                await self.stop.stop.wait()
        waited = round(time.monotonic() - t0, 3)
        self.record.totals.waited_seconds = round(self.record.totals.waited_seconds + waited, 3)
        self.record.waits.append(
            WaitRecord(kind="answer_wait", started_at=started, duration=waited)
        )
        self.store.event("wait_ended", kind="answer_wait", waited=waited, answered=answered)
        return answered

    async def hold_while_paused(self, poll: float = 0.2) -> None:
        """Wait while ``forgeflare pause`` holds the run, until ``unpause``, a stop or the
        runtime limit (paused time counts toward ``max_runtime``: the night is bounded)."""
        run_dir = self.store.dir
        if not pause_requested(run_dir):
            return
        done = self.record.iterations_done
        where = f" --dir {self.project}" if self.project != Path.cwd().resolve() else ""
        self.display.warn(
            f"paused after iteration {done}: `forgeflare unpause{where}` goes on, "
            f"`forgeflare stop{where}` ends the run"
        )
        self.display.hold(f"paused after iteration {done} (forgeflare unpause)")
        started = utc_timestamp()
        self.store.event("wait_started", kind="paused")
        t0 = time.monotonic()
        runtime = self.limits.max_runtime
        while not self.stop.stop.is_set() and not stop_requested(self.project):
            if not pause_requested(run_dir) or (runtime and self.elapsed() >= runtime):
                break
            with trio.move_on_after(poll):
                await self.stop.stop.wait()
        self.display.hold(None)
        waited = round(time.monotonic() - t0, 3)
        self.record.waits.append(WaitRecord(kind="paused", started_at=started, duration=waited))
        self.store.event("wait_ended", kind="paused", waited=waited)
        if not pause_requested(run_dir):
            self.display.info("unpaused: going on")

    async def hold_for_requests(self, pending: Sequence[IterationRecord] = ()) -> None:
        """Wait while ``[limits] max_requests_per_hour`` is used up (like a usage window: the
        loop never finishes for it); then :attr:`requests_left` is what the agent may send.
        ``pending``: an iteration not yet recorded whose requests count (before its review)."""
        limit = self.cfg.limits.max_requests_per_hour
        self.requests_left = None
        if not limit:
            return
        window = HOUR * self.time_scale
        while not self.stop.stop.is_set() and not stop_requested(self.project):
            now = datetime.now(UTC)
            sent = sent_by_rows([*self.record.iterations, *pending])
            left, free_at = hour_allowance(sent, limit=limit, now=now, window=window)
            if free_at is None:
                self.requests_left = left
                return
            runtime = self.limits.max_runtime
            if runtime and self.elapsed() >= runtime:
                return  # the checks between iterations finish the run: timeout
            self.display.warn(f"the hour's {limit} request(s) are used (max_requests_per_hour)")
            seconds = (free_at - now).total_seconds() / (self.time_scale or 1.0)
            if runtime:
                seconds = min(seconds, max(0.0, runtime - self.elapsed()))
            until = now + timedelta(seconds=seconds)
            await self.wait("limit_wait", max(0.0, seconds), until)

    def take_user_hint(self) -> str | None:
        """The hint waiting for this iteration (taken once), put first in its prompt."""
        hint = take_hint(self.store.dir)
        if hint is not None:
            self.preamble = hint_preamble(hint) + self.preamble
            self.display.info(f"this iteration's prompt starts with your hint ({len(hint)} chars)")
            self.store.event("hint_taken", chars=len(hint))
        return hint

    def summary(self) -> dict[str, Any]:
        rec = self.record
        return {
            "run_id": rec.run_id,
            "project_dir": rec.project_dir,
            "mode": rec.mode,
            "started_at": rec.started_at,
            "finished_at": rec.finished_at,
            "finish_type": rec.finish_type,
            "finish_reason": rec.finish_reason,
            "exit_code": rec.exit_code,
            "question": rec.question,
            "totals": {
                **rec.totals.model_dump(),
                "duration": round(self.elapsed(), 1),
            },
            "run_dir": str(self.store.dir),
        }
