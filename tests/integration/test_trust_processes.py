"""Trust end to end: a cloned repository's hooks run only after ``forgeflare trust``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_support import run_agent, text_response, tool_response
from cli_inprocess import run_cli
from mockapi_support import MockAPI
from project_support import cloned_repo, forgeflare

HOOK = """#!/usr/bin/env python3
import json, pathlib, sys
json.load(sys.stdin)
pathlib.Path("hook-ran").write_text("yes")
print(json.dumps({"action": "allow"}))
"""

HOOKS_TOML = """[[hooks]]
event = "PreToolUse"
match_tool = "Read"
command = ".forgeflare/hooks/guard.py"
"""


@pytest.fixture
def cloned(tmp_path: Path) -> Path:
    """A repository with an agent hook and a lifecycle hook, cloned as a user would."""
    files = {
        ".forgeflare/hooks/guard.py": HOOK,
        ".forgeflare/hooks.toml": HOOKS_TOML,
        ".fresher/hooks/started": "#!/bin/sh\necho ran > started-ran\n",
    }
    return cloned_repo(tmp_path, "clone", files)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FORGEFLARE_TRUST"}
    env["FRESHER_SMART_TERMINATION"] = "false"
    env["FORGEFLARE_TRUST"] = "0"  # run_agent starts from os.environ, where tests trust all
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env.update(extra)
    return env


def _script() -> dict[str, Any]:
    return {
        "responses": [tool_response(("Read", {"file_path": "README.md"})), text_response("ok")],
        "when_exhausted": "end_turn",
    }


def test_run_refuses_until_trusted_and_again_after_an_edit(
    cloned: Path, tmp_path: Path, mock_api: MockAPI
) -> None:
    server = mock_api(_script())
    env = _env(tmp_path)

    refused = run_agent(cloned, server.url, env=env)
    assert refused.returncode == 2
    assert "not trusted" in refused.stderr
    assert "hooks.toml[0] PreToolUse" in refused.stderr
    assert "forgeflare trust" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not (cloned / "hook-ran").exists()
    assert server.requests() == []

    shown = forgeflare(cloned, "trust", "--show", env=env)
    assert shown.returncode == 1
    assert ".forgeflare/hooks/guard.py" in shown.stdout
    assert "pathlib.Path" in shown.stdout or "import json" in shown.stdout

    trusted = forgeflare(cloned, "trust", "--yes", env=env)
    assert trusted.returncode == 0, trusted.stderr
    ran = run_agent(cloned, server.url, env=env)
    assert ran.returncode == 0, ran.stderr
    assert (cloned / "hook-ran").read_text() == "yes"

    (cloned / "hook-ran").unlink()
    guard = cloned / ".forgeflare" / "hooks" / "guard.py"
    guard.write_text(HOOK + "# changed\n")
    # refused before anything starts: the real entry point in this process (the first refusal
    # above is the process; what it did not run is the same hook)
    api = {"ANTHROPIC_API_URL": server.url, "ANTHROPIC_API_KEY": "test-key"}
    again = run_cli(["run", "do the task"], cwd=cloned, env={**env, **api})
    assert again.returncode == 2
    assert "changed: hooks.toml[0] PreToolUse" in again.stderr
    assert not (cloned / "hook-ran").exists()


def test_override_runs_and_says_so(cloned: Path, tmp_path: Path, mock_api: MockAPI) -> None:
    server = mock_api(_script())  # the agent in this process, its hook a real child
    api = {"ANTHROPIC_API_URL": server.url, "ANTHROPIC_API_KEY": "test-key"}
    ran = run_cli(
        ["run", "do the task"], cwd=cloned, env=_env(tmp_path, FORGEFLARE_TRUST="1", **api)
    )
    assert ran.returncode == 0, ran.stderr
    assert "trusted without review" in ran.stderr
    assert (cloned / "hook-ran").exists()


def test_list_and_revoke(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)  # the trust command alone: in the test process
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    listed = run_cli(["trust", "--list"], cwd=cloned, env=env)
    assert str(cloned.resolve()) in listed.stdout
    revoked = run_cli(["trust", "--revoke"], cwd=cloned, env=env)
    assert "revoked" in revoked.stdout
    assert "no trusted projects" in run_cli(["trust", "--list"], cwd=cloned, env=env).stdout


def test_loop_refuses_until_trusted(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    args = ("loop", "--agent-cmd", "true", "--max-iterations", "1", "--mode", "planning")
    refused = forgeflare(cloned, *args, env=env)
    assert refused.returncode == 2
    assert "not trusted" in refused.stderr
    assert ".fresher/hooks/started" in refused.stderr
    assert not (cloned / "started-ran").exists()
    assert not (cloned / ".fresher" / "runs").exists()
    # The refusal above is the process; trusting, the trusted loop and the override's warning
    # go through the real entry point in this process (the hook and agent are real children).
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    ran = run_cli(args, cwd=cloned, env=env)
    assert ran.returncode == 10, ran.stderr
    assert (cloned / "started-ran").exists()
    override = run_cli(args, cwd=cloned, env=_env(tmp_path, FORGEFLARE_TRUST="1"))
    assert override.returncode == 10
    assert "trusting the project's hooks without review" in override.stderr


def test_a_hook_changed_during_the_night_stops_the_loop(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)  # the loop's check between iterations: in the test process
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    # the agent rewrites a lifecycle hook in its first iteration
    rewrite = 'echo "#!/bin/sh" > .fresher/hooks/started; echo "# evil" >> .fresher/hooks/started'
    agent = f"sh -c '{rewrite}'"
    done = run_cli(
        ["loop", "--agent-cmd", agent, "--max-iterations", "3", "--mode", "planning"],
        cwd=cloned,
        env=env,
    )
    assert done.returncode == 13, done.stderr
    assert "changed: .fresher/hooks/started" in done.stderr
    record = json.loads(next((cloned / ".fresher" / "runs").glob("*/run.json")).read_text())
    assert record["finish_type"] == "hook_abort"
    assert len(record["iterations"]) == 1


MODULE_HOOKS = """\
import pathlib

