"""Every script ``forgeflare init`` ships, run for real: agent hooks with sample stdin JSON,
lifecycle hooks with ``FRESHER_*`` variables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from forgeflare.templates import init_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("initialised")
    init_project(root)
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHER_")}
    # The scripts say `#!/usr/bin/env python3`: the test's interpreter answers to that name.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def _hook(root: Path, script: str, payload: dict[str, Any], **env: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(root / ".forgeflare" / "hooks" / script)],
        input=json.dumps({"cwd": str(root), **payload}),
        cwd=root,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


def _pre(command: str, phase: str = "guard", **extra: Any) -> dict[str, Any]:
    return {
        "event": "PreToolUse",
        "phase": phase,
        "tool": "Bash",
        "input": {"command": command},
        "tool_iterations": 1,
        **extra,
    }


def test_guard_blocks_rm_rf_build_and_allows_ls(project: Path) -> None:
    blocked = _hook(project, "bash-guard.py", _pre("rm -rf build"))
    assert blocked["action"] == "block"
    assert "destructive command" in blocked["reason"]
    assert "rm -r build" in blocked["reason"]
    assert _hook(project, "bash-guard.py", _pre("ls")) == {"action": "allow"}
    # Unreadable input is a block with a reason (the guard fails closed, and says why).
    done = subprocess.run(
        [str(project / ".forgeflare" / "hooks" / "bash-guard.py")],
        input="not json",
        env=_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(done.stdout)["action"] == "block"


def test_audit_appends_one_line_per_call(tmp_path: Path) -> None:
    init_project(tmp_path)
    allowed = _pre("ls -l", phase="observe", blocked=False)
    _hook(tmp_path, "audit-log.py", allowed)
    blocked = _pre(
        "rm -rf build",
        phase="observe",
        blocked=True,
        blocked_by=".forgeflare/hooks/bash-guard.py",
        block_reason="destructive command: no",
    )
    _hook(tmp_path, "audit-log.py", blocked)
    read = {
        "event": "PreToolUse",
        "phase": "observe",
        "tool": "Read",
        "input": {"file_path": "a\tb\nc.md"},
        "blocked": False,
    }
    _hook(tmp_path, "audit-log.py", read)
    lines = (tmp_path / ".forgeflare" / "audit.log").read_text().splitlines()
    assert len(lines) == 3
    rows = [line.split("\t") for line in lines]
    assert [r[1:4] for r in rows] == [
        ["Bash", "allowed", "ls -l"],
        ["Bash", "BLOCKED", "rm -rf build"],
        ["Read", "allowed", "a b c.md"],
    ]
    assert rows[1][4] == "blocked by .forgeflare/hooks/bash-guard.py: destructive command: no"
    assert all(r[0].endswith("Z") and len(r[0]) == 20 for r in rows)


def _post(command: str, *, is_error: bool = False, tool: str = "Bash") -> dict[str, Any]:
    return {
        "event": "PostToolUse",
        "tool": tool,
        "input": {"command": command},
        "result": "OK" if not is_error else "FAILED\n[exit code 1]",
        "is_error": is_error,
        "tool_iterations": 2,
    }


def test_convergence_check_signals_only_when_plan_done_and_tests_pass(tmp_path: Path) -> None:
    plan = tmp_path / "IMPLEMENTATION_PLAN.md"
    init_project(tmp_path)
    # Open task left: no signal even for a passing test run.
    assert _hook(tmp_path, "convergence-check.py", _post("pytest -q")) == {"action": "continue"}
    plan.write_text("# Plan\n- [x] done\n  * [x] also done\n")
    signal = _hook(tmp_path, "convergence-check.py", _post("python3 -m unittest -v"))
    assert signal["action"] == "signal"
    assert signal["signal"] == "converged"
    assert "IMPLEMENTATION_PLAN.md has no open task" in signal["reason"]
    # Failing tests, something that is not a test run, another tool: no signal.
    for payload in (
        _post("pytest -q", is_error=True),
        _post("ls -l"),
        _post("pytest", tool="Edit"),
    ):
        assert _hook(tmp_path, "convergence-check.py", payload) == {"action": "continue"}
    # FRESHER_PLAN_FILE names the plan (the supervisor sets it for the agent).
    (tmp_path / "other.md").write_text("- [ ] open\n")
    assert _hook(
        tmp_path, "convergence-check.py", _post("cargo test"), FRESHER_PLAN_FILE="other.md"
    ) == {"action": "continue"}
    # No plan at all: not converged.
    plan.unlink()
    assert _hook(tmp_path, "convergence-check.py", _post("go test ./...")) == {"action": "continue"}


def test_stop_hook_appends_the_session_end(tmp_path: Path) -> None:
    init_project(tmp_path)
    for reason, iterations, tokens in (("end_turn", 7, 45000), ("convergence_signal", 2, 900)):
        payload = {
            "event": "Stop",
            "reason": reason,
            "tool_iterations": iterations,
            "total_tokens": tokens,
        }
        assert _hook(tmp_path, "session-end.py", payload) == {"action": "continue"}
    rows = [
        line.split("\t")[1:]
        for line in (tmp_path / ".forgeflare" / "sessions.log").read_text().splitlines()
    ]
    assert rows == [
        ["reason=end_turn", "tool_iterations=7", "total_tokens=45000"],
        ["reason=convergence_signal", "tool_iterations=2", "total_tokens=900"],
    ]


# -- lifecycle hooks --------------------------------------------------------------------------


def _lifecycle(root: Path, name: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / ".fresher" / "hooks" / name)],
        cwd=root,
        env=_env(FRESHER_PROJECT_DIR=str(root), **env),
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_started_aborts_in_building_mode_without_a_plan(tmp_path: Path) -> None:
    init_project(tmp_path)
    ok = _lifecycle(tmp_path, "started", FRESHER_MODE="building", FRESHER_MAX_ITERATIONS="0")
    assert ok.returncode == 0, ok.stderr
    assert "Starting the loop in building mode" in ok.stdout
    assert "Max iterations: unlimited" in ok.stdout
    (tmp_path / "IMPLEMENTATION_PLAN.md").unlink()
    aborted = _lifecycle(tmp_path, "started", FRESHER_MODE="building")
    assert aborted.returncode == 2
    assert "run planning mode first" in aborted.stderr
    planning = _lifecycle(tmp_path, "started", FRESHER_MODE="planning")
    assert planning.returncode == 0, planning.stderr


def test_next_iteration_skips_when_nothing_is_open(tmp_path: Path) -> None:
    init_project(tmp_path)
    plan = tmp_path / "IMPLEMENTATION_PLAN.md"
    env = {"FRESHER_MODE": "building", "FRESHER_PLAN_FILE": str(plan)}
    first = _lifecycle(tmp_path, "next_iteration", FRESHER_ITERATION="1", **env)
    assert first.returncode == 0, first.stderr
    assert "Open tasks: 1" in first.stdout
    plan.write_text("- [x] done\n")
    later = _lifecycle(
        tmp_path,
        "next_iteration",
        FRESHER_ITERATION="3",
        FRESHER_LAST_EXIT_CODE="0",
        FRESHER_LAST_DURATION="12",
        FRESHER_COMMITS_MADE="2",
        **env,
    )
    assert later.returncode == 1
    assert "Previous iteration: exit=0, duration=12s" in later.stdout
    assert "Commits so far: 2" in later.stdout
    assert "skipping iteration" in later.stdout
    # Planning mode never skips on the plan.
    planning = _lifecycle(
        tmp_path, "next_iteration", FRESHER_ITERATION="2", FRESHER_MODE="planning"
    )
    assert planning.returncode == 0


@pytest.mark.parametrize(
    ("finish", "message"),
    [
        ("complete", "Complete (complete: the agent said the tag)"),
        ("manual", "Loop stopped by user"),
        ("max_iterations", "Reached the max iterations limit"),
        ("error", "Loop stopped due to errors"),
        ("hook_abort", "Loop aborted by a hook"),
        ("something_new", "Loop finished: something_new"),
    ],
)
def test_finished_prints_the_summary_by_finish_type(
    project: Path, finish: str, message: str
) -> None:
    done = _lifecycle(
        project,
        "finished",
        FRESHER_FINISH_TYPE=finish,
        FRESHER_TOTAL_ITERATIONS="4",
        FRESHER_TOTAL_COMMITS="3",
        FRESHER_DURATION="61",
        FRESHER_FINISH_REASON="complete: the agent said the tag" if finish == "complete" else "",
    )
    assert done.returncode == 0, done.stderr
    assert f"Finish type: {finish}" in done.stdout
    assert "Total iterations: 4" in done.stdout
    assert done.stdout.strip().endswith(message)


def test_notify_does_nothing_without_its_webhook_and_posts_with_it(tmp_path: Path) -> None:
    init_project(tmp_path)
    notify = tmp_path / ".fresher" / "hooks" / "custom" / "notify"
    bash = shutil.which("bash")
    assert bash is not None
    # No tool on PATH at all: without the variable it must not even look for curl.
    done = subprocess.run(
        [bash, str(notify), "hello"],
        env={"PATH": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # With it, curl gets the message as JSON (a stand-in curl records its arguments).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "curl"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$CURL_ARGS"\n')
    fake.chmod(0o755)
    args_file = tmp_path / "args"
    done = subprocess.run(
        [bash, str(notify), 'say "hi"'],
        env={
            "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "FRESHER_NOTIFY_WEBHOOK": "http://127.0.0.1:9/hook",
            "CURL_ARGS": str(args_file),
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    args = args_file.read_text().splitlines()
    assert "http://127.0.0.1:9/hook" in args
    body = args[args.index("-d") + 1]
    assert json.loads(body) == {"text": 'say "hi"'}
