"""The Codex backend on the real Codex CLI (pinned in ``codex_support``), offline.

Each scenario runs a real loop (in this process; Codex is a real child) whose agent is the real
``codex exec --json`` talking to the project's Responses API over loopback. The first
iteration's row is checked (outcome, transient, resets_at, tokens, cost, stop_reason) and so is
the loop's next step (wait, stop, go on). Codex's own retries are set small in its config.

The streams Codex wrote are kept in ``tests/fixtures/codex/<version>/``; the live CLI must agree
with them in event names and usage keys (``FORGEFLARE_RECORD_CODEX=1`` rewrites them).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from codex_support import MODEL, VERSION, codex_env, require_codex, write_codex_home
from forgeflare._pricing import price_usd
from forgeflare.mockapi import ResponsesServer
from project_support import run_text
from supervisor_agents.project import CliLoop, Project, base_env, cli_agent_env, finished_loop

RECORDINGS = Path(__file__).parent.parent / "fixtures" / "codex" / VERSION
TAG = "All done.\n<loop-done>COMPLETE</loop-done>"
OK = {"text": TAG}
HIGH_DEMAND = "We’re currently experiencing high demand"


@pytest.fixture(scope="module")
def server() -> Iterator[ResponsesServer]:
    with ResponsesServer() as running:
        yield running


def http(status: int, kind: str, message: str, **headers: str) -> dict[str, Any]:
    error = {"type": kind, "code": kind, "message": message}
    return {"status": status, "headers": headers, "body": {"error": error}}


def usage_limit(resets: int, **headers: str) -> dict[str, Any]:
    step = http(429, "usage_limit_reached", "The usage limit has been reached", **headers)
    step["body"]["error"].update(plan_type="plus", resets_at=resets)
    return step


R429 = http(429, "rate_limit_exceeded", "Rate limit reached for requests", **{"retry-after": "0"})
R500 = http(500, "server_error", "boom")
R503 = http(503, "server_is_overloaded", "Selected model is at capacity.")
QUOTA = http(429, "insufficient_quota", "You exceeded your current quota.")


async def codex_loop(
    server: ResponsesServer,
    tmp_path: Path,
    name: str,
    *runs: list[dict[str, Any]],
    retries: tuple[int, int] = (0, 0),
    recordings: tuple[str, ...] = (),
    **settings: str,
) -> CliLoop:
    """A loop (planning mode, 3 iterations at most, no waiting) whose agent is the real Codex;
    the first iteration's stream agrees with the recording ``name`` (or the first iterations'
    with ``recordings``, in order)."""
    codex = require_codex()
    url = server.script(name, *runs)
    home = write_codex_home(
        tmp_path / "codex-home", url, request_retries=retries[0], stream_retries=retries[1]
    )
    project = Project(tmp_path / "project")
    project.dir.mkdir()
    env = cli_agent_env("codex", codex, codex_env(home, tmp_path / "tmp"), iterations=3, **settings)
    loop = await finished_loop(project, env)
    cut = "FRESHER_ITERATION_TIMEOUT" in settings
    for number, recording in enumerate(recordings or (name,), 1):
        log = (project.run_dirs()[0] / f"iteration-{number:03d}.log").read_text()
        _check_recording(recording, log, tmp_path, cut=cut)
    return loop


# --- recordings ---------------------------------------------------------------------------


def shape(stream: str) -> list[str]:
    """What must not drift between Codex versions: event names (with item types) and the
    usage keys."""
    out: list[str] = []
    for line in stream.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = str(event.get("type"))
        item = event.get("item")
        if isinstance(item, dict):
            kind += f":{item.get('type')}"
        if isinstance(event.get("usage"), dict):
            kind += "(" + ",".join(sorted(event["usage"])) + ")"
        if kind == "error" and str(event.get("message", "")).startswith("Reconnecting..."):
            kind += ":retry"
        out.append(kind)
    return out


def _check_recording(name: str, live: str, tmp_path: Path, *, cut: bool = False) -> None:
    """The live stream agrees with the recording (one the loop cut short: up to the cut)."""
    path = RECORDINGS / f"{name}.jsonl"
    if os.environ.get("FORGEFLARE_RECORD_CODEX") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        # no machine paths in the repository
        path.write_text(live.replace(str(tmp_path), "$TMP").replace(str(Path.home()), "~"))
    assert path.exists(), f"no recording of {name} for Codex {VERSION}"
    live_shape, recorded = shape(live), shape(path.read_text())
    if cut:
        n = min(len(live_shape), len(recorded))
        live_shape, recorded = live_shape[:n], recorded[:n]
    assert live_shape == recorded, f"Codex {VERSION} no longer writes {name}"


CUT = frozenset({"cut", "killed"})
"""Recordings of an iteration the loop cut short: they agree up to the cut."""


def test_recordings_name_their_version() -> None:
    assert VERSION in [p.name for p in RECORDINGS.parent.iterdir()]
    assert len(list(RECORDINGS.glob("*.jsonl"))) >= 19


@pytest.mark.parametrize(
    "older", sorted(p.name for p in RECORDINGS.parent.iterdir() if p.name != VERSION)
)
def test_older_recordings_agree_with_the_pinned_ones(older: str) -> None:
    """The recordings of earlier pins stay as fixtures: what forgeflare reads did not change."""
    for path in sorted((RECORDINGS.parent / older).glob("*.jsonl")):
        pinned = RECORDINGS / path.name
        assert pinned.exists(), f"{path.name} of Codex {older} has no recording for {VERSION}"
        old, new = shape(path.read_text()), shape(pinned.read_text())
        if path.stem in CUT:
            n = min(len(old), len(new))
            old, new = old[:n], new[:n]
        assert old == new, f"{path.name}: Codex {VERSION} writes what {older} did not"


def test_shape_sees_a_renamed_event_or_usage_key() -> None:
    recorded = (RECORDINGS / "cache.jsonl").read_text()
    assert shape(recorded.replace("cache_write_input_tokens", "cache_creation")) != shape(recorded)
    assert shape(recorded.replace("turn.completed", "turn.done")) != shape(recorded)


# --- scenarios ----------------------------------------------------------------------------


def outage(row: dict[str, Any]) -> bool:
    """The row of a transient API failure, followed by an outage wait."""
    return (row["outcome"], row["transient"], row["decision"]) == ("api_error", True, "outage")


def cost(tokens: dict[str, int]) -> float:
    value = price_usd(MODEL, tokens, provider="openai")
    assert value is not None
    return value


def iso(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def when(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(row["resets_at"].replace("Z", "+00:00"))


async def test_plain(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(
        server, tmp_path, "plain", [{"text": "hello"}], FRESHER_MAX_ITERATIONS="1"
    )
    assert loop.done.code == 10, loop.done.stderr
    (row,) = loop.rows
    tokens = {"input": 120, "output": 12, "cache_read": 0, "cache_write": 0}
    assert (row["outcome"], row["resets_at"]) == ("ok", None)
    assert not row["transient"]
    assert (row["tokens"], row["model"], row["stop_reason"]) == (tokens, MODEL, "turn.completed")
    assert row["cost_usd"] == pytest.approx(cost(tokens))
    assert row["decision"] == "max_iterations"
    assert "final None" not in loop.done.stdout
    assert "hello" in loop.done.stdout


async def test_the_model_from_model_wins_over_codex_config(
    server: ResponsesServer, tmp_path: Path
) -> None:
    loop = await codex_loop(server, tmp_path, "model", [OK], FRESHER_MODEL="gpt-5")
    (row,) = loop.rows
    assert row["model"] == "gpt-5"
    assert server.requests("model")[0]["model"] == "gpt-5"  # what Codex asked for
    tokens = {"input": 120, "output": 12, "cache_read": 0, "cache_write": 0}
    assert row["cost_usd"] == pytest.approx(price_usd("gpt-5", tokens, provider="openai"))


async def test_completion_tag(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "tag", [OK])
    assert loop.done.code == 0, loop.done.stderr
    (row,) = loop.rows
    assert (row["outcome"], row["signal"], row["decision"]) == (
        "ok",
        TAG.split("\n")[1],
        "complete",
    )
    assert row["cost_usd"] > 0


async def test_shell(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "shell", [{"exec": "echo made > made.txt"}, OK])
    assert loop.done.code == 0, loop.done.stderr
    assert (loop.project.dir / "made.txt").read_text() == "made\n"
    (row,) = loop.rows
    # two requests in one turn, each 120 in / 12 out
    assert row["tokens"] == {"input": 240, "output": 24, "cache_read": 0, "cache_write": 0}
    assert "▸ Bash" in loop.done.stdout


async def test_patch(server: ResponsesServer, tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+patched\n*** End Patch\n"
    loop = await codex_loop(server, tmp_path, "patch", [{"patch": patch}, OK])
    assert loop.done.code == 0, loop.done.stderr
    assert (loop.project.dir / "notes.txt").read_text() == "patched\n"
    assert "▸ Edit" in loop.done.stdout


async def test_cached_and_cache_write_usage(server: ResponsesServer, tmp_path: Path) -> None:
    usage = {"input": 10_000, "output": 500, "cached": 6_000, "cache_write": 3_000}
    loop = await codex_loop(server, tmp_path, "cache", [{"text": TAG, "usage": usage}])
    (row,) = loop.rows
    tokens = {"input": 1_000, "output": 500, "cache_read": 6_000, "cache_write": 3_000}
    assert row["tokens"] == tokens
    assert row["cost_usd"] == pytest.approx(cost(tokens))


async def test_429_then_ok(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "r429-ok", [{**R429, "times": 2}, OK], retries=(0, 3))
    assert loop.done.code == 0, loop.done.stderr
    (row,) = loop.rows
    assert (row["outcome"], row["decision"]) == ("ok", "complete")
    out = loop.done.stdout
    assert "retrying the API: attempt 1 of 3" in out
    assert "retrying the API: attempt 2 of 3" in out
    assert "error:" not in out


async def test_429_throughout_is_no_usage_window(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "r429-all", [R429], [OK], retries=(0, 1))
    assert loop.done.code == 0, loop.done.stderr
    first, second = loop.rows
    assert (first["outcome"], first["transient"], first["resets_at"]) == ("api_error", True, None)
    assert first["decision"] == "outage"
    assert first["stop_reason"] == "turn.failed"
    assert (second["outcome"], second["decision"]) == ("ok", "complete")
    assert "usage window" not in loop.done.stdout + loop.done.stderr
    assert loop.done.stdout.count("failed: exceeded retry limit, last status: 429") == 1


@pytest.fixture
def local_zone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The machine's time zone for this test: Codex (a child) and the loop (this process)."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("local_zone", ["UTC", "Asia/Kolkata"], indirect=True)
async def test_usage_limit_today(server: ResponsesServer, tmp_path: Path, local_zone: str) -> None:
    """Codex prints the reset in the machine's local time ("try again at 3:55 AM."): read in
    that zone, whatever it is."""
    resets = int(time.time()) + 3600
    name = f"usage-today-{local_zone.replace('/', '-')}"
    loop = await codex_loop(server, tmp_path, name, [usage_limit(resets)], [OK])
    assert loop.done.code == 0, loop.done.stderr
    first, second = loop.rows
    assert first["outcome"] == "rate_limited"
    assert not first["transient"]
    # Codex says "try again at 10:25 PM" (local time, to the minute)
    assert 0 <= (iso(resets) - when(first)).total_seconds() < 60
    assert first["decision"] == "limit_wait"
    assert loop.record["waits"][0]["kind"] == "limit_wait"
    assert second["decision"] == "complete"
    assert "waiting for the usage window" in loop.done.stderr + loop.done.stdout


@dataclass(frozen=True)
class TwoWindows:
    """One loop over two usage limits in turn, then the work: a Codex start fewer than a loop
    each (the first limit's window names no structured reset, so nothing carries over)."""

    loop: CliLoop
    later: int
    session: int


@pytest.fixture(scope="module")
def two_windows(server: ResponsesServer, tmp_path_factory: pytest.TempPathFactory) -> TwoWindows:
    """Read-only for its tests: the first iteration's limit resets another day (Codex words
    it), the second's in 5000 s, also in the headers Codex keeps in its session file."""
    tmp = tmp_path_factory.mktemp("two-windows")
    later, session = int(time.time()) + 3 * 86400, int(time.time()) + 5000
    headers = {
        "x-codex-primary-used-percent": "100",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": str(session),
    }
    runs = [usage_limit(later)], [usage_limit(session, **headers)], [OK]
    recordings = ("usage-later", "usage-session")
    loop = trio.run(partial(codex_loop, server, tmp, "two-windows", *runs, recordings=recordings))
    return TwoWindows(loop, later, session)


def test_usage_limit_another_day(two_windows: TwoWindows) -> None:
    first = two_windows.loop.rows[0]
    assert first["outcome"] == "rate_limited"
    # "Jan 4th, 2027 9:25 PM"
    assert 0 <= (iso(two_windows.later) - when(first)).total_seconds() < 60
    assert first["decision"] == "limit_wait"


def test_usage_limit_from_the_session_file(two_windows: TwoWindows) -> None:
    second = two_windows.loop.rows[1]
    assert second["outcome"] == "rate_limited"
    assert when(second) == iso(two_windows.session)  # to the second: the structured reset


async def test_500s_then_ok(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "r500-ok", [{**R500, "times": 2}, OK], retries=(3, 0))
    assert loop.done.code == 0, loop.done.stderr
    (row,) = loop.rows
    assert (row["outcome"], row["decision"]) == ("ok", "complete")


@pytest.mark.parametrize(("name", "retries"), [("r500-all", (1, 0)), ("r500-turns", (1, 2))])
async def test_500s_throughout_are_an_outage(
    server: ResponsesServer, tmp_path: Path, name: str, retries: tuple[int, int]
) -> None:
    loop = await codex_loop(server, tmp_path, name, [R500], [OK], retries=retries)
    assert loop.done.code == 0, loop.done.stderr
    first, second = loop.rows
    assert (first["outcome"], first["transient"], first["decision"]) == (
        "api_error",
        True,
        "outage",
    )
    assert second["decision"] == "complete"
    assert loop.done.stdout.count(HIGH_DEMAND) == 1 + retries[1]  # retries are retries
    assert "waiting for the API (outage)" in loop.done.stderr + loop.done.stdout


async def test_500s_until_max_outage(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(
        server, tmp_path, "r500-outage", [R500], FRESHER_MAX_OUTAGE="1", FRESHER_MAX_ITERATIONS="0"
    )
    assert loop.done.code == 12, loop.done.stderr
    assert loop.record["finish_type"] == "error"
    assert {r["outcome"] for r in loop.rows} == {"api_error"}
    assert "max_outage" in (loop.record.get("finish_reason") or "")


async def test_503_overload(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "r503", [R503], [OK], retries=(1, 0))
    first = loop.rows[0]
    assert (first["outcome"], first["transient"], first["decision"]) == (
        "api_error",
        True,
        "outage",
    )
    assert loop.done.code == 0


async def test_a_cut_stream(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "cut", [{"cut": True}], [OK], retries=(0, 1))
    first = loop.rows[0]
    assert (first["outcome"], first["transient"], first["decision"]) == (
        "api_error",
        True,
        "outage",
    )
    assert "retrying the API: attempt 1 of 1 (stream disconnected" in loop.done.stdout


async def test_429s_then_500s_are_an_outage(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(
        server, tmp_path, "r429-r500", [{**R429, "times": 2}, R500], [OK], retries=(0, 3)
    )
    first = loop.rows[0]
    assert (first["outcome"], first["transient"], first["decision"]) == (
        "api_error",
        True,
        "outage",
    )
    assert "usage window" not in loop.done.stdout + loop.done.stderr


async def test_quota_exhausted_stops_at_once(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(server, tmp_path, "quota", [QUOTA], retries=(2, 2))
    assert loop.done.code == 21, loop.done.stderr
    (row,) = loop.rows
    assert (row["outcome"], row["decision"], row["resets_at"]) == ("quota", "quota", None)
    assert not row["transient"]
    assert loop.record["finish_type"] == "quota"
    assert "billing" in loop.record["finish_reason"]
    assert len(server.requests("quota")) == 1  # nobody retried


async def test_a_killed_iteration_saw_no_turn_end(server: ResponsesServer, tmp_path: Path) -> None:
    loop = await codex_loop(
        server,
        tmp_path,
        "killed",
        [{"exec": "sleep 30"}],
        FRESHER_ITERATION_TIMEOUT="1.5",
        FRESHER_AGENT_KILL_GRACE="0.2",
        FRESHER_MAX_ITERATIONS="1",
    )
    (row,) = loop.rows
    assert row["outcome"] == "timed_out"
    assert row["stop_reason"] is None
    assert row["decision"] == "max_iterations"
    assert loop.done.code == 10


def test_max_cost_stops_a_codex_loop(server: ResponsesServer, tmp_path: Path) -> None:
    codex = require_codex()
    usage = {"input": 10_000, "output": 1_000, "cached": 0, "cache_write": 0}
    url = server.script("budget", [{"text": "working on it", "usage": usage}])
    home = write_codex_home(tmp_path / "codex-home", url)
    project = Project(tmp_path / "project")
    project.dir.mkdir()
    env = base_env(**codex_env(home, tmp_path / "tmp"))
    done = run_text(
        [
            sys.executable, "-m", "forgeflare", "loop", "--dir", str(project.dir),
            "--backend", "codex", "--agent-cmd", str(codex), "--mode", "planning",
            "--max-cost", "0.02", "--max-iterations", "5",
        ],
        env=env,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 17, done.stderr
    record = project.record()
    assert record["finish_type"] == "budget"
    assert len(record["iterations"]) == 1
    assert record["iterations"][0]["cost_usd"] > 0.02
