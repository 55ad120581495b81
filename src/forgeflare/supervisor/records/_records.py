"""Run records: ``.fresher/runs/<run-id>/`` with run.json, events.jsonl and iteration logs.

:class:`RunRecord` is the one model of ``run.json``: the loop writes it, and every reader
(``runs``, ``report``, ``watch``, the fleet, the demo, ``--resume``) reads it through
:func:`read_run` (or :func:`list_runs`, :func:`newest_run`), which upgrades a record written by
0.2 (no ``schema_version``) on the way in and turns a damaged file into one :class:`RecordError`
line naming the file and what is wrong; the other runs stay readable.

``run.json`` is rewritten atomically after every iteration and hook, so a supervisor killed
with ``kill -9`` leaves a readable record; ``finished_at`` stays ``null`` and ``--resume``
picks that run up. ``events.jsonl`` gets one JSON object per line, one per lifecycle hook run
and one per iteration (plus ``run_started``, ``run_resumed`` and ``run_finished``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from forgeflare._clock import parse_time, utc_timestamp
from forgeflare._errors import ForgeflareError
from forgeflare.disk import (
    RECORD_LIMIT,
    DamagedFileError,
    append_line,
    atomic_write_text,
    json_objects,
    overwrite_in_place,
    read_json,
    read_limited,
)
from forgeflare.supervisor.backends._report import IterationReport, Tokens

__all__ = [
    "RUN_MARKER",
    "SCHEMA_VERSION",
    "CheckpointRecord",
    "ClaimRecord",
    "HookRecord",
    "InProgress",
    "IterationRecord",
    "ProgressRecord",
    "QuestionAnswer",
    "RecordError",
    "ReviewRecord",
    "RunListing",
    "RunRecord",
    "RunSettings",
    "RunStore",
    "Totals",
    "WaitRecord",
    "find_resumable",
    "finish_marker",
    "list_runs",
    "new_run_id",
    "newest_run",
    "orphan_group",
    "read_finish_marker",
    "read_run",
    "upgrade_row",
]


RUN_MARKER = "FRESHER_RUN_ID"
"""The environment variable every process of a run carries (its value is the run id)."""


class RecordError(ForgeflareError):
    """A run record cannot be written or read (e.g. ``--resume`` with no unfinished run)."""


def new_run_id() -> str:
    """A run id that sorts by start time: ``20260213-193000-1a2b``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


_WAIT_DECISIONS = frozenset({"limit_wait", "outage"})

SCHEMA_VERSION = 1
"""The version of ``run.json`` this code writes; a record without one was written by 0.2."""

_SECONDS = Field(default=0.0, ge=0.0, le=1e9)
"""A duration in a record: a damaged file's ``1e308`` is refused when read, not at render time."""
_COUNT = Field(default=0, ge=0, le=10**15)
_FINITE = ConfigDict(defer_build=True, extra="ignore", allow_inf_nan=False)


def _sane_time(value: str | None) -> str | None:
    """A time in a record must lie where a reader can add a duration to it."""
    when = parse_time(value)
    if when is not None and not 1970 <= when.year <= 9000:
        raise ValueError(f"a time out of range: {value}")
    return value


Time = Annotated[str, AfterValidator(_sane_time)]
"""An ISO UTC time (what is not one is kept as text and shown as unknown)."""


class HookRecord(BaseModel):
    """One lifecycle hook run."""

    model_config = _FINITE

    name: str
    status: str
    exit_code: int | None = None
    duration: float = _SECONDS
    iteration: int = _COUNT


class ClaimRecord(BaseModel):
    """A completion claim of an iteration and its fate (refused: the row stays ``ok``)."""

    model_config = _FINITE

    by: str
    """``tag`` (the final message), ``plan`` (no open box) or ``signal`` (a hook's)."""
    accepted: bool
    rejected_by: str | None = None
    """``gate`` or ``reviewer`` when refused; ``delivery`` when the work was not in git (the
    loop then finishes ``undelivered``)."""
    why: str = ""


