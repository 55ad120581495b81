"""The shell of the report: find a project's runs, read their records, ask git and the plan."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from forgeflare._completion import plan_tasks
from forgeflare._errors import ConfigError
from forgeflare.disk import RUNTIME_PATTERNS, read_limited_text
from forgeflare.report._digest import Commit, Digest, build_digest
from forgeflare.report._taskcost import checked_between, task_costs
from forgeflare.report._todo import RunFacts, Todo, session_question
from forgeflare.supervisor import RecordError, RunRecord, list_runs, read_run, run_git, runs_root

__all__ = [
    "collect_digest",
    "find_run",
    "list_runs",
    "load_run",
    "porcelain_paths",
    "run_facts",
    "runs_root",
    "session_todo",
    "settled_run",
    "skipped_line",
    "supervisor_alive",
]


def load_run(run_dir: Path) -> RunRecord:
    """``run.json`` of one run folder (a damaged one is a one-line :class:`ConfigError`)."""
    try:
        return read_run(run_dir / "run.json")
    except RecordError as exc:
        raise ConfigError(str(exc)) from exc


def find_run(
    project: Path,
    run: str | None,
    env: Mapping[str, str],
    *,
    warn: Callable[[str], None] | None = None,
) -> Path:
    """A run folder from an id, a path, or (``None``) the newest readable run of the project.

    Looking for the newest, each damaged record passed over is told to ``warn`` in one line.
    """
    root = runs_root(project, env)
    if run is not None:
        as_path = Path(run)
        if (as_path / "run.json").is_file():
            return as_path
        candidate = root / run
        if (candidate / "run.json").is_file():
            return candidate
        raise ConfigError(f"no run {run!r} in {root}")
    listing = list_runs(root)
    if warn is not None:
        for line in listing.skipped:
            warn(skipped_line(line))
        for line in listing.damaged:
            warn(f"forgeflare: warning: {line}")
    if not listing.runs:
        damaged = f" (skipped {len(listing.skipped)} damaged)" if listing.skipped else ""
        raise ConfigError(f"no runs in {root}{damaged}: start one with forgeflare loop")
    return listing.runs[0][0]


def skipped_line(why: str) -> str:
    """The warning for a run passed over because its record is damaged."""
    return f"forgeflare: skipped a run: {why}"


def _git(project: Path, *args: str) -> str | None:
    done = run_git(project, *args)
    return done.stdout if done.ok else None


_SHA = re.compile(r"[0-9a-f]{7,64}")


def _sha(value: str | None) -> str | None:
    """A commit id from the record, or ``None``: what reaches git's argv is never an option."""
    return value if value is not None and _SHA.fullmatch(value) else None


def _heads(run: RunRecord) -> tuple[str | None, str | None]:
    rows = run.iterations
    start = _sha(run.head_at_start) or next(
        (r.head_before for r in rows if _sha(r.head_before)), None
    )
    end = next((r.head_after for r in reversed(rows) if _sha(r.head_after)), None)
    return start, end


def _commits(project: Path, run: RunRecord) -> list[Commit]:
    start, end = _heads(run)
    if start:
        spec = [f"{start}..{end or 'HEAD'}"]
    else:
        since, until = run.started_at, run.finished_at
        if not since:
            return []
        spec = [f"--since={since}"] + ([f"--until={until}"] if until else [])
    out = _git(
        project,
        "log",
        "--no-ext-diff",
        "--no-textconv",
        "--reverse",
        "--shortstat",
        "--format=%x00%H%x09%s",
        *spec,
    )
    if out is None:
        return []
    commits = []
    for chunk in out.split("\0")[1:]:
        head, _, rest = chunk.partition("\n")
        sha, _, subject = head.partition("\t")
        commits.append(Commit(sha=sha, subject=subject, stat=" ".join(rest.split())))
    return commits


def _plan_rel(run: RunRecord) -> str:
    return run.plan_file or "IMPLEMENTATION_PLAN.md"


def _task_names(project: Path, run: RunRecord) -> dict[int, list[str]]:
    """The boxes each iteration that checked some checked, by its number: the plan at the
    iteration's start and end commits (after its checkpoint); none where git cannot say."""
    costs = task_costs(run)
    rows = {row.number: row for row in run.iterations}
    names: dict[int, list[str]] = {}
    for cost in costs.finished if costs else ():
        row = rows[cost.iteration]
        before, after = _sha(row.head_before), _sha(row.head_after)
        if not before or not after or before == after:
            continue  # no commit holds the change: the count alone is said
        plans = [
            _git(project, "show", "--no-textconv", f"{sha}:{_plan_rel(run)}")
            for sha in (before, after)
        ]
        if plans[0] is not None and plans[1] is not None:
            names[cost.iteration] = checked_between(plans[0], plans[1])
    return names


