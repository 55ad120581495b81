"""The shipped ``convergence-check.py`` run for real: a signal only when the plan has no open
task and a test run passed."""

from __future__ import annotations

from pathlib import Path

from forgeflare.templates import init_project
from template_hooks_support import post_tool_use, run_hook_script


def test_convergence_check_signals_only_when_plan_done_and_tests_pass(tmp_path: Path) -> None:
    plan = tmp_path / "IMPLEMENTATION_PLAN.md"
    init_project(tmp_path)
    # Open task left: no signal even for a passing test run.
    assert run_hook_script(tmp_path, "convergence-check.py", post_tool_use("pytest -q")) == {
        "action": "continue"
    }
    plan.write_text("# Plan\n- [x] done\n  * [x] also done\n")
    signal = run_hook_script(
        tmp_path, "convergence-check.py", post_tool_use("python3 -m unittest -v")
    )
    assert signal["action"] == "signal"
    assert signal["signal"] == "converged"
    assert "IMPLEMENTATION_PLAN.md has no open task" in signal["reason"]
    # Failing tests, something that is not a test run, another tool: no signal.
    for payload in (
        post_tool_use("pytest -q", is_error=True),
        post_tool_use("ls -l"),
        post_tool_use("pytest", tool="Edit"),
    ):
        assert run_hook_script(tmp_path, "convergence-check.py", payload) == {"action": "continue"}
    # FRESHER_PLAN_FILE names the plan (the supervisor sets it for the agent).
    (tmp_path / "other.md").write_text("- [ ] open\n")
    assert run_hook_script(
        tmp_path, "convergence-check.py", post_tool_use("cargo test"), FRESHER_PLAN_FILE="other.md"
    ) == {"action": "continue"}
    # No plan at all: not converged.
    plan.unlink()
    assert run_hook_script(tmp_path, "convergence-check.py", post_tool_use("go test ./...")) == {
        "action": "continue"
    }
