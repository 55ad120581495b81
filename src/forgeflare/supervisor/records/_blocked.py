"""When nobody is there: a question parks the loop, an answer from another terminal resumes it.

An agent that needs a person ends its final message with ``<loop-done>BLOCKED</loop-done>`` and
its question on the next lines (or, with Claude Code, calls its question tool). The loop then
finishes ``blocked`` (exit 20) with the question in ``run.json`` (``question``), the summary and
the ``blocked`` notification, or with ``[limits] on_blocked = "wait:DURATION"`` first waits that
long for an answer. ``forgeflare answer`` writes ``answer.md`` into the run folder; ``forgeflare
loop --resume`` (or the waiting loop) takes it, and the next iteration's prompt starts with the
question and the answer.

What the setting means (``parse_on_blocked``, in the config module) and what the prompt says
(:func:`answer_preamble`) are pure; the rest reads and writes one small file.
"""

from __future__ import annotations

from pathlib import Path

from forgeflare._clock import utc_timestamp
from forgeflare._completion import answer_preamble
from forgeflare._errors import ConfigError
from forgeflare.disk import atomic_write_text, read_limited_text
from forgeflare.supervisor.records._records import QuestionAnswer, RunRecord, list_runs

__all__ = [
    "ANSWER_FILE",
    "answer_preamble",
    "read_answer",
    "take_answer",
    "waiting_run",
    "write_answer",
]

ANSWER_FILE = "answer.md"
"""The answer's file in the run folder."""


def read_answer(run_dir: Path) -> str | None:
    """The answer written for the run in ``run_dir``, or ``None`` (no file, or it is empty)."""
    try:
        text = read_limited_text(run_dir / ANSWER_FILE, errors="replace")
    except OSError:
        return None
    return text.strip() or None


def waiting_run(log_root: Path) -> tuple[Path, RunRecord] | None:
    """The newest run with an open question (finished ``blocked``, or waiting for an answer)."""
    for entry, record in list_runs(log_root).runs:
        if record.question is not None:
            return entry, record
    return None


def write_answer(log_root: Path, text: str) -> tuple[Path, RunRecord]:
    """Write ``text`` as the answer of the newest run with an open question.

    Raises ``ConfigError`` (one line) when the answer is empty or no run asked anything.
    """
    if not text.strip():
        raise ConfigError("answer: the answer is empty")
    found = waiting_run(log_root)
    if found is None:
        raise ConfigError(f"answer: no run in {log_root} has an open question")
    run_dir, record = found
    try:
        atomic_write_text(run_dir / ANSWER_FILE, text.strip() + "\n")
    except OSError as exc:
        raise ConfigError(f"answer: {run_dir / ANSWER_FILE}: cannot write: {exc.strerror}") from exc
    return run_dir, record


def take_answer(run_dir: Path, record: RunRecord) -> str | None:
    """Move an answer to the record's open question into the record; the prompt's preamble.

    The question is closed (``record.question`` cleared, the pair kept in ``record.answers``)
    and ``answer.md`` is renamed ``answer-NNN.md`` (NNN: the iteration that asked), so a later
    question never picks up an old answer. ``None`` when there is no question or no answer.
    """
    question = record.question
    answer = read_answer(run_dir)
    if question is None or answer is None:
        return None
    asked_in = record.iterations_done
    record.answers.append(
        QuestionAnswer(
            question=question, answer=answer, iteration=asked_in, answered_at=utc_timestamp()
        )
    )
    record.question = None
    try:
        (run_dir / ANSWER_FILE).replace(run_dir / f"answer-{asked_in:03d}.md")
    except OSError:
        (run_dir / ANSWER_FILE).unlink(missing_ok=True)
    return answer_preamble(question, answer)
