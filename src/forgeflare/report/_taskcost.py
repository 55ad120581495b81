"""Cost per finished task: the spend of the iterations that worked on each checked plan box (pure).

Each iteration's row records the plan's open boxes after it (``plan_unchecked``). The spend of
the iterations since the last box was checked is attributed to the boxes the next iteration
checks, split evenly when it checks several; what was spent after the last checked box finished
nothing (yet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from forgeflare._completion import plan_tasks
from forgeflare.supervisor import RunRecord

__all__ = ["TaskCost", "TaskCosts", "checked_between", "task_costs"]


@dataclass(frozen=True, slots=True)
class TaskCost:
    """The boxes one iteration checked and what each cost."""

    iteration: int
    """The iteration that checked them."""
    tasks: int
    iterations: int
    """Iterations whose spend they carry (this one and those since the last checked box)."""
    cost_usd: float | None
    """Per task; ``None`` when a part of the spend has no known price."""
    names: tuple[str, ...] = ()
    """The boxes' texts, when the plan before and after the iteration is known (git)."""


@dataclass(frozen=True, slots=True)
class TaskCosts:
    """Every finished task's cost and the spend that finished nothing."""

    finished: list[TaskCost]
    idle_cost_usd: float | None
    idle_iterations: int


def checked_between(before: str, after: str) -> list[str]:
    """The boxes of plan text ``after`` that are checked there and were open in ``before``."""
    was_open = {text for done, text in plan_tasks(before) if not done}
    return [text for done, text in plan_tasks(after) if done and text in was_open]


def task_costs(
    run: RunRecord, names: Mapping[int, Sequence[str]] | None = None
) -> TaskCosts | None:
    """``None`` when the run has no plan to count (no open-box counts in its rows).
    ``names`` gives, by iteration number, the boxes that iteration checked, where known."""
    before = run.plan_unchecked_at_start
    if before is None and all(row.plan_unchecked is None for row in run.iterations):
        return None
    finished: list[TaskCost] = []
    spent: float | None = 0.0
    count = 0
    for row in run.iterations:
        if row.skipped:
            continue
        count += 1
        if row.cost_usd is None:
            spent = None if row.tokens.total else spent
        elif spent is not None:
            spent += row.cost_usd
        after = row.plan_unchecked
        if after is None:
            continue
        if before is not None and after < before:
            checked = before - after
            each = None if spent is None else round(spent / checked, 6)
            named = tuple((names or {}).get(row.number, ()))
            finished.append(TaskCost(row.number, checked, count, each, named))
            spent, count = 0.0, 0
        before = after
    return TaskCosts(
        finished=finished,
        idle_cost_usd=None if spent is None else round(spent, 6),
        idle_iterations=count,
    )
