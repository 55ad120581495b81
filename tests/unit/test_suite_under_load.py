"""The suite holds on a busy machine: no hypothesis test brings back a timing check.

A test's own ``@settings(suppress_health_check=[...])`` replaces the profile's list instead of
adding to it, so a test that suppresses only ``function_scoped_fixture`` gets hypothesis's
"input generation is slow" check back, and fails when both cores are taken by other work.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import settings

from conftest import SLOW_MACHINE_CHECKS

TESTS = Path(__file__).resolve().parent.parent


def _settings_calls(tree: ast.AST) -> list[ast.Call]:
    """``settings(...)`` and ``hypothesis.settings(...)`` calls (decorators included)."""
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == "settings":
            calls.append(node)
    return calls


def timing_problems(source: str) -> list[str]:
    """What a module's ``settings(...)`` calls bring back: a deadline, or a suppression list
    without the slow-machine checks (``[*SLOW_MACHINE_CHECKS, ...]``)."""
    problems = []
    for call in _settings_calls(ast.parse(source)):
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg == "deadline" and not (
                isinstance(value, ast.Constant) and value.value is None
            ):
                problems.append(f"line {call.lineno}: a deadline")
            if keyword.arg == "suppress_health_check" and not (
                isinstance(value, ast.List | ast.Tuple)
                and any(
                    isinstance(item, ast.Starred)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "SLOW_MACHINE_CHECKS"
                    for item in value.elts
                )
            ):
                problems.append(f"line {call.lineno}: health checks without SLOW_MACHINE_CHECKS")
    return problems


def test_the_rule_sees_a_replaced_suppression_list_and_a_deadline() -> None:
    assert timing_problems(
        "@settings(max_examples=5, suppress_health_check=[HealthCheck.function_scoped_fixture])\n"
        "def f(): ...\n"
    ) == ["line 1: health checks without SLOW_MACHINE_CHECKS"]
    assert timing_problems("@hypothesis.settings(deadline=200)\ndef f(): ...\n") == [
        "line 1: a deadline"
    ]
    fine = (
        "@settings(deadline=None, suppress_health_check=[*SLOW_MACHINE_CHECKS, HealthCheck.x])\n"
        "def f(): ...\n"
    )
    assert timing_problems(fine) == []


def test_no_hypothesis_test_brings_a_timing_check_back() -> None:
    found = {
        str(path.relative_to(TESTS)): problems
        for path in sorted(TESTS.rglob("test_*.py"))
        if (problems := timing_problems(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_loaded_profile_has_no_deadline_and_no_slow_machine_checks() -> None:
    assert settings.default.deadline is None
    assert set(SLOW_MACHINE_CHECKS) <= set(settings.default.suppress_health_check)
