"""Claude Code as the loop's agent with a key the API refuses: a failure retrying cannot fix.
The real, pinned CLI against the mock answering 401: one iteration, exit 12, Claude Code's own
line (``authentication_error: Invalid API key …``) in the finish reason."""

from __future__ import annotations

from pathlib import Path

from claude_code_support import claude_env, require_claude_code
from mockapi_support import MockAPI
from supervisor_agents.project import Project, base_env

REFUSED = {
    "error": {"status": 401, "type": "authentication_error", "message": "invalid x-api-key"},
    "repeat_for_ms": 600_000,  # every request, the side ones too
}


async def test_a_refused_key_ends_the_loop_in_one_iteration(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    claude = require_claude_code()
    server = mock_api({"responses": [REFUSED]})
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    env = base_env(**claude_env(tmp_path / "home", server.url, CLAUDE_CODE_MAX_RETRIES="0"))
    env.pop("FRESHER_ERROR_PAUSE")  # the real pause after an error: never reached
    env.update(
        FRESHER_AGENT_BACKEND="claude",
        FRESHER_AGENT_COMMAND=str(claude),
        FRESHER_MODE="planning",
        FRESHER_MAX_ITERATIONS="5",
        FRESHER_MAX_OUTAGE="1",  # were it waited out as an outage: not for long
        FORGEFLARE_TIME_SCALE="0",
    )
    done = await project.arun(env=env)
    record = project.record()
    (row,) = record["iterations"]
    assert done.code == 12, done.stdout + done.stderr
    assert (row["outcome"], row["transient"]) == ("api_error", False)
    assert row["detail"].startswith("authentication_error: ")
    assert record["finish_type"] == "error"
    assert "retrying cannot fix: authentication_error: " in record["finish_reason"]
