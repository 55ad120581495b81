"""Claude Code as the loop's agent with the API unreachable: an outage, waited out, with Claude
Code's own retries shown (the real, pinned CLI; a closed loopback port as the API)."""

from __future__ import annotations

import socket
from pathlib import Path

from claude_code_support import claude_env, require_claude_code
from supervisor_agents.project import Project, cli_agent_env


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then closed: the kernel refuses it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_unreachable_api_is_an_outage_with_retries_shown(tmp_path: Path) -> None:
    claude = require_claude_code()
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    cli_env = claude_env(
        tmp_path / "home",
        f"http://127.0.0.1:{closed_port()}",
        CLAUDE_CODE_MAX_RETRIES="1",  # Claude Code's own retries: one, not ten
    )
    env = cli_agent_env("claude", claude, cli_env, iterations=5, FRESHER_MAX_OUTAGE="1")
    done = await project.arun(env=env)
    record = project.record()
    rows = record["iterations"]
    assert done.code == 12, done.stdout + done.stderr
    assert record["finish_type"] == "error"
    assert "max_outage" in record["finish_reason"]
    assert len(rows) >= 2
    for row in rows:
        assert (row["outcome"], row["transient"]) == ("api_error", True)
        assert row["stop_reason"] is None  # not the result's subtype "success"
    assert [r["decision"] for r in rows[:-1]] == ["outage"] * (len(rows) - 1)
    assert "retrying the API: attempt 1 of 1" in done.stdout
    assert "success" not in record["finish_reason"]
