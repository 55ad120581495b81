"""``forgeflare run`` as a real process against ``forgeflare mock-api`` over loopback."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_support import (
    read_json,
    run_agent,
    run_agent_here,
    start_agent_in_bash,
    text_response,
    tool_response,
    tool_results,
    with_one_call,
)
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from platform_support import alive, live_group_members


def test_all_five_tools_end_to_end(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(
        {
            "responses": [
                tool_response(
                    (
                        "Edit",
                        {
                            "file_path": "notes/hello.txt",
                            "old_str": "",
                            "new_str": "hello forgeflare\n",
                        },
                    ),
                    text="Creating the file.",
                ),
                tool_response(
                    ("Read", {"file_path": "notes/hello.txt"}),
                    ("Glob", {"pattern": "**/*.txt"}),
                    ("Grep", {"pattern": "forgeflare"}),
                ),
                tool_response(("Bash", {"command": "cat notes/hello.txt"})),
                tool_response(("Read", {"file_path": "missing.txt"})),
                text_response("All done."),
            ]
        }
    )
    proc = run_agent(tmp_path, server.url, "create a note")
    assert proc.returncode == 0, proc.stderr
    assert "All done." in proc.stdout
    assert (tmp_path / "notes" / "hello.txt").read_text() == "hello forgeflare\n"

    requests = server.requests()
    assert len(requests) == 5
    first = requests[0]
    assert first["headers"]["x-api-key"] == "[redacted]"  # sent, and kept out of the file
    assert first["headers"]["anthropic-version"] == "2023-06-01"
    assert first["body"]["stream"] is True
    assert [t["name"] for t in first["body"]["tools"]] == ["Read", "Glob", "Bash", "Edit", "Grep"]

    edit = tool_results(requests[1])
    assert [r["tool_use_id"] for r in edit] == ["toolu_0"]
    assert not edit[0].get("is_error", False)

    read, glob, grep = tool_results(requests[2])
    assert [r["tool_use_id"] for r in (read, glob, grep)] == ["toolu_0", "toolu_1", "toolu_2"]
    assert "hello forgeflare" in read["content"]
    assert "notes/hello.txt" in glob["content"]
    assert "hello.txt" in grep["content"]
    assert "forgeflare" in grep["content"]
    assert not any(r.get("is_error", False) for r in (read, glob, grep))

    (bash,) = tool_results(requests[3])
    assert "hello forgeflare" in bash["content"]
    assert not bash.get("is_error", False)

    (missing,) = tool_results(requests[4])
    assert missing["is_error"] is True

    final = read_json(tmp_path / ".forgeflare" / "convergence.json")["final"]
    assert final["reason"] == "end_turn"
    assert final["tool_iterations"] == 4
    assert final["total_tokens"] == 5 * 100 + 4 * 20 + 10

    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    lines = (session / "full.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records][:2] == ["user", "assistant"]
    assert (session / "prompt.txt").read_text() == "create a note"
    assert "**Edit**" in (session / "context.md").read_text()
    assert "[tool] Edit: notes/hello.txt" in proc.stderr


def test_prompt_as_argument_and_exit_status_of_api_error(tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(
        {
            "responses": [
                {"error": {"status": 400, "type": "invalid_request_error", "message": "bad field"}}
            ]
        }
    )
    proc = run_agent_here(tmp_path, server.url, "", "the prompt")
    assert proc.returncode == 3
    assert "bad field" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(server.requests()) == 1  # permanent: not retried
    final = read_json(tmp_path / ".forgeflare" / "convergence.json")["final"]
    assert final["reason"] == "api_error"


def test_stale_convergence_is_replaced(tmp_path: Path, mock_api: MockAPI) -> None:
    state = tmp_path / ".forgeflare" / "convergence.json"
    state.parent.mkdir()
    state.write_text(
        json.dumps({"observations": [{"signal": "old", "reason": "", "tool_iterations": 1}]})
    )
    server = mock_api({"responses": [text_response("hi")]})
    proc = run_agent_here(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    data = read_json(state)
    assert data["observations"] == []
    assert data["final"]["reason"] == "end_turn"


def test_missing_api_key_for_real_endpoint_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = run_cli(["run", "hello"], cwd=tmp_path, env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "ANTHROPIC_API_KEY" in lines[0]


LONG_BASH = ("Bash", {"command": "echo $$ > bash.pid && touch started && sleep 600"})


def _agent_in_long_bash(
    tmp_path: Path, mock_api: MockAPI, responses: list[dict[str, Any]]
) -> subprocess.Popen[str]:
    """Start ``forgeflare run`` and return once its scripted Bash command is sleeping."""
    return start_agent_in_bash(tmp_path, mock_api({"responses": responses}).url)


def test_killed_agent_leaves_parseable_transcript(tmp_path: Path, mock_api: MockAPI) -> None:
    edit = tool_response(("Edit", {"file_path": "a.txt", "old_str": "", "new_str": "x\n"}))
    proc = _agent_in_long_bash(tmp_path, mock_api, [edit, tool_response(LONG_BASH)])
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    # SIGKILL gives the agent no chance to end the Bash command's own process group.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(int((tmp_path / "bash.pid").read_text()), signal.SIGKILL)
    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    transcript = session / "full.jsonl"
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant", "user", "assistant"]
    for prev, cur in itertools.pairwise(records):
        assert cur["parentUuid"] == prev["uuid"]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_bash_and_flushes_records(
    tmp_path: Path, mock_api: MockAPI, signum: signal.Signals, code: int
) -> None:
    proc = _agent_in_long_bash(tmp_path, mock_api, [tool_response(LONG_BASH)])
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == code, stderr
    assert f"interrupted by {signum.name}" in stderr
    bash_group = int((tmp_path / "bash.pid").read_text())
    with contextlib.suppress(ProcessLookupError):
        # Gone, or at most a zombie waiting for init: never a live `sleep 600`.
        os.killpg(bash_group, 0)
        assert live_group_members(bash_group) == []
    [session] = list((tmp_path / ".entire" / "metadata").iterdir())
    assert (session / "context.md").exists()
    # The turn's end is written, as every turn's end is: interrupted.
    final = read_json(tmp_path / ".forgeflare" / "convergence.json")["final"]
    assert final["reason"] == "interrupted"
    assert final["detail"] == f"interrupted by {signum.name}"


def test_sigterm_ends_a_bash_descendant_in_its_own_session(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    command = "setsid sleep 600 > /dev/null 2>&1 & echo $! > detached.pid; touch started; sleep 600"
    bash = tool_response(("Bash", {"command": command}))
    proc = _agent_in_long_bash(tmp_path, mock_api, [bash])
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    detached = int((tmp_path / "detached.pid").read_text().strip())
    deadline = time.monotonic() + 10
    while alive(detached) and time.monotonic() < deadline:
        time.sleep(0.02)  # bounded polling: the kill is asynchronous
    assert not alive(detached)


def test_bash_output_streams_to_stderr_between_tagged_lines(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api(with_one_call("Bash", {"command": "printf 'partial line'"}, "ok"))
    proc = run_agent(tmp_path, server.url)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    i = lines.index("[tool] Bash: printf 'partial line'")
    assert lines[i + 1] == "partial line"  # the command's own output, then a fresh line
    assert lines[i + 2].startswith("[result] Bash: ")