class CheckpointRecord(BaseModel):
    """What the loop did with the work the agent left uncommitted after an iteration.

    Exactly one of ``sha`` (the checkpoint commit), ``skipped`` (why no commit was tried:
    nothing to commit, not a git repository, a merge in progress, a held lock …) or ``failed``
    (``git commit`` was tried and failed: its first line) is set.
    """

    model_config = _FINITE

    sha: str | None = None
    skipped: str | None = None
    failed: str | None = None
    left_out: list[str] = Field(default_factory=list)
    """Changed paths the checkpoint did not add (secret-shaped, LFS, too big, over the cap)."""
    lock_removed: str | None = None
    """A stale git lock the loop removed first (its path in the repository)."""

    @property
    def delivered(self) -> bool:
        """Nothing the loop tried to commit failed (a commit was made or none was needed)."""
        return self.failed is None


class ReviewRecord(BaseModel):
    """The reviewer's verdict on a claim (``[finish] reviewer``), or why it gave none."""

    model_config = _FINITE

    model: str
    complete: bool | None = None
    """``None``: the reviewer failed (``error`` says how); the claim waits."""
    reasons: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    error: str | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    file: str | None = None
    """The request and answer, saved in the run folder."""


class ProgressRecord(BaseModel):
    """The progress measures of an iteration (``[limits] stall_after``)."""

    model_config = _FINITE

    made: bool
    why: str = ""
    gate_exit: int | None = None
    gate_signature: str | None = None
    """The gate's failure signature (empty: it passed; ``None``: no gate ran)."""
    no_progress: int = _COUNT
    """Iterations in a row without progress, this one included."""


class WaitRecord(BaseModel):
    """A usage-window or outage wait of the run."""

    model_config = _FINITE

    kind: str = "wait"
    """``limit_wait`` (a usage window), ``outage``, ``answer_wait`` or ``paused``."""
    started_at: Time | None = None
    duration: float = _SECONDS
    until: str | None = None
    """When the wait was to end (ISO UTC), if known."""


def _old_outcome(row: dict[str, Any], reason: object) -> str:
    """The outcome of a row written before rows had one (exit code and final reason)."""
    if row.get("timed_out") is True:
        return "timed_out"
    if reason == "api_error":
        return "api_error"
    code = row.get("exit_code")
    return "ok" if code == 0 or (code is None and reason is not None) else "agent_error"


def upgrade_row(row: object) -> object:
    """A row written by 0.2 in today's shape (anything else is returned as it is).

    0.2 kept the agent's reason twice (``final_reason`` beside ``stop_reason``); older rows had
    one token count (read as output tokens) and no ``outcome``.
    """
    if not isinstance(row, dict):
        return row
    row = dict(row)
    reason = row.pop("final_reason", None)
    if row.get("stop_reason") is None and isinstance(reason, str):
        row["stop_reason"] = reason
    tokens = row.get("tokens")
    if tokens is None:
        row.pop("tokens", None)
    elif isinstance(tokens, int) and not isinstance(tokens, bool):
        row["tokens"] = {"output": tokens}
    if "outcome" not in row:
        row["outcome"] = _old_outcome(row, reason)
    return row


