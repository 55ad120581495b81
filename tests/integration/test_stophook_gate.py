"""``stop-hook start --gate CMD``: an in-session loop's completion claim must pass the gate.

``forgeflare stop-hook start`` writes the state, ``forgeflare stop-hook`` gets the Stop JSON on
stdin as Claude Code sends it, both through the console script's real entry in the test process;
the gate is a real shell command. The hook is a real process where what the gate leaves behind is
the point."""

from __future__ import annotations

from pathlib import Path

from test_stophook_processes import SIG, hook_env, hook_here, read_state, run_hook, state_path

from stophook_support import blocks, reason_of, stop_hook_here
from text_support import missing

RED = "echo 'FAILED tests/test_calc.py::test_divide - ZeroDivisionError'; exit 4"


def start(project: Path, gate: str, *more: str) -> None:
    args = ["--max-iterations", "5", "--prompt", "fix divide", "--gate", gate, *more]
    done = stop_hook_here("start", *args, cwd=project, env=hook_env())
    assert done.returncode == 0, done.stderr


def test_a_claim_with_a_red_gate_continues_with_the_failing_tail(tmp_path: Path) -> None:
    start(tmp_path, RED)
    assert read_state(tmp_path)["stack"][0]["gate"] == RED
    out = hook_here(tmp_path, f"All done.\n{SIG}")
    reason = reason_of(out)
    assert reason.startswith("# The last iteration claimed completion")
    assert not missing(
        reason,
        "exited 4",
        "test_calc.py::test_divide - ZeroDivisionError",
        "[ITERATION 2/5]",
        "fix divide",
    ), reason
    assert read_state(tmp_path)["stack"][0]["iter"] == 2


def test_a_claim_with_a_green_gate_completes(tmp_path: Path) -> None:
    start(tmp_path, "exit 0")
    out = hook_here(tmp_path, f"All done.\n{SIG}")
    assert out.returncode == 0, out.stderr
    assert not state_path(tmp_path).exists()


def test_without_a_claim_the_gate_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "gate-ran"
    start(tmp_path, f"touch {marker}; exit 1")
    out = hook_here(tmp_path, "Still working on it.")
    assert blocks(out), out.stderr
    assert "claimed completion" not in out.stderr
    assert not marker.exists()


def test_claims_refused_with_the_same_failure_end_the_loop_stalled(tmp_path: Path) -> None:
    start(tmp_path, RED, "--stall-after", "2")
    for n in (2, 3):
        out = hook_here(tmp_path, f"Fixed it.\n{SIG}")
        assert blocks(out), out.stderr
        assert read_state(tmp_path)["stack"][0]["iter"] == n
    assert read_state(tmp_path)["stack"][0]["stalled"] == 1
    out = hook_here(tmp_path, f"Fixed it now.\n{SIG}")
    assert out.returncode == 0, out.stderr
    assert "stalled: 2 claims in a row refused with the same gate failures" in out.stderr
    assert "test_calc.py::test_divide" in out.stderr
    assert not state_path(tmp_path).exists()


def test_a_claim_whose_failures_changed_is_progress(tmp_path: Path) -> None:
    flip = tmp_path / "which"
    flip.write_text("a")
    gate = f'n=$(cat {flip}); echo "FAILED tests/t.py::test_$n"; exit 1'
    start(tmp_path, gate, "--stall-after", "1")
    assert blocks(hook_here(tmp_path, f"Done.\n{SIG}"))  # first failure: the baseline
    flip.write_text("b")
    assert blocks(hook_here(tmp_path, f"Done.\n{SIG}"))  # other failures: progress
    assert "stalled" not in read_state(tmp_path)["stack"][0]  # 0: not written
    assert hook_here(tmp_path, f"Done.\n{SIG}").returncode == 0  # the same again: stalled


def test_a_gate_leaves_nothing_behind_even_unsandboxed(tmp_path: Path) -> None:
    """The gate runs on the one process primitive: a detached grandchild (a new session, as a
    test server or a watcher would) ends with the gate, in the box or out of it."""
    (tmp_path / ".fresher").mkdir()
    (tmp_path / ".fresher" / "config.toml").write_text('[security]\nsandbox = "off"\n')
    pidfile = tmp_path / "grandchild.pid"
    start(tmp_path, f"setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {pidfile}; exit 0")
    out = run_hook(tmp_path, f"All done.\n{SIG}")
    assert out.returncode == 0, out.stderr
    pid = int(pidfile.read_text())
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z"), state
