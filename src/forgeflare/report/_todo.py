"""The morning's to-do list: "What needs you", from the run records (pure).

:func:`needs_you` reads one run's record, :func:`fleet_needs_you` a fleet's (its loops' newest
runs and what did not land). Each item is one line with the command that acts on it; an empty
list means nothing needs the reader (the report then says so).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forgeflare.supervisor import RunRecord

__all__ = [
    "NOTHING",
    "RunFacts",
    "Todo",
    "checkpoint_failures",
    "fleet_needs_you",
    "land_command",
    "needs_you",
    "render_todo_lines",
    "session_question",
    "todo_section",
]

NOTHING = "Nothing needs you: no open question, no failed claim, stop or hook."
"""What the list says when it is empty."""

_LANDED = ("landed", "pr_opened")
_STOPS_ON_LIMIT = ("rate_limited", "quota")


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What the records cannot say about a run, asked of the machine when the report is read."""

    alive: bool | None = None
    """Whether an unfinished run's supervisor still runs (``None``: not known)."""
    dirty: tuple[str, ...] = ()
    """The project's changed paths now, outside forgeflare's own files."""


@dataclass(frozen=True, slots=True)
class Todo:
    """One thing that needs a person, in one line, and the command that acts on it."""

    kind: str
    """question, dead, undelivered, commit, dirty, claim, landing, budget, usage_limit,
    stalled, error, hook."""
    what: str
    command: str
    where: str = ""
    """The loop (in a fleet) or the project it is about."""


def _q(path: str) -> str:
    return shlex.quote(path or ".")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] + (" …" if len(lines) > 1 else "") if lines else "?"


def _claim(row: Any) -> Mapping[str, Any] | None:
    """A row's completion claim (``claim``: by, accepted, rejected_by, why), if it has one."""
    claim = getattr(row, "claim", None)
    if claim is None:
        extra = getattr(row, "model_extra", None) or {}
        claim = extra.get("claim")
    dump = getattr(claim, "model_dump", None)
    if callable(dump):
        claim = dump()
    return claim if isinstance(claim, Mapping) else None


def _claim_command(row: Any, run_dir: str, project: str) -> str:
    """Where a refused claim is told in full: the review, else the iteration's log (the
    report that prints the to-do line says no more than it)."""
    seen = getattr(getattr(row, "review", None), "file", None) or getattr(row, "log", None)
    return (
        f"less {_q(f'{run_dir}/{seen}')}"
        if run_dir and seen
        else f"forgeflare loop --dir {project}"
    )


def needs_you(
    run: RunRecord,
    *,
    run_dir: str = "",
    where: str = "",
    alive: bool | None = None,
    dirty: Sequence[str] = (),
) -> list[Todo]:
    """What one run leaves for a person, most urgent first (a running loop: only its question).

    ``alive``: whether an unfinished run's supervisor still runs (``False``: it died, and
    ``--resume`` picks it up; ``None``: not known). ``dirty``: the project's changed paths now,
    outside forgeflare's own files (work a finished run left uncommitted).
    """
    project = _q(run.project_dir)
    out: list[Todo] = []
    if run.question is not None:
        out.append(
            Todo(
                "question",
                f"the agent asks: {_first_line(run.question)}",
                f'forgeflare answer --dir {project} "…" && '
                f"forgeflare loop --resume --dir {project}",
                where,
            )
        )
    if run.finished_at is None:
        if alive is False and run.question is None:
            out.append(_dead(run, project, where))
        return out
    rows = [row for row in run.iterations if not row.skipped]
    last = rows[-1] if rows else None
    out += _delivery(run, rows, project, where, dirty)
    claim = _claim(last) if last is not None else None
    if claim is not None and claim.get("accepted") is False:
        by = claim.get("rejected_by") or "the gate"
        why = f": {claim['why']}" if claim.get("why") else ""
        out.append(
            Todo(
                "claim",
                f"iteration {last.number if last else '?'} claimed done; {by} said no{why}",
                _claim_command(last, run_dir, project),
                where,
            )
        )
    out += _stopped(run, last, run_dir, project, where)
    out += _failed_hooks(run, run_dir, where)
    return out