class IterationRecord(IterationReport):
    """One iteration: its report (the backend's :class:`IterationReport`) and the loop's facts.

    A row of ``run.json["iterations"]`` is the report's fields, flat, plus what the loop
    observed; build it with :meth:`from_report`.
    """

    model_config = _FINITE

    number: int = Field(ge=0, le=10**9)
    started_at: Time = ""
    backend: str | None = Field(
        None, description="The backend that ran this iteration (``None`` in rows written by 0.2)."
    )
    profile: str = Field(
        "", description="The ``[agent.profiles]`` profile it ran with (empty: none)."
    )
    duration: float = _SECONDS
    skipped: bool = False
    exit_code: int | None = Field(
        None,
        description="The agent's exit status in shell convention (124 timeout, 128+N signal N).",
    )
    timed_out: bool = False
    observations: list[dict[str, Any]] = Field(default_factory=list)
    transient: bool | None = None  # type: ignore[assignment]  # null unless api_error
    head_before: str | None = None
    head_after: str | None = None
    log: str | None = None
    commits: int = _COUNT
    changed: bool | None = None
    plan_unchecked: int | None = None
    next_iteration_hook: HookRecord | None = None
    decision: str = "continue"
    claim: ClaimRecord | None = None
    review: ReviewRecord | None = None
    progress: ProgressRecord | None = None
    checkpoint: CheckpointRecord | None = Field(
        None,
        description="The loop's checkpoint after this iteration (``None``: rows before 0.4, or a "
        "skip).",
    )
    dirty: list[str] = Field(
        default_factory=list,
        description="Paths left uncommitted after the checkpoint (the clean check's pathspec).",
    )
    hint: str | None = Field(
        None,
        description="The user's hint (``forgeflare hint``) this iteration's prompt started with.",
    )

    @classmethod
    def from_report(cls, report: IterationReport, **facts: Any) -> IterationRecord:
        """The row of an iteration whose agent gave ``report``; ``facts`` are the loop's."""
        row = dict(report)
        if row["cost_usd"] is not None and not math.isfinite(row["cost_usd"]):
            row["cost_usd"] = None  # a record holds no inf or nan: its readers refuse them
        row["transient"] = report.transient if report.outcome == "api_error" else None
        return cls.model_validate({**row, **facts})


class Totals(BaseModel):
    """Sums over the run."""

    model_config = _FINITE

    iterations: int = _COUNT
    """Iterations that count toward ``max_iterations``: the agent ran (not skipped), and it was
    not a usage-window or outage wait."""
    commits: int = _COUNT
    tokens: int = _COUNT
    """All tokens: input + output + cache reads + cache writes (:attr:`Tokens.total`)."""
    tokens_by_kind: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    """Known cost so far (iterations whose cost is unknown add nothing: see cost_unknown)."""
    cost_unknown: int = 0
    """Iterations with tokens but no known price."""
    waited_seconds: float = _SECONDS
    """Time spent waiting for usage windows and outages."""
    active_seconds: float = _SECONDS
    """Wall-clock time the supervisor ran this loop (across resumes)."""

    def add_spend(self, tokens: Tokens, cost_usd: float | None) -> None:
        """Add one agent run's tokens and cost; tokens without a known price count as unknown."""
        self.tokens += tokens.total
        self.tokens_by_kind = self.tokens_by_kind + tokens
        if cost_usd is not None:
            self.cost_usd = round((self.cost_usd or 0.0) + cost_usd, 6)
        elif tokens.total:
            self.cost_unknown += 1


class InProgress(BaseModel):
    """The iteration running now (so that a resumed supervisor can clean up after it)."""

    model_config = _FINITE

    number: int = Field(ge=0, le=10**9)
    agent_pid: int | None = None
    started_at: Time = ""


class QuestionAnswer(BaseModel):
    """A question the agent parked the loop on, and the answer it got."""

    model_config = ConfigDict(defer_build=True)

    question: str
    answer: str
    iteration: int = _COUNT
    """The iteration that asked."""
    answered_at: Time | None = None


class RunSettings(BaseModel):
    """Every setting the run started with, so that ``--resume`` goes on with the same ones."""

    model_config = ConfigDict(defer_build=True)

    config: dict[str, Any] = Field(default_factory=dict)
    """The whole effective loop config (flags, variables and config.toml merged), as JSON."""
    task: str | None = None
    pass_env: list[str] = Field(default_factory=list)
    raw: bool = False
    trust_project: bool = False
    project_command: bool = True
    """The agent command came from config.toml (so trust covers it), not a flag."""