from forgeflare.hooks import hook

pathlib.Path("module-imported").touch()


@hook("PreToolUse", match="Read")
def observe(input):
    return None
"""


def test_a_loop_hooks_module_is_trusted_before_it_is_imported(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = tmp_path / "p"
    (project / ".fresher").mkdir(parents=True)
    (project / ".fresher" / "config.toml").write_text(
        "[agent]\nextra_args = '--hooks-module myhooks'\n"
    )
    (project / "myhooks.py").write_text(MODULE_HOOKS)
    server = mock_api({"responses": [], "when_exhausted": "end_turn"})
    env = _env(tmp_path, ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key")
    args = ("loop", "--max-iterations", "1", "--mode", "planning")
    refused = forgeflare(project, *args, env=env)
    assert refused.returncode == 2
    assert "not trusted" in refused.stderr
    assert "hooks module myhooks" in refused.stderr
    assert not (project / "module-imported").exists()  # neither the preflight nor an agent
    # The refusal above is the process; after trust the loop runs in this process and its
    # agent (a real `forgeflare run`) is what imports the module.
    shown = run_cli(["trust", "--show"], cwd=project, env=env)
    assert "myhooks.py" in shown.stdout
    assert run_cli(["trust", "--yes"], cwd=project, env=env).returncode == 0
    ran = run_cli(args, cwd=project, env=env)
    assert ran.returncode == 10, ran.stderr
    assert (project / "module-imported").exists()
    assert len(server.requests()) == 1


EVIL_HOOK = HOOK.replace('write_text("yes")', 'write_text("evil")')


def test_a_hook_rewritten_mid_run_is_refused_at_its_next_call(
    cloned: Path, tmp_path: Path, mock_api: MockAPI
) -> None:
    guard = ".forgeflare/hooks/guard.py"
    rewrite = f"cat > {guard} <<'EOF'\n{EVIL_HOOK}EOF\n"
    server = mock_api(
        {
            "responses": [
                tool_response(("Read", {"file_path": "README.md"})),
                tool_response(("Bash", {"command": rewrite})),
                tool_response(("Read", {"file_path": "README.md"})),
                text_response("ok"),
            ],
            "when_exhausted": "end_turn",
        }
    )
    env = _env(tmp_path)
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    # the agent in this process; its Bash and the hook are real children
    env.update(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key")
    ran = run_cli(["run", "do the task"], cwd=cloned, env=env)
    assert "evil" in (cloned / guard).read_text()  # the agent did rewrite it
    assert (cloned / "hook-ran").read_text() == "yes"  # but the rewritten hook never ran
    refusals = [s for s in ran.stderr.splitlines() if "[warn]" in s and "hook refused" in s]
    assert len(refusals) == 1, ran.stderr
    assert "changed: hooks.toml[0] PreToolUse" in refusals[0]
    last = server.requests()[-1]
    assert "hook refused" in json.dumps(last)  # the Read was blocked, the model was told


def test_a_python_hook_importing_its_neighbour_stays_trusted_call_after_call(
    tmp_path: Path, mock_api: MockAPI
) -> None:
    project = tmp_path / "p"
    hooks = project / ".forgeflare" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "helper.py").write_text("ANSWER = {'action': 'allow'}\n")
    guard = hooks / "guard.py"
    guard.write_text(
        "import json, pathlib, sys\nfrom helper import ANSWER\njson.load(sys.stdin)\n"
        "with open('calls', 'a') as f:\n    f.write('x')\nprint(json.dumps(ANSWER))\n"
    )
    guard.chmod(0o755)
    (project / ".forgeflare" / "hooks.toml").write_text(
        '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "Read"\n'
        'command = "python3 .forgeflare/hooks/guard.py"\n'
    )
    (project / "README.md").write_text("hi\n")
    read = ("Read", {"file_path": "README.md"})
    server = mock_api(
        {
            "responses": [tool_response(read), tool_response(read), text_response("ok")],
            "when_exhausted": "end_turn",
        }
    )
    env = _env(tmp_path)
    env["PYTHONDONTWRITEBYTECODE"] = ""  # as on most machines: Python writes __pycache__
    assert run_cli(["trust", "--yes"], cwd=project, env=env).returncode == 0
    # the agent in this process; the hook and its Python are real children
    env.update(ANTHROPIC_API_URL=server.url, ANTHROPIC_API_KEY="test-key")
    ran = run_cli(["run", "do the task"], cwd=project, env=env)
    assert ran.returncode == 0, ran.stderr
    assert "hook refused" not in ran.stderr
    assert (project / "calls").read_text() == "xx"
    assert not (hooks / "__pycache__").exists()


def test_trust_of_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "nonexistent")
    done = run_cli(["trust", "--dir", missing], cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"forgeflare: error: {tmp_path / 'nonexistent'}: no such directory"
    ]


@pytest.mark.parametrize(
    ("raw", "commands"),
    [
        (b"\xff\xfe{", ["run", "trust", "list", "show", "revoke", "hooks"]),
        (b'{"projects": []}', ["trust"]),  # the store's shapes are fuzzed in the unit tests
        (b"[" * 5000, ["run"]),
    ],
)
def test_a_damaged_trust_file_is_one_line_from_every_command(
    cloned: Path, tmp_path: Path, raw: bytes, commands: list[str]
) -> None:
    env = _env(tmp_path, ANTHROPIC_API_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY="k")
    store = tmp_path / "config" / "forgeflare" / "trust.json"
    store.parent.mkdir(parents=True)
    store.write_bytes(raw)
    argv = {"run": ["run", "hi"], "trust": ["trust"], "list": ["trust", "--list"],
            "show": ["trust", "--show"], "revoke": ["trust", "--revoke"],
            "hooks": ["hooks", "test", "Stop"]}  # fmt: skip
    for args in (argv[c] for c in commands):
        done = run_cli(args, cwd=cloned, env=env)  # refused before anything starts
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (args, done.stderr)
        assert len(lines) == 1, (args, done.stderr)
        assert f"{store}: the trust records are damaged" in lines[0]
    assert not (cloned / "hook-ran").exists()


def test_a_lifecycle_hook_rewritten_in_the_last_iteration_is_refused_at_its_call(
    cloned: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    finished = cloned / ".fresher" / "hooks" / "finished"
    finished.write_text("#!/bin/sh\necho fine > finished-ran\n")
    finished.chmod(0o755)
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    # the agent rewrites the finished hook in the last iteration: no iteration check follows
    rewrite = 'printf "#!/bin/sh\\ntouch evil-ran\\n" > .fresher/hooks/finished'
    done = forgeflare(
        cloned, "loop", "--agent-cmd", f"sh -c '{rewrite}'", "--max-iterations", "1",
        "--mode", "planning", env=env,
    )  # fmt: skip
    assert not (cloned / "evil-ran").exists()
    refusals = [line for line in done.stderr.splitlines() if "not trusted" in line]
    assert len(refusals) == 1, done.stderr
    assert "changed: .fresher/hooks/finished" in refusals[0]


def test_a_gate_script_rewritten_by_the_agent_is_refused(cloned: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    (cloned / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (cloned / "check.sh").chmod(0o755)
    (cloned / ".fresher" / "config.toml").write_text('[limits]\ngate = "./check.sh"\n')
    (cloned / "IMPLEMENTATION_PLAN.md").write_text("- [x] all done\n")  # complete: gate runs
    assert run_cli(["trust", "--yes"], cwd=cloned, env=env).returncode == 0
    agent = "sh -c 'printf \"#!/bin/sh\\ntouch gate-evil\\n\" > check.sh'"
    done = forgeflare(
        cloned, "loop", "--agent-cmd", agent, "--max-iterations", "2", "--mode", "building", env=env
    )
    assert not (cloned / "gate-evil").exists(), done.stderr
    refusals = [s for s in done.stderr.splitlines() if "error:" in s and "not trusted" in s]
    assert len(refusals) == 1, done.stderr
    assert "changed: [limits] gate" in refusals[0]
    assert done.returncode == 13, done.stderr  # hook_abort, not complete