def _stopped(run: RunRecord, last: Any, run_dir: str, project: str, where: str) -> list[Todo]:
    """Why the run stopped short, when a person can act on it: the budget, a usage limit, a
    stall, block limits or an error streak (``last``: its last iteration not skipped)."""
    out: list[Todo] = []
    finish = run.finish_type
    if finish == "budget":
        spent = run.totals.cost_usd or 0.0
        cap = f" of ${run.max_cost:g}" if run.max_cost else ""
        more = f" --max-cost {run.max_cost * 2:g}" if run.max_cost else ""
        out.append(
            Todo(
                "budget",
                f"stopped on the budget: ${spent:.2f}{cap} spent",
                f"forgeflare loop --dir {project}{more}",
                where,
            )
        )
    elif last is not None and (last.outcome in _STOPS_ON_LIMIT or finish == "quota"):
        resets = f"; the window resets {last.resets_at}" if last.resets_at else ""
        out.append(
            Todo(
                "usage_limit",
                f"stopped on a usage limit ({last.outcome}){resets}",
                f"forgeflare loop --dir {project}",
                where,
            )
        )
    elif finish in ("stalled", "stuck", "error"):
        log = f"{run_dir}/{last.log}" if run_dir and last is not None and last.log else ""
        words = {"stalled": "stalled", "stuck": "stuck on block limits", "error": "error streak"}
        out.append(
            Todo(
                "stalled" if finish != "error" else "error",
                f"{words[finish]}: {run.finish_reason or finish}",
                f"less {_q(log)}" if log else f"forgeflare loop --dir {project}",
                where,
            )
        )
    return out


def _failed_hooks(run: RunRecord, run_dir: str, where: str) -> list[Todo]:
    """The run's hook runs that failed (its own hooks and the next-iteration hooks)."""
    out: list[Todo] = []
    hooks = list(run.hooks) + [
        row.next_iteration_hook for row in run.iterations if row.next_iteration_hook is not None
    ]
    failed = [h for h in hooks if h.status in ("error", "timeout", "abort", "not_executable")]
    if failed:
        names = ", ".join(sorted({h.name for h in failed}))
        log = f"{run_dir}/hooks.log" if run_dir else ""
        out.append(
            Todo(
                "hook",
                f"{len(failed)} hook run(s) failed: {names}",
                f"less {_q(log)}" if log else f"ls -l {_q(run.project_dir + '/.fresher/hooks')}",
                where,
            )
        )
    return out


def _dead(run: RunRecord, project: str, where: str) -> Todo:
    """An unfinished run whose supervisor is gone (a kill -9, a reboot): resume it."""
    # The iteration it died in is not in the record yet: only the finished ones are.
    rows = [row for row in run.iterations if not row.skipped]
    return Todo(
        "dead",
        f"the loop died mid-run (its supervisor is gone; {len(rows)} iteration(s) recorded)",
        f"forgeflare loop --resume --dir {project}",
        where,
    )


# Reasons a checkpoint was skipped that leave nothing undone, or that the user chose (work
# left in the tree then shows as a dirty tree).
_BENIGN_SKIPS = ("not a git repository", "nothing to commit", "checkpoint = ")


def checkpoint_failures(row: Any) -> str | None:
    """Why the loop could not commit an iteration's work (its ``checkpoint``: a commit that
    failed, or one skipped for a held lock, a merge, a detached HEAD, the caps), or ``None``
    when it committed, had nothing to commit, or was told not to."""
    checkpoint = getattr(row, "checkpoint", None)
    if checkpoint is None:
        return None
    if checkpoint.failed:
        return f"git commit failed: {checkpoint.failed}"
    skipped = checkpoint.skipped
    if not skipped or skipped.startswith(_BENIGN_SKIPS):
        return None
    return str(skipped)


def _delivery(
    run: RunRecord, rows: Sequence[Any], project: str, where: str, dirty: Sequence[str]
) -> list[Todo]:
    """What was not delivered: an ``undelivered`` finish, commits that failed, a dirty tree."""
    out: list[Todo] = []
    status = f"git -C {project} status"
    if run.finish_type == "undelivered":
        # Its reason names what was left and why: said once, not again as commits or files.
        reason = run.finish_reason or "undelivered"
        what = reason if reason.startswith("undelivered") else f"undelivered: {reason}"
        return [Todo("undelivered", what.split("; see `git")[0], status, where)]
    failed = [(row.number, why) for row in rows if (why := checkpoint_failures(row))]
    if failed:
        number, why = failed[-1]
        out.append(
            Todo(
                "commit",
                f"{len(failed)} iteration(s) could not commit their work "
                f"(the last, iteration {number}: {why})",
                status,
                where,
            )
        )
    if dirty:
        shown = ", ".join(dirty[:3]) + (" …" if len(dirty) > 3 else "")
        out.append(
            Todo(
                "dirty",
                f"uncommitted changes in {len(dirty)} file(s) after the run: {shown}",
                status,
                where,
            )
        )
    return out