class RunRecord(BaseModel):
    """``run.json``: the one model its writer and every reader share."""

    model_config = _FINITE

    schema_version: int = SCHEMA_VERSION
    run_id: str
    mode: str
    project_dir: str
    started_at: Time
    max_iterations: int = _COUNT
    finished_at: Time | None = None
    finish_type: str | None = None
    exit_code: int | None = None
    resumes: int = _COUNT
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
    max_runtime: float = Field(default=0.0, ge=0.0)
    max_cost: float = Field(default=0.0, ge=0.0)
    waits: list[WaitRecord] = Field(default_factory=list)
    """Usage-window and outage waits."""
    head_at_start: str | None = None
    dirty_at_start: list[str] = Field(default_factory=list)
    """Paths already changed when the loop started: reported, never committed by the loop."""
    plan_file: str | None = None
    plan_unchecked_at_start: int | None = None
    supervisor_pid: int | None = None
    supervisor_started: float | None = None
    """The supervisor's process start time: a resume refuses a run whose supervisor lives."""
    question: str | None = None
    """The open question the agent parked the loop on (``blocked``); cleared once answered."""
    answers: list[QuestionAnswer] = Field(default_factory=list)
    """Questions answered during the run (``forgeflare answer``), oldest first."""
    settings: RunSettings | None = None
    """What the run started with (``None`` in records older than 0.3)."""
    _counted: tuple[int, int] = PrivateAttr(default=(0, 0))
    _damaged: list[str] = PrivateAttr(default_factory=list)

    @property
    def damaged_rows(self) -> list[str]:
        """Iteration rows left out when the record was read, one line each (:func:`read_run`)."""
        return self._damaged

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A record written by 0.2 (no ``schema_version``): its rows in today's shape."""
        if isinstance(data, dict) and "schema_version" not in data:
            rows = data.get("iterations")
            if isinstance(rows, list):
                data = {**data, "iterations": [upgrade_row(row) for row in rows]}
        return data

    @model_validator(mode="after")
    def _sum_rows(self) -> RunRecord:
        """A record without totals (the oldest ones) gets them from its rows."""
        if "totals" not in self.model_fields_set and self.iterations:
            rows, current, self.iterations = self.iterations, self.current, []
            for row in rows:
                self.add_iteration(row, counted=row.decision not in _WAIT_DECISIONS)
            self.current = current
        return self

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
        totals.add_spend(it.tokens, it.cost_usd)
        if it.review is not None:  # the reviewer's spend is the run's spend
            totals.add_spend(it.review.tokens, it.review.cost_usd)


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
                # The folder is read-only (or full): the whole record goes beside it (the
                # marker's keys included), so the run is not taken for a running or resumable
                # one later and the iterations its folder missed (their commits) are kept.
                with contextlib.suppress(OSError):
                    atomic_write_text(finish_marker(self.dir), text)
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
            return json_objects(read_limited(self.dir / "events.jsonl", limit=RECORD_LIMIT))
        except OSError:
            return []

    def load(self) -> RunRecord:
        """Read run.json (see :func:`read_run`)."""
        return read_run(self.run_json)


