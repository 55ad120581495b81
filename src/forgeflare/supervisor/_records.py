"""Run records: ``.fresher/runs/<run-id>/`` with run.json, events.jsonl and iteration logs.

``run.json`` is rewritten atomically after every iteration and hook, so a supervisor killed
with ``kill -9`` leaves a readable record; ``finished_at`` stays ``null`` and ``--resume``
picks that run up. ``events.jsonl`` gets one JSON object per line, one per lifecycle hook run
and one per iteration (plus ``run_started``, ``run_resumed`` and ``run_finished``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from forgeflare._clock import utc_timestamp
from forgeflare._damaged import DamagedFileError, read_json
from forgeflare._errors import ForgeflareError
from forgeflare._fsutil import append_line, atomic_write_text, overwrite_in_place
from forgeflare._jsonl import json_objects
from forgeflare.supervisor.backends._report import IterationReport

__all__ = [
    "RUN_MARKER",
    "HookRecord",
    "InProgress",
    "IterationRecord",
    "RecordError",
    "RunRecord",
    "RunSettings",
    "RunStore",
    "Totals",
    "find_resumable",
    "finish_marker",
    "new_run_id",
    "orphan_group",
    "read_finish_marker",
]


RUN_MARKER = "FRESHER_RUN_ID"
"""The environment variable every process of a run carries (its value is the run id)."""


class RecordError(ForgeflareError):
    """A run record cannot be written or read (e.g. ``--resume`` with no unfinished run)."""


def new_run_id() -> str:
    """A run id that sorts by start time: ``20260213-193000-1a2b``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


_WAIT_DECISIONS = frozenset({"limit_wait", "outage"})


class HookRecord(BaseModel):
    """One lifecycle hook run."""

    name: str
    status: str
    exit_code: int | None = None
    duration: float = 0.0
    iteration: int = 0


class IterationRecord(IterationReport):
    """One iteration: its report (the backend's :class:`IterationReport`) and the loop's facts.

    A row of ``run.json["iterations"]`` is the report's fields, flat, plus what the loop
    observed; build it with :meth:`from_report`.
    """

    number: int
    started_at: str
    duration: float = 0.0
    skipped: bool = False
    exit_code: int | None = None
    """The agent's exit status in shell convention (124 timeout, 128+N signal N)."""
    timed_out: bool = False
    final_reason: str | None = None
    observations: list[dict[str, Any]] = Field(default_factory=list)
    transient: bool | None = None  # type: ignore[assignment]  # null unless api_error
    head_before: str | None = None
    head_after: str | None = None
    log: str | None = None
    commits: int = 0
    changed: bool | None = None
    plan_unchecked: int | None = None
    next_iteration_hook: HookRecord | None = None
    decision: str = "continue"

    @classmethod
    def from_report(cls, report: IterationReport, **facts: Any) -> IterationRecord:
        """The row of an iteration whose agent gave ``report``; ``facts`` are the loop's."""
        row = dict(report)
        row["transient"] = report.transient if report.outcome == "api_error" else None
        return cls.model_validate({**row, **facts})


class Totals(BaseModel):
    """Sums over the run."""

    iterations: int = 0
    """Iterations in which the agent ran (skipped ones are not counted)."""
    commits: int = 0
    tokens: int = 0
    tokens_by_kind: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    """Known cost so far (iterations whose cost is unknown add nothing: see cost_unknown)."""
    cost_unknown: int = 0
    """Iterations with tokens but no known price."""
    waited_seconds: float = 0.0
    """Time spent waiting for usage windows and outages."""
    active_seconds: float = 0.0
    """Wall-clock time the supervisor ran this loop (across resumes)."""


class InProgress(BaseModel):
    """The iteration running now (so that a resumed supervisor can clean up after it)."""

    number: int
    agent_pid: int | None = None
    started_at: str = ""


class RunSettings(BaseModel):
    """Every setting the run started with, so that ``--resume`` goes on with the same ones."""

    config: dict[str, Any] = Field(default_factory=dict)
    """The whole effective loop config (flags, variables and config.toml merged), as JSON."""
    task: str | None = None
    pass_env: list[str] = Field(default_factory=list)
    raw: bool = False
    trust_project: bool = False
    project_command: bool = True
    """The agent command came from config.toml (so trust covers it), not a flag."""