def session_question(question: str, project_dir: str, where: str = "") -> Todo:
    """The item for a question a Claude Code loop (the stop-hook's) is parked on: its answer
    goes through ``stop-hook answer``, and the session's next turn goes on with the loop."""
    project = _q(project_dir)
    return Todo(
        "question",
        f"the Claude Code loop asks: {_first_line(question)}",
        f'forgeflare stop-hook answer --dir {project} "…"',
        where,
    )


def fleet_needs_you(
    loops: Sequence[Any],
    runs: Mapping[str, tuple[RunRecord, str] | None],
    fleet_file: str = "FLEET.toml",
    facts: Mapping[str, RunFacts] | None = None,
    fleet_alive: bool | None = None,
) -> list[Todo]:
    """A fleet's list: each loop's (its newest run's) items, then branches not landed and why.

    ``loops`` are the fleet record's loops (``name``, ``status``, ``branch``, ``worktree``,
    ``reason``, ``finish_type``); ``runs`` maps a loop's name to its newest run and that run's
    folder, ``facts`` to what the machine says about that run now. A branch not landed is
    retried with ``fleet land`` (after the loop runs on, if it did not complete).
    ``fleet_alive`` ``False``: the fleet's supervisor died mid-run (``fleet run --resume``
    goes on with every loop, so its loops' runs are not listed as dead one by one).
    """
    out: list[Todo] = []
    if fleet_alive is False:
        out.append(
            Todo(
                "dead",
                "the fleet died mid-run (its supervisor is gone; the fleet never finished)",
                f"forgeflare fleet run --resume {_q(fleet_file)}",
            )
        )
    for loop in loops:
        found = runs.get(loop.name)
        if found is not None:
            known = (facts or {}).get(loop.name, RunFacts())
            items = needs_you(
                found[0],
                run_dir=found[1],
                where=loop.name,
                alive=known.alive,
                dirty=known.dirty,
            )
            out += [i for i in items if not (fleet_alive is False and i.kind == "dead")]
    for loop in loops:
        blocked = _has_question(runs.get(loop.name))
        if loop.status in _LANDED or loop.status in ("pending", "running") or blocked:
            continue
        why = f": {loop.reason}" if loop.reason else ""
        if not loop.branch:  # it never started: run the fleet again
            what = f"not run ({loop.status}){why}"
        else:
            what = f"branch {loop.branch} not landed ({loop.status}){why}"
        out.append(Todo("landing", what, land_command(loop, fleet_file), loop.name))
    return out


def land_command(loop: Any, fleet_file: str) -> str:
    """What to run to land a fleet's loop that did not land (``name``, ``branch``,
    ``worktree``, ``finish_type`` of its record): the fleet again when it never started,
    else ``fleet land``, after the loop runs on in its worktree when it did not complete."""
    if not loop.branch:
        return f"forgeflare fleet run {_q(fleet_file)}"
    command = f"forgeflare fleet land {_q(fleet_file)} {shlex.quote(loop.name)}"
    if getattr(loop, "finish_type", "complete") != "complete":
        # Only a completed loop lands: it runs on in its worktree first.
        command = f"forgeflare loop --dir {_q(loop.worktree)} && {command}"
    return command


def _has_question(found: tuple[RunRecord, str] | None) -> bool:
    """The run has an open question (its landing waits for the answer, said once above)."""
    return found is not None and found[0].question is not None


def render_todo_lines(items: Sequence[Todo]) -> list[str]:
    """The list as text lines: one per item, its command after an arrow; or :data:`NOTHING`."""
    if not items:
        return [NOTHING]
    return [
        (f"[{item.where}] " if item.where else "") + f"{item.what}  →  {item.command}"
        for item in items
    ]


def todo_section(items: Sequence[Todo]) -> list[str]:
    """The list under its heading, each line indented, as the text reports open."""
    return ["What needs you", *(f"  {line}" for line in render_todo_lines(items))]
