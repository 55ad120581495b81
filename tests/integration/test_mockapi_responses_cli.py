"""``forgeflare mock-api --api responses`` drives the real Codex CLI offline, as a user would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codex_support import codex_env, require_codex, write_codex_home
from mockapi_support import start_mock_process
from project_support import forgeflare


def test_codex_runs_against_the_responses_mock(tmp_path: Path) -> None:
    codex = require_codex()
    script = {"steps": [{"exec": "echo made > made.txt"}, {"text": "All done from the mock."}]}
    server = start_mock_process(
        script, directory=tmp_path / "mock", extra_args=["--api", "responses"]
    )
    try:
        home = write_codex_home(tmp_path / "codex-home", f"{server.url}/v1")
        work = tmp_path / "work"
        work.mkdir()
        done = subprocess.run(
            [
                str(codex),
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "danger-full-access",
                "-",
            ],
            cwd=work,
            env=codex_env(home, tmp_path / "tmp"),
            input="make the file",
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    texts = [e["item"].get("text") for e in events if e.get("type") == "item.completed"]
    assert "All done from the mock." in texts
    assert (work / "made.txt").read_text().strip() == "made"
    # --record: each request, its key redacted (only a hash of it).
    asked = server.requests()
    assert [r["path"] for r in asked] == ["/v1/responses"] * len(asked)
    assert len(asked) >= 2
    assert "test-key" not in server.record_path.read_text()


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ({"steps": []}, "steps must be a non-empty list"),
        ({"runs": [[{"text": "a"}], "x"]}, "runs[1] must be a non-empty list"),
        ({"steps": [{"nothing": 1}]}, "steps[0] needs one of"),
        ({"responses": []}, "'steps' or 'runs'"),
    ],
)
def test_a_bad_responses_script_is_one_line_and_exit_2(
    tmp_path: Path, script: dict[str, object], words: str
) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    done = forgeflare(tmp_path, "mock-api", "--api", "responses", "--script", str(path))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert words in line
