"""Notifications: a message when a loop ends (and, if asked, on waits, outages, error streaks).

Two channels, either or both: a command from ``[notify] command`` that gets the run summary as
JSON on stdin, and notification URLs for apprise (Slack, Telegram, email, ntfy, desktop …).
URLs carry tokens, so they never come from the project's config: they come from
``FORGEFLARE_NOTIFY_URLS`` (whitespace or comma separated) or from ``notify.toml`` (``urls =
[...]``) in the user's config directory. apprise is an optional extra (``forgeflare[notify]``):
without it, URLs are reported as not sent, once. A notification that fails is logged and never
ends or fails the loop.

What to send (:func:`should_notify`) and what it says (:func:`render_message`) are pure.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

import trio

from forgeflare._units import format_cost, format_duration
from forgeflare.disk import CONFIG_LIMIT, read_limited_text
from forgeflare.platform import run_child

__all__ = [
    "NOTIFY_EVENTS",
    "NOTIFY_URLS_ENV",
    "Notifier",
    "NotifyEvent",
    "notify_preflight",
    "notify_urls",
    "render_message",
    "should_notify",
]


class NotifyEvent(StrEnum):
    """What a notification can be about; ``[notify] on`` picks (default: finish, blocked)."""

    FINISH = "finish"
    BLOCKED = "blocked"
    LIMIT_WAIT = "limit_wait"
    OUTAGE = "outage"
    ERROR_STREAK = "error_streak"


NOTIFY_EVENTS: tuple[str, ...] = tuple(NotifyEvent)
"""The events' names, as ``[notify] on`` spells them."""


class _Words(NamedTuple):
    """What a notification of one event says."""

    title: str
    """After ``forgeflare: PROJECT``."""
    first: str
    """The first line, after ``run ID:``."""
    detail: str = ""
    """``{detail}`` when the summary gives none."""


_WORDS = {
    NotifyEvent.FINISH: _Words("finished {finish}", "{finish}{why}"),
    NotifyEvent.BLOCKED: _Words("asks a question", "the agent asks:\n{detail}\nanswer: {answer}"),
    NotifyEvent.LIMIT_WAIT: _Words("waits for the usage window", "waiting until {until}"),
    NotifyEvent.OUTAGE: _Words("waits out an API outage", "{detail}", "transient API failures"),
    NotifyEvent.ERROR_STREAK: _Words(
        "has an error streak", "{detail}", "error iterations in a row"
    ),
}

NOTIFY_URLS_ENV = "FORGEFLARE_NOTIFY_URLS"


def should_notify(event: str, on: Iterable[str]) -> bool:
    """Is ``event`` one the user asked for? ``finish`` unless ``on`` says otherwise."""
    return event in set(on)


def _duration(seconds: object) -> str:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return "?"
    return format_duration(seconds)


def render_message(event: str, summary: Mapping[str, Any]) -> tuple[str, str]:
    """``(title, body)`` for one notification about ``summary`` (the run summary JSON)."""
    project = Path(str(summary.get("project_dir", "."))).name or "project"
    run_id = summary.get("run_id", "?")
    try:
        known: NotifyEvent | None = NotifyEvent(event)
    except ValueError:
        known = None  # an event of a newer loop: named as it is, never mistitled
    why = summary.get("finish_reason")
    fields = {
        "finish": summary.get("finish_type", "?"),
        "why": f" ({why})" if why else "",
        "until": summary.get("until", "?"),
        "detail": summary.get("detail", _WORDS[known].detail) if known else "",
        "answer": f'forgeflare answer --dir {summary.get("project_dir", ".")} "TEXT"',
    }
    if known is None:
        title, lines = f"forgeflare: {project} {event}", [f"run {run_id}: {event}"]
    else:
        words = _WORDS[known]
        title = f"forgeflare: {project} {words.title.format(**fields)}"
        lines = [f"run {run_id}: {words.first.format(**fields)}"]
    totals = summary.get("totals")
    if isinstance(totals, Mapping):
        cost = totals.get("cost_usd")
        spent = format_cost(cost if isinstance(cost, int | float) else None)
        lines.append(
            f"iterations {totals.get('iterations', '?')} · commits {totals.get('commits', '?')}"
            f" · {spent} · {_duration(totals.get('duration', summary.get('duration')))}"
        )
    return title, "\n".join(lines)


