"""The shell of the report: find a project's runs, read their records, ask git and the plan."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forgeflare._errors import ConfigError
from forgeflare.report._digest import Commit, Digest, build_digest
from forgeflare.supervisor._config import load_config
from forgeflare.supervisor._records import read_finish_marker

__all__ = ["collect_digest", "find_run", "list_runs", "load_run", "runs_root"]

_TASK = re.compile(r"^[ \t]*[-*+][ \t]+\[( |x|X)\][ \t]*(.*)$")


def runs_root(project: Path, env: Mapping[str, str]) -> Path:
    """Where the project's run folders are (``[paths] log_dir``, default ``.fresher/runs``)."""
    try:
        log_dir = load_config(project, env=env).config.paths.log_dir
    except ConfigError:
        log_dir = ".fresher/runs"
    root = Path(log_dir)
    return root if root.is_absolute() else project / root


def load_run(run_dir: Path) -> dict[str, Any]:
    """``run.json`` of one run folder, as a dict."""
    path = run_dir / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{run_dir}: no run.json (not a run folder)") from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable run record: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a run record")
    if data.get("finished_at") is None:
        # A run whose folder became read-only says how it ended beside the folder.
        data.update(read_finish_marker(run_dir) or {})
    return data


def list_runs(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every readable run under ``root``, newest first.

    By start time, then by when ``run.json`` was last written: run ids have whole seconds, and
    one project runs one loop at a time, so the later record is the later run.
    """
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        path = entry / "run.json"
        try:
            found.append(
                (str(load_run(entry).get("started_at", "")), path.stat().st_mtime_ns, entry)
            )
        except (ConfigError, OSError):
            continue
    found.sort(reverse=True)
    return [(entry, load_run(entry)) for _, _, entry in found]


def find_run(project: Path, run: str | None, env: Mapping[str, str]) -> Path:
    """A run folder from an id, a path, or (``None``) the newest run of the project."""
    if run is not None:
        as_path = Path(run)
        if (as_path / "run.json").is_file():
            return as_path
        candidate = runs_root(project, env) / run
        if (candidate / "run.json").is_file():
            return candidate
        raise ConfigError(f"no run {run!r} in {runs_root(project, env)}")
    runs = list_runs(runs_root(project, env))
    if not runs:
        raise ConfigError(f"no runs in {runs_root(project, env)}: start one with forgeflare loop")
    return runs[0][0]


def _git(project: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=project, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _heads(run: Mapping[str, Any]) -> tuple[str | None, str | None]:
    start = run.get("head_at_start")
    end = run.get("head_at_end")
    rows = [r for r in run.get("iterations") or [] if isinstance(r, Mapping)]
    if not start:
        start = next((r.get("head_before") for r in rows if r.get("head_before")), None)
    if not end:
        end = next((r.get("head_after") for r in reversed(rows) if r.get("head_after")), None)
    return (start if isinstance(start, str) else None, end if isinstance(end, str) else None)


def _commits(project: Path, run: Mapping[str, Any]) -> list[Commit]:
    start, end = _heads(run)
    if start:
        spec = [f"{start}..{end or 'HEAD'}"]
    else:
        since, until = run.get("started_at"), run.get("finished_at")
        if not isinstance(since, str):
            return []
        spec = [f"--since={since}"] + ([f"--until={until}"] if isinstance(until, str) else [])
    out = _git(project, "log", "--reverse", "--shortstat", "--format=%x00%H%x09%s", *spec)
    if out is None:
        return []
    commits = []
    for chunk in out.split("\0")[1:]:
        head, _, rest = chunk.partition("\n")
        sha, _, subject = head.partition("\t")
        commits.append(Commit(sha=sha, subject=subject, stat=" ".join(rest.split())))
    return commits


def _tasks(text: str) -> list[tuple[bool, str]]:
    out = []
    for line in text.splitlines():
        m = _TASK.match(line)
        if m:
            out.append((m.group(1) != " ", m.group(2).strip()))
    return out


def _plan(project: Path, run: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    plan_rel = str(run.get("plan_file") or "IMPLEMENTATION_PLAN.md")
    try:
        now = _tasks((project / plan_rel).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return [], []
    start, _ = _heads(run)
    open_before: set[str] | None = None
    if start:
        before = _git(project, "show", f"{start}:{plan_rel}")
        if before is not None:
            open_before = {t for is_done, t in _tasks(before) if not is_done}
    # Without the run's starting commit, every checked task is shown (it cannot be attributed).
    done = [t for is_done, t in now if is_done and (open_before is None or t in open_before)]
    return done, [t for is_done, t in now if not is_done]


def collect_digest(project: Path, run_dir: Path) -> Digest:
    """The digest of one run folder, with git's commits and the plan's tasks."""
    run = load_run(run_dir)
    done, still_open = _plan(project, run)
    return build_digest(run, commits=_commits(project, run), tasks_done=done, tasks_open=still_open)
