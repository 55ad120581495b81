"""The machine's usage windows: reset times per agent and account, shared by every loop.

One JSON file under the user's state directory (``platformdirs``: ``$XDG_STATE_HOME/forgeflare``
on Linux), ``{"windows": {"codex@https://api.openai.com/v1#3f2a…": {"until": "...", "reason":
"..."}, ...}}``, keyed ``BACKEND[:PROFILE]@ENDPOINT#ACCOUNT``
(:mod:`~forgeflare.supervisor.agents._windowkey`); 0.3's keys without ``@`` are dropped on read.
A loop that learns a window writes it here (under a lock, atomically), so another loop of the
same account starts on its fallback at once instead of hitting the limit again. Windows that
have reset are dropped on the next write; a damaged file reads as empty, and a file that is no
regular file (a FIFO, ``/dev/zero``) or an ``until`` more than 31 days ahead is ignored with one
line (once per process), never waited on.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import platformdirs

from forgeflare._clock import parse_time, utc_timestamp
from forgeflare.disk import atomic_write_text, read_limited_text
from forgeflare.supervisor.agents._fallback import Window
from forgeflare.supervisor.agents._windowkey import WindowKey, parse_window_key

__all__ = ["forget_windows", "read_windows", "record_window", "window_store_path"]


def window_store_path(env: Mapping[str, str]) -> Path:
    """``windows.json`` under the user's state directory (``XDG_STATE_HOME`` from ``env``)."""
    base = env.get("XDG_STATE_HOME")
    if base:
        return Path(base) / "forgeflare" / "windows.json"
    return Path(platformdirs.user_state_dir("forgeflare")) / "windows.json"


MAX_AHEAD = timedelta(days=31)
"""A window further ahead is damage (DESIGN: ignored with one line, never clamped)."""
_SAID: set[str] = set()


def _say_once(warn: Callable[[str], None] | None, line: str) -> None:
    if warn is not None and line not in _SAID:
        _SAID.add(line)
        warn(line)


def _too_far(until: datetime, now: datetime) -> bool:
    try:
        return until - now > MAX_AHEAD
    except OverflowError:  # 9999-12-31T23:59:59-05:00 is past datetime's end in UTC
        return True


def _decode(
    text: str, now: datetime, warn: Callable[[str], None] | None, source: Path
) -> dict[WindowKey, Window]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    rows = data.get("windows") if isinstance(data, dict) else None
    out: dict[WindowKey, Window] = {}
    for key, row in (rows if isinstance(rows, dict) else {}).items():
        try:
            spec = parse_window_key(str(key))
        except ValueError:
            continue
        until = parse_time(row.get("until")) if isinstance(row, dict) else None
        if until is None:
            continue
        if _too_far(until, now):
            shown = str(row.get("until"))[:40] if isinstance(row, dict) else "?"
            _say_once(
                warn, f"{source}: ignored {key!s:.60}'s window: until {shown} is over 31 days ahead"
            )
            continue
        out[spec] = Window(until, str(row.get("reason") or "usage limit"))
    return out


def read_windows(
    path: Path, *, now: datetime | None = None, warn: Callable[[str], None] | None = None
) -> dict[WindowKey, Window]:
    """The windows in the store (none when it is missing or damaged); ``warn`` gets one line
    for a file that is refused or a window too far ahead."""
    try:
        text = read_limited_text(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        _say_once(warn, f"{path}: ignored: {exc.strerror or exc}")
        return {}
    except UnicodeDecodeError:
        return {}
    return _decode(text, now or datetime.now(UTC), warn, path)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, windows: Mapping[WindowKey, Window], now: datetime) -> None:
    rows = {
        s.text: {"until": utc_timestamp(w.resets_at), "reason": w.reason}
        for s, w in sorted(windows.items())
        if w.resets_at is not None and w.resets_at > now
    }
    atomic_write_text(path, json.dumps({"windows": rows}, indent=2) + "\n", fsync=False)


def record_window(path: Path, spec: WindowKey, window: Window, now: datetime) -> None:
    """Add (or replace) ``spec``'s window; drop those that have reset. Raises OSError."""
    if window.resets_at is None:
        return  # a spent quota without a reset: this run's to know, not the machine's
    with _locked(path):
        windows = read_windows(path)
        windows[spec] = window
        _write(path, windows, now)


def forget_windows(path: Path, key: str | None, now: datetime) -> list[str]:
    """Forget the window stored under ``key`` (``None``: every window); the keys forgotten.

    Raises OSError. A missing store forgets nothing (and is not created)."""
    if not path.exists():
        return []
    with _locked(path):
        windows = read_windows(path)
        gone = [k for k in windows if key is None or k.text == key]
        for k in gone:
            del windows[k]
        _write(path, windows, now)
    return sorted(k.text for k in gone)