class RunRecord(BaseModel):
    """``run.json``."""

    run_id: str
    mode: str
    project_dir: str
    started_at: str
    max_iterations: int = 0
    finished_at: str | None = None
    finish_type: str | None = None
    exit_code: int | None = None
    resumes: int = 0
    iterations: list[IterationRecord] = Field(default_factory=list)
    hooks: list[HookRecord] = Field(default_factory=list)
    """started and finished hook runs (next_iteration runs are in their iteration)."""
    totals: Totals = Field(default_factory=Totals)
    current: InProgress | None = None
    streaks: dict[str, int] = Field(default_factory=dict)
    """The finish decision's streaks (errors, blocked, skips), so that a resume keeps them."""
    finish_reason: str | None = None
    """Why the run ended, in words."""
    backend: str = "forgeflare"
    max_runtime: float = 0.0
    max_cost: float = 0.0
    waits: list[dict[str, Any]] = Field(default_factory=list)
    """Usage-window and outage waits: kind, started_at, duration, until."""
    head_at_start: str | None = None
    plan_file: str | None = None
    plan_unchecked_at_start: int | None = None
    supervisor_pid: int | None = None
    supervisor_started: float | None = None
    """The supervisor's process start time: a resume refuses a run whose supervisor lives."""
    settings: RunSettings | None = None
    """What the run started with (``None`` in records older than 0.3)."""
    _counted: tuple[int, int] = PrivateAttr(default=(0, 0))

    @property
    def iterations_done(self) -> int:
        """The number of the last finished iteration, skipped or not."""
        return self.iterations[-1].number if self.iterations else 0

    @property
    def counted_iterations(self) -> int:
        """Rows that count toward ``max_iterations`` (not usage-window or outage waits)."""
        # Counted once per row (rows are only appended): the check runs every iteration.
        seen, count = self._counted
        rows = self.iterations
        if seen > len(rows):
            seen = count = 0
        count += sum(1 for it in rows[seen:] if it.decision not in _WAIT_DECISIONS)
        self._counted = (len(rows), count)
        return count

    def add_iteration(self, it: IterationRecord, *, counted: bool) -> None:
        """Append a finished iteration's row and add it to the totals."""
        self.iterations.append(it)
        self.current = None
        totals = self.totals
        if counted and not it.skipped:
            totals.iterations += 1
        totals.commits += it.commits
        totals.tokens += it.tokens.total
        for kind, n in it.tokens.model_dump().items():
            totals.tokens_by_kind[kind] = totals.tokens_by_kind.get(kind, 0) + n
        if it.cost_usd is not None:
            totals.cost_usd = round((totals.cost_usd or 0.0) + it.cost_usd, 6)
        elif it.tokens.total:
            totals.cost_unknown += 1


