"""The ``claude`` backend with the real, pinned Claude Code CLI against ``forgeflare mock-api``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from claude_code_support import claude_env
from mockapi_support import MockAPI, MockServer
from project_support import run_text
from supervisor_agents.project import Done, Project


def text(t: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": t}],
        "stop_reason": "end_turn",
        "usage": usage or {"input_tokens": 500, "output_tokens": 40},
    }


def loop_env(tmp_path: Path, server: MockServer, **extra: str) -> dict[str, str]:
    return claude_env(
        tmp_path / "home",
        server.url,
        FORGEFLARE_TIME_SCALE="0.001",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        **extra,
    )


def claude_loop_args(claude: Path, *args: str) -> list[str]:
    """A planning loop's arguments with the pinned Claude Code as its agent."""
    return ["--backend", "claude", "--agent-cmd", str(claude), "--mode", "planning", *args]


def run_claude_loop(project: Project, claude: Path, env: dict[str, str], *args: str) -> Done:
    """A planning loop in ``project`` with the pinned Claude Code as its agent: a real
    ``forgeflare loop`` process (what its terminal shows is part of the test)."""
    return project.run(*claude_loop_args(claude, *args), env=env, timeout=180)


def result_lines(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "result":
            out.append(event)
    return out


def test_two_iteration_claude_code_loop(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    tool = {
        "content": [
            {"type": "text", "text": "Looking around."},
            {"type": "tool_use", "name": "Bash", "input": {"command": "echo hello > hi.txt"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1200, "output_tokens": 60, "cache_read_input_tokens": 300},
    }
    server = mock_api(
        {
            "responses": [
                tool,
                text("First part done; more to do."),
                text("All done.\n\n<loop-done>COMPLETE</loop-done>"),
            ]
        }
    )
    done = run_claude_loop(project, claude_code, loop_env(tmp_path, server))
    assert done.code == 0, done.stderr[-3000:]
    rec = project.record()
    assert rec["finish_type"] == "complete"
    rows = rec["iterations"]
    assert [r["outcome"] for r in rows] == ["ok", "ok"]
    assert rows[1]["signal"] == "<loop-done>COMPLETE</loop-done>"
    run_dir = project.run_dirs()[0]
    for row in rows:
        (result,) = result_lines(run_dir / row["log"])
        usage = result["usage"]
        assert row["tokens"] == {
            "input": usage["input_tokens"],
            "output": usage["output_tokens"],
            "cache_read": usage["cache_read_input_tokens"],
            "cache_write": usage["cache_creation_input_tokens"],
        }
        assert row["cost_usd"] == result["total_cost_usd"]
        assert row["session_id"] == result["session_id"]
    assert rows[0]["tokens"]["input"] >= 1200
    assert (project.dir / "hi.txt").read_text() == "hello\n"
    # the terminal shows what happened, not Claude Code's JSON
    assert "▸ Bash  echo hello > hi.txt" in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith('{"type"')]
    assert "■ ok · " in done.stdout


async def test_usage_limit_is_rate_limited_with_its_reset(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    """The loop in the test process (its record is the point; Claude Code is a real process);
    the window resets in 5 min: a 0.3 s wait at the tests' time scale."""
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    reset = int(time.time()) + 300
    server = mock_api(
        {
            "responses": [
                {
                    "error": {
                        "status": 429,
                        "type": "rate_limit_error",
                        "message": f"Claude AI usage limit reached|{reset}",
                        "headers": {
                            "anthropic-ratelimit-unified-status": "rejected",
                            "anthropic-ratelimit-unified-reset": str(reset),
                            "retry-after": "300",
                        },
                    }
                },
                text("Working on it."),
            ]
        }
    )
    args = claude_loop_args(claude_code, "--max-iterations", "1")
    done = await project.arun(*args, env=loop_env(tmp_path, server))
    assert done.code == 10, done.stderr[-3000:]
    rec = project.record()
    first = rec["iterations"][0]
    assert first["outcome"] == "rate_limited"
    assert first["resets_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert rec["waits"][0]["kind"] == "limit_wait"
    assert rec["finish_type"] != "complete"
    assert rec["iterations"][1]["outcome"] == "ok"


def test_exhausted_script_stops_claude_code_at_once(
    tmp_path: Path, mock_api: MockAPI, claude_code: Path
) -> None:
    server = mock_api({"responses": [], "when_exhausted": "error"})
    work = tmp_path / "w"
    work.mkdir()
    done = run_text(
        [str(claude_code), "-p", "--output-format", "stream-json", "--verbose", "hi"],
        cwd=work,
        env=claude_env(tmp_path / "home", server.url),
        timeout=120,
    )
    assert done.returncode != 0
    messages = [r for r in server.requests() if r["path"] == "/v1/messages"]
    assert len(messages) == 1  # x-should-retry: false: no retries for minutes


def test_side_requests_do_not_consume_the_script(tmp_path: Path, mock_api: MockAPI) -> None:
    import httpx

    server = mock_api({"responses": [text("the conversation")]})
    side = {
        "model": "claude-haiku-4-5",
        "max_tokens": 64,
        "system": "Generate a short title for this conversation.",
        "messages": [{"role": "user", "content": "hello"}],
    }
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    got = httpx.post(f"{server.url}/v1/messages", json=side, headers=headers).json()
    assert got["content"][0]["text"] == "Loop session"
    real = {**side, "system": "You are an agent.", "tools": [{"name": "Bash", "input_schema": {}}]}
    got = httpx.post(f"{server.url}/v1/messages", json=real, headers=headers).json()
    assert got["content"][0]["text"] == "the conversation"