def _plan(project: Path, run: RunRecord) -> tuple[list[str], list[str]]:
    plan_rel = _plan_rel(run)
    try:
        now = plan_tasks(read_limited_text(project / plan_rel, folder=project))
    except (OSError, ValueError):  # ValueError: not UTF-8, or a NUL in a damaged record's path
        return [], []
    start, _ = _heads(run)
    open_before: set[str] | None = None
    if start:
        before = _git(project, "show", "--no-textconv", f"{start}:{plan_rel}")
        if before is not None:
            open_before = {t for is_done, t in plan_tasks(before) if not is_done}
    # Without the run's starting commit, every checked task is shown (it cannot be attributed).
    done = [t for is_done, t in now if is_done and (open_before is None or t in open_before)]
    return done, [t for is_done, t in now if not is_done]


def supervisor_alive(run: RunRecord) -> bool | None:
    """Whether an unfinished run's supervisor still runs: ``runs`` and ``report`` both ask
    this one rule (``None`` for a finished run, or one that never recorded its pid)."""
    from forgeflare.platform import is_alive

    if run.finished_at or not run.supervisor_pid:
        return None
    return is_alive(run.supervisor_pid, run.supervisor_started)


def settled_run(run_dir: Path, run: RunRecord) -> tuple[RunRecord, bool | None]:
    """``run`` and :func:`supervisor_alive`, with the record read again when its supervisor is
    gone: a supervisor writes its finished record and then exits, perhaps just after ``run``
    was read, so the record read once it is gone is its last word (a damaged one keeps
    ``run``). ``runs``, ``report`` and ``watch`` all call an unfinished run dead by this."""
    alive = supervisor_alive(run)
    if alive is False:
        try:
            again = read_run(run_dir / "run.json")
        except RecordError:
            return run, alive
        if again.finished_at:
            return again, None
    return run, alive


# Files forgeflare and the stop-hook write while they run: never the user's undelivered work.
_OWN_FILES = (*RUNTIME_PATTERNS, ".forgeflare/loop-reviews/", ".claude/idle-loop.local.md")


def _exclude(pattern: str) -> str:
    """A gitignore-style pattern as a git pathspec that leaves it out (a folder: all below)."""
    glob = f"{pattern.rstrip('/')}/**" if pattern.endswith("/") else pattern
    return f":(exclude,glob){glob}"


def porcelain_paths(out: str) -> tuple[str, ...]:
    """The paths of ``git status --porcelain -z`` (a rename or copy by its new name)."""
    paths: list[str] = []
    origin = False
    for entry in out.split("\0"):
        if origin:  # a rename's or copy's origin follows it as an entry of its own
            origin = False
            continue
        if len(entry) > 3:
            paths.append(entry[3:])
            origin = entry[0] in "RC"
    return tuple(paths)


def dirty_paths(project: Path, run_dir: Path) -> tuple[str, ...]:
    """The project's changed and new (not ignored) paths, outside forgeflare's own files and
    the run records; empty when clean or not a git work tree."""
    spec = [_exclude(p) for p in _OWN_FILES]
    with contextlib.suppress(ValueError):  # records outside the project: git does not see them
        spec.append(
            _exclude(run_dir.resolve().parent.relative_to(project.resolve()).as_posix() + "/")
        )
    out = _git(project, "--no-optional-locks", "status", "--porcelain", "-z", "--", ".", *spec)
    return porcelain_paths(out or "")


def run_facts(project: Path, run_dir: Path, run: RunRecord) -> RunFacts:
    """What the machine says about the run now: its supervisor alive, the tree it left."""
    alive = supervisor_alive(run)
    # A running loop's tree is the agent's work in progress, not left-over work; once HEAD
    # moved past the run's end, the tree is a later run's (or the user's).
    _, end = _heads(run)
    head = (_git(project, "rev-parse", "--verify", "-q", "HEAD") or "").strip()
    ours = end is None or head == end
    dirty = dirty_paths(project, run_dir) if run.finished_at and ours else ()
    return RunFacts(alive=alive, dirty=dirty)


def collect_digest(project: Path, run_dir: Path) -> Digest:
    """The digest of one run folder, with git's commits and the plan's tasks."""
    run, _ = settled_run(run_dir, load_run(run_dir))
    done, still_open = _plan(project, run)
    digest = build_digest(
        run,
        commits=_commits(project, run),
        tasks_done=done,
        tasks_open=still_open,
        run_dir=str(run_dir),
        facts=run_facts(project, run_dir, run),
        task_names=_task_names(project, run),
    )
    digest.todo[:0] = session_todo(project)
    return digest


def session_todo(project: Path) -> list[Todo]:
    """The question a Claude Code loop of the project is parked on (the stop-hook's state sits
    beside the run records, not in them), as the list's first item; empty when none is."""
    from forgeflare.stophook import waiting_question

    question = waiting_question(project)
    return [] if question is None else [session_question(question, str(project.resolve()))]
