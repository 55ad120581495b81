"""Cost per finished task: the spend of the iterations that worked on each checked plan box (pure).

Each iteration's row records the plan's open boxes after it (``plan_unchecked``). The spend of
the iterations since the last box was checked is attributed to the boxes the next iteration
checks, split evenly when it checks several; what was spent after the last checked box finished
nothing (yet).
"""

from __future__ import annotations

from dataclasses import dataclass

from forgeflare.supervisor import RunRecord

__all__ = ["TaskCost", "TaskCosts", "task_costs"]


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


@dataclass(frozen=True, slots=True)
class TaskCosts:
    """Every finished task's cost and the spend that finished nothing."""

    finished: list[TaskCost]
    idle_cost_usd: float | None
    idle_iterations: int


def task_costs(run: RunRecord) -> TaskCosts | None:
    """``None`` when the run has no plan to count (no open-box counts in its rows)."""
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
            finished.append(TaskCost(row.number, checked, count, each))
            spent, count = 0.0, 0
        before = after
    return TaskCosts(
        finished=finished,
        idle_cost_usd=None if spent is None else round(spent, 6),
        idle_iterations=count,
    )
