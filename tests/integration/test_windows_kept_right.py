"""Usage windows kept right, with the real loop and the mock API (a 429 with a reset).

A window is the account's at one endpoint, stored with its true reset: a loop with little
runtime left that meets a 2-hour window falls back at once, a loop on another endpoint is not
held by it, a loop held by it says the window and its wait capped by the runtime left, and
`forgeflare windows` lists and forgets it.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio

from cli_inprocess import forgeflare_here
from mockapi_support import MockAPI, MockServer, start_mock_server
from project_support import forgeflare
from supervisor_agents.project import Done, Project

LIMIT = {
    "error": {
        "status": 429,
        "type": "rate_limit_error",
        "headers": {"retry-after": "7200"},  # a usage window: 2 h
    }
}


def _project(root: Path, config: str) -> Path:
    project = root
    (project / ".fresher").mkdir(parents=True)
    (project / "IMPLEMENTATION_PLAN.md").write_text("- [ ] task\n")
    (project / ".fresher" / "config.toml").write_text(
        "[fresher]\nsmart_termination = false\n[limits]\nstall_after = 0\n" + config
    )
    return project


def _fallback_config(fallback_url: str, runtime: str = "3m") -> str:
    return (
        f'max_runtime = "{runtime}"\n'
        '[agent]\nfallback = ["forgeflare:cheap"]\n'
        f'[agent.profiles.cheap]\nenv = {{ ANTHROPIC_API_URL = "{fallback_url}" }}\n'
    )


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ANTHROPIC_API_URL=url,
        ANTHROPIC_API_KEY="test-key",
        FORGEFLARE_TIME_SCALE="1",
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return env


async def _loop(project: Path, env: dict[str, str], *args: str) -> Done:
    """``forgeflare loop --mode building ARGS`` in ``project``, the loop in this process (its
    agents are real processes; the console script's loop runs in the e2e tests)."""
    return await Project(project).arun("--mode", "building", *args, env=env)


def _rows(project: Path) -> list[tuple[str, str, str]]:
    (run,) = sorted((project / ".fresher" / "runs").glob("*/run.json"))
    data = json.loads(run.read_text())
    return [(it["backend"], it["profile"], it["outcome"]) for it in data["iterations"]]


def _store(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "state" / "forgeflare" / "windows.json"
    windows: dict[str, Any] = json.loads(path.read_text())["windows"]
    return windows


@dataclass(frozen=True)
class Limited:
    """A loop whose primary met a 2-hour window with 3 minutes of runtime left (it fell back),
    shared by this module's tests: read only; a test copies its state folder to change it."""

    root: Path
    primary: MockServer
    fallback: MockServer
    started: datetime
    done: Done

    @property
    def project(self) -> Path:
        return self.root / "p"

    def state_into(self, tmp_path: Path) -> None:
        """The machine's window store as this loop left it, now ``tmp_path``'s own."""
        shutil.copytree(self.root / "state", tmp_path / "state")


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Limited]:
    root = tmp_path_factory.mktemp("limited")
    primary = start_mock_server(
        {"responses": [LIMIT], "when_exhausted": "end_turn"}, directory=root / "primary"
    )
    fallback = start_mock_server(
        {"responses": [], "when_exhausted": "end_turn"}, directory=root / "fallback"
    )
    try:
        project = _project(root / "p", _fallback_config(fallback.url))
        started = datetime.now(UTC)
        run = functools.partial(_loop, project, _env(root, primary.url), "--max-iterations", "2")
        yield Limited(root, primary, fallback, started, trio.run(run))
    finally:
        primary.stop()
        fallback.stop()


async def test_a_two_hour_window_with_three_minutes_left_falls_back_at_once(
    tmp_path: Path, limited: Limited
) -> None:
    primary, project, started, done = (
        limited.primary,
        limited.project,
        limited.started,
        limited.done,
    )
    limited.state_into(tmp_path)
    assert done.code == 10, done.stderr[-3000:]
    # (a rate-limited iteration does not count toward max_iterations)
    rows = _rows(project)
    assert rows[0] == ("forgeflare", "", "rate_limited")
    assert rows[1:] == [("forgeflare", "cheap", "ok")] * 2
    assert "agent forgeflare -> forgeflare:cheap" in done.stderr
    # The machine's store holds the window's true reset (2 h), not the 3 minutes left.
    ((key, row),) = _store(tmp_path).items()
    assert key.startswith(f"forgeflare@{primary.url}#")
    assert "test-key" not in key
    until = datetime.fromisoformat(row["until"].replace("Z", "+00:00"))
    assert until >= started + timedelta(hours=1, minutes=59)
    # A loop without a fallback, same endpoint and key, finds the window in the store: its wait
    # line says when the window opens and that the wait is capped by the runtime left. (No
    # agent runs before the wait, so a short runtime cannot end it first on a slow machine; 8 s
    # leaves the start before the first check room on a loaded one.)
    capped = _project(tmp_path / "capped", 'max_runtime = "8s"\n')
    done = await _loop(capped, _env(tmp_path, primary.url))
    assert done.code == 14, done.stderr[-3000:]  # timeout: max_runtime
    line = next(ln for ln in done.stderr.splitlines() if "window opens" in ln)
    assert "(1h 59m)" in line or "(2h 00m)" in line
    assert line.endswith(", the runtime left")
    assert len(primary.requests()) == 1  # the window held it: the primary was not asked
    # `forgeflare windows` lists it; `windows clear KEY` forgets it.
    env = _env(tmp_path, primary.url)
    listed = forgeflare(tmp_path, "windows", env=env)  # the one real `windows` process
    assert listed.returncode == 0, listed.stderr
    assert key in listed.stdout
    assert "usage limit" in listed.stdout
    unknown = forgeflare_here(tmp_path, "windows", "clear", "forgeflare", env=env)
    assert unknown.returncode == 2
    assert len(unknown.stderr.strip().splitlines()) == 1
    cleared = forgeflare_here(tmp_path, "windows", "clear", key, env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert f"forgot {key}" in cleared.stdout
    assert _store(tmp_path) == {}
    assert "no usage window known" in forgeflare_here(tmp_path, "windows", env=env).stdout


async def test_a_window_from_one_endpoint_does_not_hold_a_loop_on_another(
    tmp_path: Path, mock_api: MockAPI, limited: Limited
) -> None:
    # The window comes from the shared loop (its runtime left does not change what is stored).
    fallback, done = limited.fallback, limited.done
    limited.state_into(tmp_path)
    assert done.code == 10, done.stderr[-3000:]
    assert len(_store(tmp_path)) == 1
    # Same config, another endpoint for the primary: it runs there, not on the fallback.
    other = mock_api({"responses": [], "when_exhausted": "end_turn"})
    second = _project(tmp_path / "second", _fallback_config(fallback.url, "1h"))
    asked = len(fallback.requests())
    done = await _loop(second, _env(tmp_path, other.url), "--max-iterations", "1")
    assert done.code == 10, done.stderr[-3000:]
    assert _rows(second) == [("forgeflare", "", "ok")]
    assert len(fallback.requests()) == asked
    # The same endpoint with the same key is held: that loop starts on the fallback.
    third = _project(tmp_path / "third", _fallback_config(fallback.url, "1h"))
    done = await _loop(third, _env(tmp_path, limited.primary.url), "--max-iterations", "1")
    assert done.code == 10, done.stderr[-3000:]
    assert _rows(third) == [("forgeflare", "cheap", "ok")]
    assert len(limited.primary.requests()) == 1
