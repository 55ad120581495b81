"""Cost per task, named: which boxes an iteration checked, and the report's line (pure)."""

from __future__ import annotations

import pytest

from forgeflare.report import TaskCost, TaskCosts, checked_between, task_cost_lines


@pytest.mark.parametrize(
    ("before", "after", "checked"),
    [
        ("- [ ] a\n- [ ] b\n", "- [x] a\n- [ ] b\n", ["a"]),
        ("- [ ] a\n- [ ] b\n", "- [x] a\n- [X] b\n", ["a", "b"]),
        ("- [x] a\n- [ ] b\n", "- [x] a\n- [ ] b\n", []),  # checked before: not this one's
        ("- [ ] a\n", "- [x] a\n- [x] new\n", ["a"]),  # added already checked: not finished
        ("- [ ] a\n", "- [ ] a\n", []),
        ("", "* [x] a\n", []),
    ],
)
def test_checked_between(before: str, after: str, checked: list[str]) -> None:
    assert checked_between(before, after) == checked


class _Digest:
    def __init__(self, *finished: TaskCost) -> None:
        self.task_costs = TaskCosts(list(finished), idle_cost_usd=0.0, idle_iterations=0)


@pytest.mark.parametrize(
    ("cost", "line"),
    [
        (
            TaskCost(1, 1, 1, 0.058, ("add the parser",)),
            'iteration 1: "add the parser", $0.0580 (1 iteration)',
        ),
        (
            TaskCost(3, 2, 2, 1.5, ("lexer", "parser")),
            'iteration 3: "lexer", "parser", $1.50 each (2 iterations)',
        ),
        (
            TaskCost(2, 1, 1, None, ("x" * 70,)),
            f'iteration 2: "{"x" * 59}…", cost unknown (1 iteration)',
        ),
        # no commit holds the plan's change: the count, as before
        (TaskCost(4, 1, 1, 0.5), "iteration 4: 1 task checked, $0.50 each (1 iteration)"),
    ],
)
def test_the_cost_line_names_the_task(cost: TaskCost, line: str) -> None:
    assert task_cost_lines(_Digest(cost)) == [line]  # type: ignore[arg-type]
