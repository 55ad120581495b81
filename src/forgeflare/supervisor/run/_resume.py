"""``forgeflare loop --resume``: pick up the run a killed supervisor left unfinished.

A supervisor killed with ``kill -9`` leaves ``run.json`` without ``finished_at`` and maybe an
agent (and its descendants) still running. Resuming finds the newest such run, refuses one whose
supervisor still lives (pid plus process start time, so a recycled pid is not mistaken for it),
ends what the dead run left running (every process carrying its ``FRESHER_RUN_ID`` marker, and
the agent's group when its leader still carries it), and records the iteration the crash cut
short as ``killed``, with the commits it made.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgeflare._clock import parse_time, utc_timestamp
from forgeflare._errors import ConfigError
from forgeflare.platform import end_marked_processes, end_pids, is_alive, kill_group
from forgeflare.supervisor.config._config import LoadedConfig, LoopConfig, format_duration
from forgeflare.supervisor.evidence._git import run_git
from forgeflare.supervisor.records._records import (
    RUN_MARKER,
    IterationRecord,
    RecordError,
    RunRecord,
    RunSettings,
    RunStore,
    find_resumable,
    orphan_group,
)

__all__ = ["Resumed", "kept_settings", "killed_iteration", "open_resumable"]


def _git(project: Path, *args: str) -> str:
    return run_git(project, *args).stdout.strip()


def killed_iteration(store: RunStore, record: RunRecord, project: Path) -> IterationRecord | None:
    """The iteration a crash cut short as a ``killed`` row, or ``None``.

    ``events.jsonl`` is the authority: its ``iteration_started`` line (with the starting HEAD)
    is written before the agent starts, while ``run.json`` gets ``current`` only once the agent
    runs, so a supervisor killed between the two still has its iteration, and its commits,
    recorded.
    """
    started = next(
        (e for e in reversed(store.events()) if e.get("event") == "iteration_started"), None
    )
    if started is not None and not (
        isinstance(started.get("number"), int) and started["number"] > record.iterations_done
    ):
        started = None
    current = record.current
    if started is not None:
        number: int = started["number"]
    elif current is not None:
        number = current.number
    else:
        return None
    head_before: str | None = started.get("head") if started else None
    log: str | None = started.get("log") if started else None
    when = current.started_at if current is not None and current.number == number else None
    commits = 0
    head_after: str | None = None
    if head_before:
        head_after = _git(project, "rev-parse", "--verify", "--quiet", "HEAD") or None
        if head_after and head_after != head_before:
            try:
                commits = int(_git(project, "rev-list", "--count", f"{head_before}..{head_after}"))
            except ValueError:
                commits = 1
    started_at = when or (started.get("ts") if started else None) or utc_timestamp()
    return IterationRecord(
        number=number,
        started_at=started_at,
        duration=_ran_for(started_at, [store.dir / log] if log else [], store.dir / "events.jsonl"),
        outcome="killed",
        detail="the supervisor was killed during this iteration",
        head_before=head_before,
        head_after=head_after,
        commits=commits,
        log=log,
    )


def _ran_for(started_at: str, logs: list[Path], events: Path) -> float:
    """How long a killed iteration ran: from its start to its last sign of life (the newest
    write to its log or to the run's events), never ``0.0`` for an iteration that ran."""
    start = parse_time(started_at)
    stamps = []
    for path in (*logs, events):
        with contextlib.suppress(OSError):
            stamps.append(path.stat().st_mtime)
    if start is None or not stamps:
        return 0.0
    return round(max(0.0, max(stamps) - start.timestamp()), 3)


@dataclass
class Resumed:
    """A run to go on with: its store and record, what was ended, the killed iteration."""

    store: RunStore
    record: RunRecord
    ended: int
    """Processes the dead supervisor left running that were ended."""
    killed: IterationRecord | None


def _escaped(store: RunStore) -> list[int]:
    """Live descendants the killed supervisor saw leave both its group and the run's marker
    (``escaped`` events); the same process, by its start time, never a reused pid."""
    pids = []
    for event in store.events():
        if event.get("event") != "escaped":
            continue
        pid, started = event.get("pid"), event.get("started")
        if isinstance(pid, int) and isinstance(started, float) and is_alive(pid, started):
            pids.append(pid)
    return pids


def open_resumable(log_root: Path, project: Path, *, grace: float) -> Resumed:
    """Open the newest unfinished run for ``--resume`` and clean up after its supervisor.

    Raises ``RecordError`` when there is none, ``ConfigError`` when its supervisor still runs.
    The killed iteration is returned, not recorded: ``record.current`` is cleared.
    """
    store = find_resumable(log_root)
    if store is None:
        raise RecordError(f"--resume: no unfinished run in {log_root}")
    record = store.load()
    if is_alive(record.supervisor_pid, record.supervisor_started):
        raise ConfigError(f"run {record.run_id} is still running, pid {record.supervisor_pid}")
    group = orphan_group(record)
    ended = end_marked_processes(RUN_MARKER, record.run_id, grace)
    ended += end_pids(_escaped(store), grace)
    if group is not None and kill_group(group, signal.SIGKILL):
        ended = ended or [group]
    killed = killed_iteration(store, record, project)
    record.current = None
    return Resumed(store=store, record=record, ended=len(ended), killed=killed)


def _setting(config: LoopConfig, dotted: str) -> Any:
    section, key = dotted.split(".", 1)
    return getattr(getattr(config, section), key)


def _shown(dotted: str, value: Any) -> str:
    if dotted in _DURATIONS:
        return str(format_duration(float(value)))
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)


_DURATIONS = frozenset({"limits.max_runtime", "limits.iteration_timeout"})


def kept_settings(
    stored: RunSettings,
    loaded: LoadedConfig,
    *,
    run_id: str,
    flags: Mapping[str, str],
    task: str | None,
    pass_env: Sequence[str],
) -> LoopConfig:
    """The config a resumed run goes on with: the one it started with.

    ``loaded`` is what the command line, variables and config.toml say now; a setting given
    on the command line (``flags`` maps its key to the flag's name) that differs from the
    stored one is a :class:`ConfigError` naming both, so a resume never changes a bound
    silently. Variables and config.toml edited since the start are not read: the run keeps
    what it started with.
    """
    config = LoopConfig.model_validate(stored.config)
    for dotted, source in loaded.sources.items():
        if source != "command line":
            continue
        now, then = _setting(loaded.config, dotted), _setting(config, dotted)
        if now != then:
            flag = flags.get(dotted, "--" + dotted.split(".", 1)[1].replace("_", "-"))
            raise ConfigError(
                f"{flag} {_shown(dotted, now)}: run {run_id} started with "
                f"{_shown(dotted, then)}; a resumed run keeps its settings "
                "(leave the flag out, or start a new run)"
            )
    if task is not None and task != stored.task:
        started = "no task" if stored.task is None else "another task"
        raise ConfigError(
            f"--task: run {run_id} started with {started}; a resumed run keeps its settings "
            "(leave the flag out, or start a new run)"
        )
    extra = [name for name in pass_env if name not in stored.pass_env]
    if extra:
        raise ConfigError(
            f"--pass-env {extra[0]}: run {run_id} started without it; a resumed run keeps its "
            "settings (leave the flag out, or start a new run)"
        )
    return config
