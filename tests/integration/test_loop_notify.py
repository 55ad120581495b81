"""Notifications from a real loop: the [notify] command and an apprise URL on finish."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from http_support import json_receiver
from supervisor_agents.project import Project, base_env


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with json_receiver() as (port, got):
        yield f"json://127.0.0.1:{port}/", got


def test_finish_notifies_command_and_url(
    tmp_path: Path, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    pytest.importorskip("apprise", reason="apprise is the optional notify extra")
    url, got = receiver
    project = Project(tmp_path)
    project.write(
        ".fresher/config.toml",
        '[notify]\ncommand = "cat > notified.json"\n',
    )
    done = project.run(
        "--agent-cmd",
        "false",
        "--mode",
        "planning",
        env=base_env(FORGEFLARE_NOTIFY_URLS=url, FRESHER_MAX_CONSECUTIVE_ERRORS="1"),
    )
    assert done.code == 12, done.stderr
    summary = json.loads((project.dir / "notified.json").read_text())
    assert summary["event"] == "finish"
    assert summary["finish_type"] == "error"
    assert "1 error iteration in a row" in summary["finish_reason"]
    assert got
    assert got[0]["title"].endswith("finished error")


def test_a_failing_notifier_never_fails_the_loop(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write(".fresher/config.toml", '[notify]\ncommand = "exit 5"\n')
    done = project.run("--agent-cmd", "true", "--mode", "planning", "--max-iterations", "1")
    assert done.code == 10
    assert "notify: notify command exited 5" in done.stderr


def test_urls_without_apprise_are_a_warning_at_the_start(tmp_path: Path) -> None:
    """Notification URLs with no apprise to send them: said before the first iteration, not
    discovered at the end of the night."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "apprise.py").write_text("raise ImportError('apprise blocked for this test')\n")
    (tmp_path / "p").mkdir()
    project = Project(tmp_path / "p")
    env = base_env(FORGEFLARE_NOTIFY_URLS="json://127.0.0.1:9/", PYTHONPATH=str(blocked))
    done = project.run(
        "--agent-cmd", "true", "--max-iterations", "1", "--mode", "planning", env=env
    )
    said = done.stdout + done.stderr
    warning = "1 notification URL(s) set but apprise is not installed: no notification will be sent"
    assert warning in said
    assert said.index(warning) < said.index("iteration 1")
