"""``forgeflare hooks validate|test|schema`` as a user runs them: one real process (the console
script), the rest through the same entry point in the test process (``cli_inprocess``)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from cli_inprocess import run_cli
from forgeflare.agent._hookscli import hooks_app
from project_support import run_text

SCRIPTS = Path(__file__).resolve().parents[1] / "hook_scripts"


def forgeflare(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``forgeflare hooks ARGS`` in ``cwd``, in the test process."""
    return run_cli(["hooks", *args], cwd=cwd)


def write_hooks(root: Path, *entries: dict[str, object]) -> Path:
    path = root / ".forgeflare" / "hooks.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps({"hooks": list(entries)}))
    return path


def test_validate_ok(tmp_path: Path) -> None:
    write_hooks(
        tmp_path,
        {"event": "PreToolUse", "command": "a.sh"},
        {"event": "Stop", "command": "b.sh"},
    )
    script = Path(sys.executable).with_name("forgeflare")  # the one real process: the script
    ok = run_text([script, "hooks", "validate"], cwd=tmp_path, timeout=60)
    assert (ok.returncode, ok.stdout.strip()) == (0, "OK: 2 hooks")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[[hooks]]\nevent = "PreTool"\ncommand = "x"\n',
            "hooks[0] (event 'PreTool'): unknown event; expected PreToolUse, PostToolUse or Stop",
        ),
        (
            '[[hooks]]\nevent = "PreToolUse"\nmatch_tool = "Bsh"\ncommand = "x"\n',
            "hooks[0] (event 'PreToolUse'): match_tool 'Bsh' names no tool; did you mean Bash?",
        ),
    ],
    ids=["unknown-event", "tool-typo"],
)
def test_validate_names_the_error_and_where(tmp_path: Path, text: str, said: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    out = forgeflare(tmp_path, "validate", str(bad))
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [f"forgeflare: error: {bad}: {said}"]


def test_usage_errors_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same commands in this process (typer's runner): cheaper than a subprocess each.
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    missing = runner.invoke(hooks_app, ["validate", "nope.toml"])
    assert missing.exit_code == 1
    assert "nope.toml: no such file" in missing.stderr
    write_hooks(tmp_path, {"event": "Stop", "command": "true"})
    bad = runner.invoke(hooks_app, ["test", "PreToolUse", "--input", "[1]"])
    assert bad.exit_code == 1
    assert "--input: must be a JSON object" in bad.stderr
    unknown = runner.invoke(hooks_app, ["test", "PreTool"])
    assert unknown.exit_code == 1
    assert "unknown event 'PreTool'" in unknown.stderr
    nothing = runner.invoke(hooks_app, ["test", "PreToolUse"])
    assert nothing.exit_code == 0
    assert nothing.stdout.splitlines() == [
        "no hook matches PreToolUse for tool Bash",
        "result: allow, tool input {}",
    ]
    stop = runner.invoke(hooks_app, ["test", "Stop", "--reason", "api_error"])
    assert stop.exit_code == 0
    assert stop.stdout.splitlines()[0].split("\t")[:3] == ["Stop", "true", "invalid_json"]
    module = f"cli_hooks_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(
        "from forgeflare.hooks import Continue, hook\n"
        "@hook('Stop')\n"
        "def again(reason):\n"
        "    return Continue('keep going')\n"
    )
    try:
        py = runner.invoke(hooks_app, ["test", "Stop", "--hooks-module", module])
    finally:
        if str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))
    assert py.exit_code == 0, py.stderr
    assert py.stdout.splitlines()[-1] == "result: the agent goes on with the prompt: keep going"


def test_test_command_shows_each_hook(tmp_path: Path) -> None:
    write_hooks(
        tmp_path,
        {"event": "PreToolUse", "match_tool": "Bash", "command": f"{SCRIPTS}/ralph-guard.sh"},
        {"event": "PreToolUse", "phase": "observe", "command": "exit 5"},
    )
    out = forgeflare(tmp_path, "test", "PreToolUse", "--tool", "Bash", "--input",
                     '{"command": "rm -rf build"}')  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()  # a pipe: plain lines, no table
    guard = lines[0].split("\t")
    assert guard[0] == "PreToolUse/guard"
    assert guard[2] == "block"
    assert guard[3].endswith(" ms")
    assert guard[4] == "destructive command detected"
    observe = lines[1].split("\t")
    assert observe[:3] == ["PreToolUse/observe", "exit 5", "crash"]
    assert "exit code 5" in observe[4]
    assert lines[-1] == (
        "result: block, the model sees: blocked by "
        f"{SCRIPTS}/ralph-guard.sh: destructive command detected"
    )
    assert not (tmp_path / ".forgeflare" / "convergence.json").exists()


def test_test_command_collects_entry_point_hooks_like_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installed package's hooks (entry point group forgeflare.hooks) take part, with no
    # hooks.toml and no --hooks-module: the same collection as `forgeflare run`.
    mod = f"ephooks_{uuid.uuid4().hex}"
    (tmp_path / f"{mod}.py").write_text(
        "from forgeflare.hooks import Block, hook\n"
        "@hook('PreToolUse', match='Bash')\n"
        "def no_curl(input):\n"
        "    return Block('no curl') if 'curl' in input['command'] else None\n"
    )
    info = tmp_path / f"{mod}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[forgeflare.hooks]\nrules = {mod}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(hooks_app, ["test", "PreToolUse", "--input", '{"command": "curl x"}'])
    assert out.exit_code == 0, out.stderr
    assert out.stdout.splitlines()[0].split("\t")[1:3] == [f"{mod}.no_curl", "block"]
    assert out.stdout.splitlines()[-1] == (
        f"result: block, the model sees: blocked by {mod}.no_curl: no curl"
    )


def test_test_command_runs_the_built_in_bash_check_first(tmp_path: Path) -> None:
    # The same hooks as `forgeflare run`: the deny-list check blocks before any shell guard.
    write_hooks(tmp_path, {"event": "PreToolUse", "command": "touch guard-ran; echo {}"})
    out = forgeflare(tmp_path, "test", "PreToolUse", "--tool", "Bash", "--input",
                     '{"command": "rm -rf /"}')  # fmt: skip
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0].split("\t")
    assert first[:3] == ["PreToolUse/guard", "forgeflare:bash-check", "block"]
    assert out.stdout.splitlines()[-1].startswith(
        "result: block, the model sees: blocked by forgeflare:bash-check: "
    )
    assert not (tmp_path / "guard-ran").exists()


def test_schema_is_json_with_descriptions(tmp_path: Path) -> None:
    out = forgeflare(tmp_path, "schema")
    assert out.returncode == 0
    schema = json.loads(out.stdout)
    props = schema["$defs"]["HookConfig"]["properties"]
    assert "exact match" in props["match_tool"]["description"]
    assert schema["additionalProperties"] is False
