"""A frame's gate runs only as the user set it: ``loop-state.json`` is a project file, and a
clone can carry one whose gate nobody here ever typed.

The hook gets the Stop JSON on stdin as Claude Code sends it, through the console script's real
entry in the test process, without ``FORGEFLARE_TRUST`` (the suite's default), with the suite's
own trust store; the gate, when it runs, is a real shell command.
"""

from __future__ import annotations

from pathlib import Path

from test_stophook_processes import SIG, hook_env, hook_here, state_path, write_state

from stophook_support import blocks, reason_of, stop_hook_here


def untrusting_env() -> dict[str, str]:
    env = hook_env()
    env.pop("FORGEFLARE_TRUST", None)
    return env


def start(project: Path, gate: str) -> None:
    args = ["--max-iterations", "5", "--prompt", "fix it", "--gate", gate]
    done = stop_hook_here("start", *args, cwd=project, env=untrusting_env())
    assert done.returncode == 0, done.stderr


def test_a_gate_in_a_cloned_state_file_never_runs(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    project.mkdir()
    marker = project / "marker"  # the gate runs in the box: it writes only in the project
    frame = {"mode": "loop", "iter": 1, "max": 5, "prompt": "fix it", "gate": f"touch {marker}"}
    write_state(project, frame)

    out = hook_here(project, f"All done.\n{SIG}", env=untrusting_env())

    assert not marker.exists()
    assert blocks(out), out.stderr  # the claim is refused, not accepted unchecked
    reason = reason_of(out)
    assert "not run: this gate was not set with `forgeflare stop-hook start --gate` here" in reason
    assert state_path(project).exists()


def test_the_gate_the_user_started_runs_until_what_it_runs_changes(tmp_path: Path) -> None:
    project = tmp_path / "mine"
    project.mkdir()
    marker = project / "marker"  # the gate runs in the box: it writes only in the project
    (project / "check.sh").write_text(f"echo checked >> {marker}\n")
    start(project, "sh check.sh")

    first = hook_here(project, f"All done.\n{SIG}", env=untrusting_env())
    assert first.returncode == 0, first.stderr  # the gate ran, passed: the loop completed
    assert marker.read_text() == "checked\n"

    start(project, "sh check.sh")
    (project / "check.sh").write_text(f"echo rewritten >> {marker}\n")  # the agent's edit
    second = hook_here(project, f"All done.\n{SIG}", env=untrusting_env())
    assert blocks(second), second.stderr
    assert "what it runs changed" in reason_of(second)
    assert marker.read_text() == "checked\n"
