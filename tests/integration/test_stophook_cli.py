"""``forgeflare stop-hook start | status | cancel | install``: through the console script's real
entry in the test process (:func:`stop_hook_here`), and as real processes where the process is
the point: one start, status, cancel and install each, and the portable wrapper Claude Code runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from forgeflare.stophook import state_path
from project_support import run_text
from stophook_support import blocks, stop_hook_here

CMD = [sys.executable, "-m", "forgeflare", "stop-hook"]
# What install writes: this installation's forgeflare by absolute path, runnable without PATH.
OURS = f"{Path(sys.executable).absolute().parent / 'forgeflare'} stop-hook"


def cli(project: Path, *args: str, real: bool = False) -> subprocess.CompletedProcess[str]:
    """``forgeflare stop-hook ARGS --project-dir PROJECT``, in this process unless ``real``."""
    # A home of its own: a plugin installed in the real one must not change the output.
    env = {**os.environ, "HOME": str(project / ".test-home")}
    if real:
        return run_text([*CMD, *args, "--project-dir", str(project)], env=env, timeout=60)
    return stop_hook_here(*args, "--project-dir", str(project), env=env)


def test_start_status_cancel(tmp_path: Path) -> None:
    start = ["start", "--mode", "task", "--max-iterations", "4", "--prompt", "Ship it"]
    out = cli(tmp_path, *start, real=True)
    assert out.returncode == 0, out.stderr
    state = json.loads(state_path(tmp_path).read_text())
    assert state["schema"] == 1
    assert state["event"] == "STATE"
    assert state["updated_at"].endswith("Z")
    assert state["stack"] == [{"mode": "task", "iter": 1, "max": 4, "prompt": "Ship it"}]

    status = cli(tmp_path, "status", real=True)
    assert status.returncode == 0
    assert f"run {state['run_id']} · updated" in status.stdout
    assert "STATE" not in status.stdout
    assert "1. task  iteration 1/4  ← running" in status.stdout
    assert "prompt: Ship it" in status.stdout

    cancel = cli(tmp_path, "cancel", real=True)
    assert cancel.returncode == 0
    assert "cancelled" in cancel.stdout
    assert not state_path(tmp_path).exists()


def test_install_merges_is_idempotent_and_refuses_bad_json(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    existing = {
        "permissions": {"allow": ["Bash(make test)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    }
    settings.write_text(json.dumps(existing), encoding="utf-8")

    first = cli(tmp_path, "install", real=True)
    second = cli(tmp_path, "install")

    assert (first.returncode, second.returncode) == (0, 0)
    assert "nothing changed" in second.stdout
    assert "now names this machine's forgeflare" in first.stdout
    assert "now names" not in second.stdout  # it changed nothing: no contradiction
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == existing["permissions"]
    assert merged["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "say done"}]},
        {"hooks": [{"type": "command", "command": OURS, "timeout": 700}]},
    ]

    settings.write_text("{not json", encoding="utf-8")
    bad = cli(tmp_path, "install")
    assert bad.returncode != 0
    assert bad.stderr.count("\n") == 1
    assert "settings.json: not valid JSON" in bad.stderr
    assert settings.read_text(encoding="utf-8") == "{not json"


def test_install_replaces_a_bare_command_and_warns_about_an_unrunnable_one(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    bare = {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "forgeflare stop-hook"}]}]}
    }
    settings.write_text(json.dumps(bare), encoding="utf-8")

    out = cli(tmp_path, "install")

    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    # Updated in place: one hook, never two runs per stop.
    assert json.loads(settings.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": OURS, "timeout": 700}]}]}
    }

    missing = cli(tmp_path, "install", "--command", "no-such-forgeflare-xyz stop-hook")
    assert missing.returncode == 0
    assert "warning: 'no-such-forgeflare-xyz' is not on PATH" in missing.stderr
    assert "exit 127" in missing.stderr


def test_start_from_slash_command_arguments(tmp_path: Path) -> None:
    raw = 'Fix "the" build; don\'t touch $HOME `x` --max-iterations 7 --mode=issue\n'
    start = ["start", "--max-iterations", "20", "--args-stdin", "--project-dir", str(tmp_path)]
    out = stop_hook_here(*start, env=os.environ, input=raw)
    assert out.returncode == 0, out.stderr
    assert "<issue-complete>DONE</issue-complete>" in out.stdout  # tells the model how to end
    assert "on its own line, outside code" in out.stdout
    state = json.loads(state_path(tmp_path).read_text())
    assert state["stack"] == [
        {"mode": "issue", "iter": 1, "max": 7, "prompt": 'Fix "the" build; don\'t touch $HOME `x`'}
    ]
    empty = stop_hook_here(*start, env=os.environ, input="--mode grind\n")
    assert empty.returncode != 0
    assert "no task given" in empty.stderr


def test_install_plugin_writes_the_plugin_with_an_absolute_command(tmp_path: Path) -> None:
    target = tmp_path / "plugin"
    out = cli(tmp_path, "install", "--plugin", "--plugin-dir", str(target))
    assert out.returncode == 0, out.stderr
    manifest = json.loads((target / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "forgeflare"
    hooks = json.loads((target / "hooks" / "hooks.json").read_text())
    assert hooks["hooks"]["Stop"][0]["hooks"][0]["command"] == OURS
    loop = (target / "commands" / "loop.md").read_text()
    assert f"{OURS} start --max-iterations 20 --args-stdin <<'FORGEFLARE_LOOP_ARGS'" in loop
    assert "\n$ARGUMENTS\n" in loop
    assert (target / "commands" / "cancel.md").exists()
    assert not (tmp_path / ".claude").exists()  # the plugin way leaves settings.json alone


def test_both_ways_at_once_are_warned_about(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    project = tmp_path / "p"
    project.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return stop_hook_here("install", *args, "--project-dir", str(project), env=env)

    assert run().stderr == ""
    plugin = run("--plugin")
    assert plugin.returncode == 0, plugin.stderr
    assert str(tmp_path / "home" / ".claude" / "skills" / "forgeflare") in plugin.stdout
    assert "runs the stop-hook too" in plugin.stderr
    again = run()
    assert again.returncode == 0
    assert "the forgeflare plugin" in again.stderr


def test_start_caps_at_20_iterations_like_the_plugin(tmp_path: Path) -> None:
    out = cli(tmp_path, "start", "--prompt", "Ship it")
    assert out.returncode == 0, out.stderr
    assert "max 20 iterations" in out.stdout


def test_portable_install_for_a_committed_settings_file(tmp_path: Path) -> None:
    """``--portable``: settings.json names a project-relative wrapper, not this machine's
    forgeflare; the wrapper finds forgeflare where it runs (the project's .venv, then PATH)."""
    assert cli(tmp_path, "install").returncode == 0  # this machine's path first
    done = cli(tmp_path, "install", "--portable")
    assert done.returncode == 0, done.stderr
    assert "commit .claude/settings.json and .claude/forgeflare-stop-hook together" in done.stdout
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    commands = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ['"$CLAUDE_PROJECT_DIR"/.claude/forgeflare-stop-hook']  # replaced, once
    assert str(Path(sys.executable).parent) not in json.dumps(settings)
    wrapper = tmp_path / ".claude" / "forgeflare-stop-hook"
    assert os.access(wrapper, os.X_OK)
    assert cli(tmp_path, "start", "--prompt", "Ship it").returncode == 0
    stop = json.dumps({"hook_event_name": "Stop", "last_assistant_message": "Not yet."})
    base = {"HOME": str(tmp_path / ".test-home"), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    base["XDG_STATE_HOME"] = os.environ["XDG_STATE_HOME"]  # where `start` put the loop
    # found on PATH (as in a shell whose venv is active): the loop blocks the stop
    found = run_text(
        ["/bin/sh", "-c", commands[0]],
        cwd=tmp_path,
        env={**base, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        input=stop,
    )
    assert blocks(found), found.stderr
    # nowhere to be found: the stop is allowed, with one line saying why
    missing = run_text(
        ["/bin/sh", "-c", commands[0]],
        cwd=tmp_path,
        env={**base, "PATH": "/usr/bin:/bin"},
        input=stop,
    )
    assert missing.returncode == 0
    assert "forgeflare is not in" in missing.stderr


def test_the_state_is_the_users_and_status_names_a_planted_one(tmp_path: Path) -> None:
    planted = tmp_path / ".forgeflare" / "loop-state.json"
    planted.parent.mkdir()
    planted.write_text('{"schema": 1, "event": "STATE", "stack": []}')
    status = cli(tmp_path, "status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines() == [
        "no loop in this project",
        f"{planted}: ignored: a loop's state lives in your state directory now, never in the "
        "project (a clone can carry this file); start the loop with 'forgeflare stop-hook start'",
    ]
    assert cli(tmp_path, "start", "--prompt", "Ship it").returncode == 0
    where = Path(os.environ["XDG_STATE_HOME"]) / "forgeflare" / "stop-hook"
    assert state_path(tmp_path).parent == where
    assert (
        state_path(tmp_path).name
        == str(tmp_path.resolve()).lstrip("/").replace("/", "%2F") + ".json"
    )
    assert cli(tmp_path, "status").stdout.splitlines()[0] == str(state_path(tmp_path))
    cancelled = cli(tmp_path, "cancel").stdout.splitlines()
    assert cancelled == [
        f"cancelled: removed {state_path(tmp_path)}",
        status.stdout.splitlines()[1],
    ]
    assert planted.read_text() == '{"schema": 1, "event": "STATE", "stack": []}'


def test_start_refuses_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    out = cli(tmp_path / "missing", "start", "--prompt", "Ship it")
    assert out.returncode == 2
    assert out.stderr == (
        f"forgeflare: error: stop-hook start: --dir {tmp_path / 'missing'}: not a directory\n"
    )
