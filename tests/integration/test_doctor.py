"""``forgeflare doctor``: every configured agent checked, with one live request for the own
agent against a real endpoint over loopback (the mock API, or a server that says 429)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_inprocess import run_cli
from http_support import QuietHandler, serving
from mockapi_support import MockAPI
from project_support import forgeflare


class _Limited(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"type":"error","error":{"type":"rate_limit_error","message":"limit"}}'
        self.send_response(429)
        self.send_header("retry-after", "3600")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def limited_api() -> Iterator[str]:
    with serving(_Limited) as port:
        yield f"http://127.0.0.1:{port}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "FRESHER_"))}
    env.update(extra)
    return env


def _project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "p" / ".fresher").mkdir(parents=True)
    (tmp_path / "p" / ".fresher" / "config.toml").write_text(config)
    return tmp_path / "p"


def test_the_own_agent_answers_and_a_claude_fallback_without_base_url_fails(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api({"responses": [], "when_exhausted": "end_turn"})
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    project = _project(
        tmp_path,
        f'[agent]\nfallback = ["claude:work"]\n[agent.profiles.work]\ncommand = "{fake}"\n',
    )
    env = _env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key", IS_SANDBOX="1")
    # the one real `doctor` process
    done = forgeflare(tmp_path, "doctor", "--dir", str(project), env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert f"forgeflare (primary): ok: the API at {server.url} answers" in lines
    (claude,) = [ln for ln in lines if ln.startswith("claude:work (fallback): FAIL: ")]
    assert f"ANTHROPIC_BASE_URL={server.url}" in claude
    (request,) = server.requests()
    assert request["body"]["max_tokens"] == 1  # a probe: it consumes no scripted response


def test_a_usage_limit_is_reported_not_a_failure(tmp_path: Path, limited_api: str) -> None:
    project = _project(tmp_path)
    env = _env(ANTHROPIC_API_URL=limited_api, ANTHROPIC_API_KEY="test-key")
    done = run_cli(["doctor", "--dir", str(project)], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "usage limit (429, retry-after 3600s)" in done.stdout


def test_a_bad_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    project = _project(tmp_path, "[agent]\nbackend = 3\n")
    done = run_cli(["doctor", "--dir", str(project)], cwd=tmp_path, env=_env())
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
