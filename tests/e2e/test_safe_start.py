"""Nothing forgeflare starts in a project imports from the project's directory by accident.

A hostile repository commits ``trio.py``, ``typing_extensions.py`` and a ``forgeflare``
package, each writing a marker when imported. ``forgeflare run``, ``forgeflare loop`` (own
agent, real mock API, a Bash call, shell and lifecycle hooks in Python) and ``fleet run`` run
there from the project's own directory: no marker is written. (A ``json.py`` planted beside a
trusted Python hook is the trust's: the hook's fingerprint covers its folder.)
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_support import text_response, tool_response
from environ_support import SCAN
from mockapi_support import MockAPI
from project_support import run_text, write_files
from supervisor_agents.project import base_env

FORGEFLARE = str(Path(sys.executable).absolute().parent / "forgeflare")

_PLANT = "import pathlib\npathlib.Path({marker!r}).write_text({name!r})\n"
_HOOK_PY = (
    "import json, sys\njson.loads(sys.stdin.read() or '{}')\n"
    "open(sys.argv[1], 'a').write('ran')\nprint('{}')\n"
)


def hostile_project(root: Path, marker: Path) -> Path:
    project = root / "hostile"
    files = {
        "trio.py": "trio",
        "typing_extensions.py": "typing_extensions",
        "forgeflare/__init__.py": "forgeflare package",
        "forgeflare/__main__.py": "forgeflare __main__",
    }
    write_files(
        project, {rel: _PLANT.format(marker=str(marker), name=name) for rel, name in files.items()}
    )
    for folder in (".forgeflare/hooks", ".fresher/hooks/custom"):
        (project / folder).mkdir(parents=True, exist_ok=True)
    (project / ".forgeflare" / "hooks" / "guard.py").write_text(_HOOK_PY)
    (project / ".forgeflare" / "hooks.toml").write_text(
        '[[hooks]]\nevent = "PreToolUse"\nphase = "observe"\n'
        'command = "python3 .forgeflare/hooks/guard.py guard-ran"\n'
    )
    (project / ".fresher" / "hooks" / "custom" / "note.py").write_text(_HOOK_PY)
    started = project / ".fresher" / "hooks" / "started"
    started.write_text("#!/bin/sh\necho '{}' | python3 .fresher/hooks/custom/note.py started-ran\n")
    started.chmod(0o755)
    for args in (
        ["init", "-q"],
        ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "add", "-A"],
        ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "hostile"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True)
    return project


def script() -> dict[str, Any]:
    return {
        "responses": [tool_response(("Bash", {"command": "true"})), text_response("done")],
        "when_exhausted": "end_turn",
    }


def test_run_and_loop_import_nothing_from_the_project(tmp_path: Path, mock_api: MockAPI) -> None:
    marker = tmp_path / "marker"
    project = hostile_project(tmp_path, marker)
    server = mock_api(script())
    env = base_env(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key", FORGEFLARE_TRUST="1")
    for argv in (
        [FORGEFLARE, "run", "do the task"],
        [FORGEFLARE, "loop", "--max-iterations", "1"],
    ):
        done = run_text(argv, cwd=project, env=env, timeout=60)
        assert not marker.exists(), f"{argv[1]}: imported {marker.read_text()}"
        assert done.returncode in (0, 10, 11), done.stderr
    # The agents really ran (run, then the loop's iteration), and so did the hooks.
    assert len(server.requests()) >= 3
    assert (project / "guard-ran").exists()
    assert (project / "started-ran").exists()


def test_fleet_loops_import_nothing_and_hold_no_secret(tmp_path: Path) -> None:
    """``fleet run`` from inside the hostile repository: its loops start there, with -P, and
    receive their secrets through a descriptor (the agent scans every /proc/*/environ)."""
    marker = tmp_path / "marker"
    project = hostile_project(tmp_path, marker)
    # Random, as in the other scans: every /proc/*/environ is read, and another suite's fleet
    # on this machine, still at its own start, would hold fixed values too.
    tag = secrets.token_hex(8)
    values = {"GITHUB_TOKEN": f"ghp-fleet-{tag}", "CLAUDE_CODE_OAUTH_TOKEN": f"oat-fleet-{tag}"}
    (tmp_path / "values").write_text("\n".join(values.values()))
    (project / "scan.py").write_text(SCAN)
    scan = f"python3 scan.py {tmp_path / 'values'} {tmp_path / 'scans'} agent; cat >/dev/null"
    (project / "FLEET.toml").write_text(
        '[fleet]\nname = "t"\nparallel = 1\nland = "none"\n\n'
        '[[loop]]\nname = "one"\nrepo = "."\nbase = "main"\nprompt = "p"\n'
        f'max_iterations = 1\nagent_command = "{scan}"\n'
    )
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "branch", "-M", "main"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "fleet"], cwd=project, check=True)
    env = base_env(FORGEFLARE_TRUST="1", **values)
    done = run_text([FORGEFLARE, "fleet", "run", "FLEET.toml"], cwd=project, env=env, timeout=120)
    assert "one: finished" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not marker.exists(), marker.read_text()
    (line,) = (tmp_path / "scans").read_text().splitlines()
    assert line.endswith("leaks=[]"), line
