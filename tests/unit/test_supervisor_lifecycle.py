"""Hook environment, exit-code meaning, status-line parsing, convergence freshness."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare.supervisor.records import AgentStatus, parse_agent_line
from forgeflare.supervisor.run import is_fresh
from forgeflare.supervisor.run._lifecycle import HookContext, HookStatus, classify_exit, hook_env

COMMON = {
    "FRESHER_MODE",
    "FRESHER_MAX_ITERATIONS",
    "FRESHER_PROJECT_DIR",
    "FRESHER_LOG_DIR",
    "FRESHER_STARTED_AT",
}
STARTED = {"FRESHER_PLAN_FILE", "FRESHER_SPEC_DIR"}
NEXT = {
    "FRESHER_ITERATION",
    "FRESHER_LAST_EXIT_CODE",
    "FRESHER_LAST_DURATION",
    "FRESHER_COMMITS_MADE",
}
FINISHED = {
    "FRESHER_ITERATION",
    "FRESHER_FINISH_TYPE",
    "FRESHER_TOTAL_ITERATIONS",
    "FRESHER_TOTAL_COMMITS",
    "FRESHER_DURATION",
}

CTX = HookContext(
    mode="building",
    max_iterations=5,
    project_dir=Path("/p"),
    log_dir=Path("/p/.fresher/runs/r"),
    started_at="2026-01-01T00:00:00Z",
    plan_file=Path("/p/IMPLEMENTATION_PLAN.md"),
    spec_dir=Path("/p/specs"),
    run_id="r",
    iteration=3,
    last_exit_code=124,
    last_duration=12.6,
    commits_made=2,
    finish_type="complete",
    total_iterations=3,
    duration=61.2,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("started", COMMON | STARTED),
        ("next_iteration", COMMON | NEXT),
        ("finished", COMMON | FINISHED),
    ],
)
def test_hook_env_has_the_spec_variables(name: str, expected: set[str]) -> None:
    env = hook_env(name, CTX)
    assert expected <= set(env)
    assert all(isinstance(v, str) for v in env.values())


def test_hook_env_values() -> None:
    nxt = hook_env("next_iteration", CTX)
    assert nxt["FRESHER_LAST_EXIT_CODE"] == "124"
    assert nxt["FRESHER_LAST_DURATION"] == "13"
    assert nxt["FRESHER_COMMITS_MADE"] == "2"
    fin = hook_env("finished", CTX)
    assert fin["FRESHER_FINISH_TYPE"] == "complete"
    assert fin["FRESHER_TOTAL_COMMITS"] == "2"
    assert fin["FRESHER_DURATION"] == "61"
    assert "FRESHER_ITERATION" not in hook_env("started", CTX)


@pytest.mark.parametrize(
    ("code", "behavior", "status"),
    [
        (0, "continue", HookStatus.OK),
        (1, "continue", HookStatus.WARNING),
        (2, "continue", HookStatus.ABORT),
        (3, "continue", HookStatus.ERROR),
        (127, "continue", HookStatus.ERROR),
        (124, "continue", HookStatus.TIMEOUT),
        (143, "continue", HookStatus.ERROR),
        (0, "abort", HookStatus.OK),
        (1, "abort", HookStatus.WARNING),
        (3, "abort", HookStatus.ABORT),
        (124, "abort", HookStatus.ABORT),
    ],
)
def test_classify_exit(code: int, behavior: str, status: HookStatus) -> None:
    assert classify_exit(code, fail_behavior=behavior) is status


@pytest.mark.parametrize(
    ("line", "tool", "tokens"),
    [
        ("[tool] Bash: pytest -q\n", "Bash", 0),
        ("[usage] in=1200 out=40 total=1240\n", "", 1240),
        (
            '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x","name":"Edit"}]}}',
            "Edit",
            0,
        ),
        ("random output\n", "", 0),
        ("[usage] garbage\n", "", 0),
    ],
)
def test_parse_agent_line(line: str, tool: str, tokens: int) -> None:
    status = parse_agent_line(line, AgentStatus())
    assert status.last_tool == tool
    assert status.tokens == tokens


def test_is_fresh() -> None:
    assert not is_fresh(None, None)
    assert is_fresh(None, (1, 2, 3))
    assert not is_fresh((1, 2, 3), (1, 2, 3))  # could not delete and nobody wrote it
    assert is_fresh((1, 2, 3), (4, 2, 3))
    assert is_fresh((1, 2, 3), (1, 5, 3))
