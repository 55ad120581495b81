"""Secrets by shape reach no hook: a loop started with the 29 names an attacker found missed
(plus values that carry a credential under an ordinary name) runs lifecycle hooks, an agent
shell hook and a Bash command; each reads every ``/proc/*/environ`` it can and finds none of
the values, while the look-alikes (``TOX_TESTENV_PASSENV``, ``GIT_AUTHOR_NAME``,
``XDG_SESSION_TYPE``...) reach the hook as they were."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import pytest

from agent_support import text_response, tool_response
from environ_support import scanning_project, scans
from mockapi_support import MockAPI
from project_support import run_text
from secrets_support import MISSED_IN_0_3
from supervisor_agents.project import base_env

FORGEFLARE = str(Path(sys.executable).absolute().parent / "forgeflare")

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

LOOKALIKES = {
    "TOX_TESTENV_PASSENV": "GITHUB_TOKEN",
    "GIT_AUTHOR_NAME": "Night Owl",
    "XDG_SESSION_TYPE": "tty",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus",
    "DESKTOP_SESSION": "plain",
}


def shaped_secrets() -> dict[str, str]:
    tag = secrets.token_hex(8)
    values = {name: f"{name.lower()}-{tag}" for name in MISSED_IN_0_3}
    values["NIGHTLY_NOTIFY"] = f"https://hooks.slack.com/services/T0/B0/{tag}"
    values["STORAGE"] = f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={tag}=="
    values["DEPLOY"] = f"ghp_{tag * 4}"
    return values


def test_no_hook_sees_a_secret_by_shape(tmp_path: Path, mock_api: MockAPI) -> None:
    values = shaped_secrets()
    values_file = tmp_path / "values"
    values_file.write_text("\n".join(values.values()))  # whitespace-free markers
    out = tmp_path / "scans"
    project = scanning_project(tmp_path, values_file, out)
    scan = f"python3 scan.py {values_file} {out}"
    with (project / ".fresher" / "hooks" / "started").open("a") as hook:
        hook.write(f"env > {tmp_path / 'hook-env'}\n")
    server = mock_api(
        {
            "responses": [
                tool_response(("Bash", {"command": f"{scan} bash"})),
                text_response("done"),
            ],
            "when_exhausted": "end_turn",
        }
    )
    env = base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="k", FORGEFLARE_TRUST="1")
    env.update(values)
    env.update(LOOKALIKES)
    done = run_text(
        [FORGEFLARE, "loop", "--max-iterations", "1", "--no-sandbox"],
        cwd=project,
        env=env,
        timeout=120,
    )
    assert done.returncode in (0, 10, 11), done.stderr
    found = scans(out)
    assert set(found) == {"started", "next_iteration", "finished", "shell-hook", "bash"}, found
    for label, (read, leaks) in found.items():
        assert read >= 3, (label, read)
        assert leaks == "[]", (label, leaks)
    hook_env = (tmp_path / "hook-env").read_text()
    for name, value in LOOKALIKES.items():
        assert f"{name}={value}\n" in hook_env, name
