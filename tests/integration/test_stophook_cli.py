"""``forgeflare stop-hook start | status | cancel | install`` as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CMD = [sys.executable, "-m", "forgeflare", "stop-hook"]


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CMD, *args, "--project-dir", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_start_status_cancel(tmp_path: Path) -> None:
    out = cli(tmp_path, "start", "--mode", "task", "--max-iterations", "4", "--prompt", "Ship it")
    assert out.returncode == 0, out.stderr
    state = json.loads((tmp_path / ".forgeflare" / "loop-state.json").read_text())
    assert state["schema"] == 1
    assert state["event"] == "STATE"
    assert state["updated_at"].endswith("Z")
    assert state["stack"] == [{"mode": "task", "iter": 1, "max": 4, "prompt": "Ship it"}]

    status = cli(tmp_path, "status")
    assert status.returncode == 0
    assert f"run {state['run_id']} · STATE" in status.stdout
    assert "1. task  iteration 1/4  ← running" in status.stdout
    assert "prompt: Ship it" in status.stdout

    cancel = cli(tmp_path, "cancel")
    assert cancel.returncode == 0
    assert "cancelled" in cancel.stdout
    assert not (tmp_path / ".forgeflare" / "loop-state.json").exists()


def test_install_merges_is_idempotent_and_refuses_bad_json(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    existing = {
        "permissions": {"allow": ["Bash(make test)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    }
    settings.write_text(json.dumps(existing), encoding="utf-8")

    first = cli(tmp_path, "install")
    second = cli(tmp_path, "install")

    assert (first.returncode, second.returncode) == (0, 0)
    assert "nothing changed" in second.stdout
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == existing["permissions"]
    assert merged["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "say done"}]},
        {"hooks": [{"type": "command", "command": "forgeflare stop-hook"}]},
    ]

    settings.write_text("{not json", encoding="utf-8")
    bad = cli(tmp_path, "install")
    assert bad.returncode != 0
    assert bad.stderr.count("\n") == 1
    assert "settings.json: not valid JSON" in bad.stderr
    assert settings.read_text(encoding="utf-8") == "{not json"