def notify_urls(env: Mapping[str, str], config_dir: Path | None) -> list[str]:
    """URLs from ``FORGEFLARE_NOTIFY_URLS``, else ``<config dir>/notify.toml``'s ``urls``."""
    raw = env.get(NOTIFY_URLS_ENV, "")
    if raw.strip():
        return [u for u in raw.replace(",", " ").split() if u]
    if config_dir is None:
        return []
    path = config_dir / "notify.toml"
    try:
        data = tomllib.loads(read_limited_text(path, limit=CONFIG_LIMIT))
    except FileNotFoundError:
        return []
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    urls = data.get("urls", [])
    return [str(u) for u in urls] if isinstance(urls, list) else []


def notify_preflight(urls: Sequence[str]) -> str | None:
    """Why notification URLs cannot be sent, said at the start of the night (not its end)."""
    if not urls:
        return None
    try:
        import apprise  # noqa: F401
    except ImportError:
        return (
            f"{len(urls)} notification URL(s) set but apprise is not installed: no "
            "notification will be sent (pip install 'forgeflare[notify]')"
        )
    return None


def _send_urls(urls: Sequence[str], title: str, body: str, timeout: float) -> str | None:
    try:
        import apprise
    except ImportError:
        return "notification URLs set but apprise is not installed (pip install forgeflare[notify])"
    sender = apprise.Apprise()
    bad = [u for u in urls if not sender.add(u)]
    if bad:
        return f"{len(bad)} notification URL(s) not understood by apprise"
    if not sender.notify(body=body, title=title, timeout=timeout):
        return "apprise could not deliver the notification"
    return None


async def _run_command(
    command: str, summary: Mapping[str, Any], cwd: Path, env: Mapping[str, str], timeout: float
) -> str | None:
    out = bytearray()
    try:
        done = await run_child(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            stdin=json.dumps(summary).encode(),
            on_output=out.extend,
            timeout=timeout,
        )
    except OSError as exc:
        return f"notify command could not start: {exc}"
    if done.timed_out:
        return f"notify command timed out after {timeout:g}s"
    if done.returncode != 0:
        last = (out.decode(errors="replace").strip().splitlines() or [""])[-1]
        return f"notify command exited {done.returncode}" + (f": {last}" if last else "")
    return None


@dataclass
class Notifier:
    """Sends notifications for one run; every failure goes to ``log``, never raises."""

    command: str = ""
    urls: Sequence[str] = ()
    on: Sequence[str] = ("finish", "blocked")
    cwd: Path = Path(".")
    env: Mapping[str, str] | None = None
    timeout: float = 30.0
    log: Callable[[str], None] = print

    @property
    def enabled(self) -> bool:
        return bool(self.command or self.urls)

    async def send(self, event: str, summary: Mapping[str, Any]) -> list[str]:
        """Notify about ``event`` if asked; returns the failures (also logged)."""
        if not self.enabled or not should_notify(event, self.on):
            return []
        payload = {"event": event, **summary}
        errors: list[str] = []
        if self.command:
            env = dict(os.environ if self.env is None else self.env)
            error = await _run_command(self.command, payload, self.cwd, env, self.timeout)
            if error:
                errors.append(error)
        if self.urls:
            title, body = render_message(event, summary)
            try:
                error = await trio.to_thread.run_sync(
                    _send_urls, self.urls, title, body, self.timeout
                )
            except Exception as exc:  # a notifier library must never end the loop
                error = f"notification failed: {exc}"
            if error:
                errors.append(error)
        for error in errors:
            self.log(f"notify: {error}")
        return errors
