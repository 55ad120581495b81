"""The shell of the report: find a project's runs, read their records, ask git and the plan."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from forgeflare._completion import plan_tasks
from forgeflare._errors import ConfigError
from forgeflare._readfile import read_limited_text
from forgeflare.report._digest import Commit, Digest, build_digest
from forgeflare.report._todo import Todo, session_question
from forgeflare.supervisor import RecordError, RunRecord, list_runs, read_run, run_git, runs_root

__all__ = [
    "collect_digest",
    "find_run",
    "list_runs",
    "load_run",
    "runs_root",
    "session_todo",
    "skipped_line",
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


def _plan(project: Path, run: RunRecord) -> tuple[list[str], list[str]]:
    plan_rel = run.plan_file or "IMPLEMENTATION_PLAN.md"
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


def collect_digest(project: Path, run_dir: Path) -> Digest:
    """The digest of one run folder, with git's commits and the plan's tasks."""
    run = load_run(run_dir)
    done, still_open = _plan(project, run)
    digest = build_digest(
        run,
        commits=_commits(project, run),
        tasks_done=done,
        tasks_open=still_open,
        run_dir=str(run_dir),
    )
    digest.todo[:0] = session_todo(project)
    return digest


def session_todo(project: Path) -> list[Todo]:
    """The question a Claude Code loop of the project is parked on (the stop-hook's state sits
    beside the run records, not in them), as the list's first item; empty when none is."""
    from forgeflare.stophook import waiting_question

    question = waiting_question(project)
    return [] if question is None else [session_question(question, str(project.resolve()))]