def _first_error(exc: ValidationError) -> str:
    """A validation error in one line: where the first mistake is, and what it is."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "not a run record"
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    msg = str(first["msg"]).splitlines()[0]
    return f"{where}: {msg}{more}" if where else f"{msg}{more}"


def read_run(path: Path) -> RunRecord:
    """``run.json`` at ``path``, upgraded to today's shape.

    Raises :class:`RecordError` with one line naming the file and what is wrong when it is
    missing, unreadable, not UTF-8, not JSON or not of a run record's shape.
    """
    try:
        text = read_limited(path, limit=RECORD_LIMIT).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"{path}: not a readable run record: not UTF-8 (byte {exc.start})"
        ) from exc
    except FileNotFoundError as exc:
        raise RecordError(f"{path}: no run.json (not a run folder)") from exc
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        record = RunRecord.model_validate_json(text)
    except ValidationError as exc:
        damaged = _without_damaged_rows(text, exc)
        if damaged is None:
            raise RecordError(f"{path}: not a readable run record: {_first_error(exc)}") from exc
        record = damaged
    # A run whose folder became read-only says how it ended beside the folder: the whole
    # record when it could be written there, else the finish fields alone.
    beside = _record_beside(path.parent) if record.finished_at is None else None
    if beside is not None and beside.run_id == record.run_id:
        return beside
    ended = read_finish_marker(path.parent) if record.finished_at is None else None
    if ended:
        damaged_rows = record.damaged_rows
        record = record.model_copy(update=ended)
        record._damaged = damaged_rows
    return record


def _without_damaged_rows(text: str, exc: ValidationError) -> RunRecord | None:
    """The record without the iteration rows ``exc`` found wrong, when only rows are wrong: one
    damaged row must not hide a whole night (the totals stay as the loop wrote them)."""
    errors = exc.errors(include_url=False, include_input=False)
    bad = {e["loc"][1] for e in errors if len(e["loc"]) > 2 and e["loc"][0] == "iterations"}
    if not bad or any(len(e["loc"]) < 3 or e["loc"][0] != "iterations" for e in errors):
        return None
    try:
        data = json.loads(text)
        rows = data["iterations"]
        kept = [row for i, row in enumerate(rows) if i not in bad]
        record = RunRecord.model_validate({**data, "iterations": kept})
    except (ValueError, TypeError, KeyError, ValidationError):
        return None
    for i in sorted(bad, key=str):
        first = next(e for e in errors if e["loc"][1] == i)
        where = ".".join(str(part) for part in first["loc"])
        record._damaged.append(f"{where}: {str(first['msg']).splitlines()[0]} (row left out)")
    return record


@dataclass
class RunListing:
    """The runs under one folder, newest first, and the folders that could not be read."""

    runs: list[tuple[Path, RunRecord]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """One line per damaged record: the file and what is wrong with it."""
    damaged: list[str] = field(default_factory=list)
    """One line per iteration row left out of a run that is listed: the file, the row, why."""


def list_runs(root: Path) -> RunListing:
    """Every run under ``root``, newest first.

    By start time, then by when ``run.json`` was last written: run ids have whole seconds, and
    one project runs one loop at a time, so the later record is the later run. A folder without
    ``run.json`` is not a run; one whose record is damaged is named in ``skipped``.
    """
    listing = RunListing()
    try:
        entries = sorted(root.iterdir()) if root.is_dir() else []
    except OSError as exc:
        listing.skipped.append(f"{root}: cannot list: {exc.strerror or exc}")
        return listing
    found: list[tuple[str, int, Path, RunRecord]] = []
    for entry in entries:
        path = entry / "run.json"
        try:
            if not path.is_file():
                continue
            record = read_run(path)
            found.append((record.started_at, path.stat().st_mtime_ns, entry, record))
            listing.damaged += [f"{path}: {line}" for line in record.damaged_rows]
        except RecordError as exc:
            listing.skipped.append(str(exc))
        except OSError as exc:
            listing.skipped.append(f"{path}: cannot read: {exc.strerror or exc}")
    found.sort(key=lambda item: item[:3], reverse=True)
    listing.runs = [(entry, record) for _, _, entry, record in found]
    return listing


def newest_run(root: Path) -> tuple[Path, RunRecord] | None:
    """The newest readable run under ``root`` (its folder and record), if any."""
    runs = list_runs(root).runs
    return runs[0] if runs else None


_MARKER_KEYS = {"finish_type": str, "finished_at": str, "exit_code": int, "finish_reason": str}


def finish_marker(run_dir: Path) -> Path:
    """Where a run whose folder could not be written says how it ended: beside the folder."""
    return run_dir.with_name(run_dir.name + ".finished.json")


def _record_beside(run_dir: Path) -> RunRecord | None:
    """The whole record written beside a read-only run folder, when there is a finished one."""
    try:
        text = read_limited(finish_marker(run_dir), limit=RECORD_LIMIT).decode("utf-8")
        record = RunRecord.model_validate_json(text)
    except (OSError, UnicodeDecodeError, ValidationError):
        return None
    return record if record.finished_at is not None else None


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
    """The newest run under ``log_root`` that has no ``finished_at`` or finished ``blocked``.

    ``None`` when there is none; a :class:`RecordError` naming the damaged record when there is
    none readable but a damaged one (it may be the run a ``--resume`` was meant for).
    """
    listing = list_runs(log_root)
    for entry, record in listing.runs:
        if record.finished_at is None or record.finish_type == "blocked":
            return RunStore(entry)
    if listing.skipped:
        raise RecordError(
            f"--resume: no readable unfinished run in {log_root}; skipped {listing.skipped[0]}"
        )
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