class RunStore:
    """The folder of one run."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir
        self._rows: list[IterationRecord] = []
        self._texts: list[str] = []
        """The JSON of each row in ``_rows``: a row does not change once added."""

    @property
    def run_json(self) -> Path:
        """Path of run.json."""
        return self.dir / "run.json"

    def iteration_log(self, number: int) -> Path:
        """Path of an iteration's log (agent stdout and stderr); never one that exists.

        A resumed run repeats the number of the iteration a crash cut short: its log is
        ``iteration-NNN.r1.log`` (``.r2`` …), so the killed iteration's log is kept.
        """
        path = self.dir / f"iteration-{number:03d}.log"
        retry = 0
        while path.exists():
            retry += 1
            path = self.dir / f"iteration-{number:03d}.r{retry}.log"
        return path

    def create(self) -> None:
        """Make the folder."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordError(f"{self.dir}: cannot create run folder: {exc.strerror}") from exc

    def save(self, record: RunRecord) -> None:
        """Replace run.json atomically (compact: its cost must not grow with the run).

        When that fails (a full disk, a read-only folder), the record is written over the old
        one in place if it fits in the file's blocks, so a finished run is not left resumable;
        ``RecordError`` is still raised, so the loop says what failed and finishes.
        """
        text = self._json(record)
        try:
            # fsync only the finished record: a killed process cannot tear a renamed file, and
            # a sync per iteration would be most of the supervisor's time on a slow disk.
            atomic_write_text(self.run_json, text, fsync=record.finished_at is not None)
        except OSError as exc:
            kept = overwrite_in_place(self.run_json, text.encode("utf-8"))
            if not kept and record.finished_at is not None:
                # The folder is read-only (or full): say how the run ended beside it, so it is
                # not taken for a running or resumable one later.
                with contextlib.suppress(OSError):
                    atomic_write_text(finish_marker(self.dir), _marker_json(record))
            raise RecordError(f"{self.run_json}: cannot write: {exc.strerror or exc}") from exc

    def _json(self, record: RunRecord) -> str:
        """``record`` as compact JSON, each iteration row serialised once for the whole run
        (a save at iteration 1,000 does not serialise the 999 rows before it again)."""
        rows, cache, texts = record.iterations, self._rows, self._texts
        fresh = len(cache) <= len(rows) and all(
            cache[i] is rows[i] for i in (0, len(cache) - 1) if cache
        )
        if not fresh:
            cache.clear()
            texts.clear()
        added = rows[len(cache) :]
        cache.extend(added)
        texts.extend(row.model_dump_json() for row in added)
        head = record.model_dump_json(exclude={"iterations"})
        return f'{head[:-1]},"iterations":[{",".join(texts)}]}}\n'

    def event(self, name: str, /, **fields: Any) -> None:
        """Append one line to events.jsonl."""
        line = json.dumps({"ts": utc_timestamp(), "event": name, **fields}, default=str)
        try:
            append_line(self.dir / "events.jsonl", line + "\n")
        except OSError as exc:
            raise RecordError(f"{self.dir / 'events.jsonl'}: cannot write: {exc.strerror}") from exc

    def events(self) -> list[dict[str, Any]]:
        """Every readable line of events.jsonl (a torn last line, or one a crash or a disk
        damaged into bytes that are not UTF-8, is skipped)."""
        try:
            return json_objects((self.dir / "events.jsonl").read_bytes())
        except OSError:
            return []

    def load(self) -> RunRecord:
        """Read run.json (with how the run ended from its finish marker, when it has one)."""
        try:
            record = RunRecord.model_validate_json(self.run_json.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError) as exc:
            raise RecordError(f"{self.run_json}: not a readable run record: {exc}") from exc
        ended = read_finish_marker(self.dir) if record.finished_at is None else None
        return record.model_copy(update=ended) if ended else record


_MARKER_KEYS = {"finish_type": str, "finished_at": str, "exit_code": int, "finish_reason": str}


def finish_marker(run_dir: Path) -> Path:
    """Where a run whose folder could not be written says how it ended: beside the folder."""
    return run_dir.with_name(run_dir.name + ".finished.json")


def _marker_json(record: RunRecord) -> str:
    return json.dumps({key: getattr(record, key) for key in _MARKER_KEYS}) + "\n"


def read_finish_marker(run_dir: Path) -> dict[str, Any] | None:
    """The finish fields from the run's finish marker (``None``: none, or damaged)."""
    try:
        data = read_json(finish_marker(run_dir))
    except DamagedFileError:
        return None
    if not isinstance(data, dict):
        return None
    fields = {k: v for k, v in data.items() if k in _MARKER_KEYS and isinstance(v, _MARKER_KEYS[k])}
    return fields if isinstance(fields.get("finished_at"), str) else None


def find_resumable(log_root: Path) -> RunStore | None:
    """The newest run under ``log_root`` that has no ``finished_at``."""
    if not log_root.is_dir():
        return None
    for entry in sorted(log_root.iterdir(), key=lambda p: p.name, reverse=True):
        store = RunStore(entry)
        if not store.run_json.is_file():
            continue
        try:
            record = store.load()
        except RecordError:
            continue
        if record.finished_at is None:
            return store
    return None


def orphan_group(record: RunRecord) -> int | None:
    """The process group of an agent a killed supervisor left running, if it is still ours.

    The group is only trusted when its leader still runs with this run's ``FRESHER_RUN_ID`` in
    its environment: a recycled pid must never be signalled.
    """
    if record.current is None or record.current.agent_pid is None:
        return None
    pid = record.current.agent_pid
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    marker = f"{RUN_MARKER}={record.run_id}".encode()
    if marker not in environ.split(b"\0"):
        return None
    try:
        return os.getpgid(pid)
    except OSError:
        return None
