"""No process a loop starts holds a secret in ``/proc/<pid>/environ``.

Children read their parents' initial environment there, whatever the parent deleted from
``os.environ`` since. A loop (own agent against the real mock API) runs with four test secrets
in its environment; its lifecycle hooks, an agent shell hook and a Bash command each read every
``/proc/*/environ`` they can (the loop, the agent, themselves and every other process of the
user) and find none of the values, while the mock saw the agent's key arrive.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from agent_support import text_response, tool_response
from claude_code_support import claude_env
from environ_support import scanning_project, scans
from mockapi_support import MockAPI
from supervisor_agents.project import base_env

FORGEFLARE = str(Path(sys.executable).absolute().parent / "forgeflare")


pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def secret_env() -> dict[str, str]:
    return {
        name: f"{name.lower()}-{secrets.token_hex(8)}"
        for name in (
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
        )
    }


@pytest.mark.parametrize("command", ["loop", "run", "claude"])
def test_no_child_reads_a_secret_from_proc(
    tmp_path: Path, mock_api: MockAPI, command: str, request: pytest.FixtureRequest
) -> None:
    values = secret_env()
    extra: dict[str, str] = {}
    if command == "claude":
        # Claude Code's subscription token has no channel but the environment (README).
        del values["CLAUDE_CODE_OAUTH_TOKEN"]
        claude = request.getfixturevalue("claude_code")
        extra = claude_env(tmp_path / "home", "unused")
    values_file = tmp_path / "values"
    values_file.write_text("\n".join(values.values()))
    out = tmp_path / "scans"
    project = scanning_project(tmp_path, values_file, out)
    bash = f"python3 scan.py {values_file} {out} bash"
    server = mock_api(
        {
            "responses": [tool_response(("Bash", {"command": bash})), text_response("done")],
            "when_exhausted": "end_turn",
        }
    )
    env = base_env(**extra)
    env.update(ANTHROPIC_API_URL=server.url, ANTHROPIC_BASE_URL=server.url, FORGEFLARE_TRUST="1")
    env["IS_SANDBOX"] = "1"  # as root, Claude Code (and preflight) want it for bypassPermissions
    env.update(values)
    argv = {
        # Unconfined: the sandbox (a loop's default) would hide the parents' /proc entries and
        # the scan's output folder; the point here is what an unconfined child can read.
        "loop": [FORGEFLARE, "loop", "--max-iterations", "1", "--no-sandbox"],
        "run": [FORGEFLARE, "run", "--trust-project", "do the task"],
        "claude": [FORGEFLARE, "loop", "--max-iterations", "1", "--backend", "claude"],
    }[command]
    if command == "claude":
        argv += ["--agent-cmd", str(claude)]
    done = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode in (0, 10, 11), done.stderr
    found = scans(out)
    expected = {"bash"} if command == "claude" else {"bash", "shell-hook"}
    if command != "run":
        expected |= {"started", "next_iteration", "finished"}
    assert set(found) == expected, found
    for label, (read, leaks) in found.items():
        assert read >= 3, (label, read)  # it read its parents' and its own environment
        assert leaks == "[]", (label, leaks)
    # The agent authenticated all the same: the mock saw its key.
    digest = hashlib.sha256(values["ANTHROPIC_API_KEY"].encode()).hexdigest()[:16]
    requests = [r for r in server.requests() if r["path"].startswith("/v1/messages")]
    assert requests
    assert all(r.get("key_sha256") == digest for r in requests), json.dumps(requests[0])[:300]
