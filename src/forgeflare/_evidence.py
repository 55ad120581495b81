"""Completion you can trust: what a claim is, what refuses it, and whether a loop is moving.

Neutral ground, like ``_completion``: the loop supervisor and the stop-hook both use it.

Pure: the loop runs the gate and the reviewer and reads the plan; these functions turn what it
found into a claim's fate, the words the next prompt starts with, and the progress measure
``[limits] stall_after`` counts.

Progress (DESIGN, "Settled for wave 3"): a plan box checked, or a gate failure signature that
changed (fewer or other failures); only where a loop has neither gate nor plan, a commit whose
tree the loop has not seen before (so that a change the next iteration undoes is no progress).
With a gate, commits that leave its failures as they were are not progress.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ClaimBy",
    "GateRun",
    "Measures",
    "Progress",
    "claim_by",
    "failure_signature",
    "gate_tail",
    "judge_progress",
    "rejection_text",
    "stall_streak",
    "stall_warning",
]

ClaimBy = Literal["tag", "plan", "signal"]

TAIL_LINES = 30
"""Lines of the gate's output the next prompt shows."""
TAIL_CHARS = 4000
"""At most this much of that tail (a line of megabytes must not fill the prompt)."""


def claim_by(*, signal_complete: bool, stop_reason: str | None, plan_done: bool) -> ClaimBy | None:
    """What claims completion in an iteration, if anything: the tag in the final message, a
    hook's convergence signal, or a plan with no open box (in this order)."""
    if signal_complete:
        return "tag"
    if stop_reason == "convergence_signal":
        return "signal"
    if plan_done:
        return "plan"
    return None


@dataclass(frozen=True, slots=True)
class GateRun:
    """One run of ``[limits] gate``: its command, exit code (``None``: it could not run) and
    output."""

    command: str
    exit_code: int | None
    output: str

    @property
    def passed(self) -> bool:
        """The gate passed (exit 0)."""
        return self.exit_code == 0

    @property
    def signature(self) -> str:
        """What failed, normalised (empty when it passed)."""
        return "" if self.passed else failure_signature(self.output, self.exit_code)


def gate_tail(output: str, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` non-blank lines of the gate's output (at most ``TAIL_CHARS``)."""
    kept = [line.rstrip() for line in output.splitlines() if line.strip()][-lines:]
    text = "\n".join(kept)
    return text[-TAIL_CHARS:]


_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR)\s+(\S+)", re.MULTILINE)
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,40}\b")


def failure_signature(output: str, exit_code: int | None) -> str:
    """A gate failure, normalised so that two runs that fail the same way compare equal.

    Failing test names when the output lists them (pytest's ``FAILED a::b`` / ``ERROR a::b``),
    sorted; else the last five lines with numbers, addresses and hashes blanked (timings and
    pids differ from run to run, the failure does not).
    """
    tests = sorted(set(_FAILED_TEST.findall(output)))
    if tests:
        return "failing: " + ", ".join(tests)
    tail = [line.strip() for line in output.splitlines() if line.strip()][-5:]
    text = " | ".join(_NUMBERS.sub("N", _HEX.sub("H", line)) for line in tail)
    return f"exit {exit_code}: {text}" if text else f"exit {exit_code}"


def rejection_text(
    *,
    by: ClaimBy,
    rejected_by: Literal["gate", "reviewer"],
    gate: GateRun | None,
    reasons: tuple[str, ...] = (),
    missing: tuple[str, ...] = (),
) -> str:
    """What the next iteration's prompt starts with after a refused claim."""
    what = {"tag": "the completion tag", "plan": "a plan with no open task", "signal": "a signal"}
    lines = [f"# The last iteration claimed completion ({what[by]}), but it was refused", ""]
    if rejected_by == "gate" and gate is not None:
        code = "could not run" if gate.exit_code is None else f"exited {gate.exit_code}"
        lines += [
            f"The gate `{gate.command}` {code}. The end of its output:",
            "",
            "```",
            gate_tail(gate.output),
            "```",
        ]
    else:
        lines.append("An independent reviewer judged the work not complete.")
        lines += [f"- {r}" for r in reasons]
        if missing:
            lines += ["", "Missing:"] + [f"- {m}" for m in missing]
    lines += ["", "Fix this before claiming completion again.", "", "---", "", ""]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Measures:
    """What an iteration left behind, for the progress rule."""

    plan_unchecked: int | None = None
    """Open plan boxes after the iteration (``None``: no plan)."""
    gate: str | None = None
    """The gate's failure signature (empty: it passed; ``None``: no gate ran)."""
    commits: int = 0
    tree: str | None = None
    """The tree of the iteration's newest commit (``None``: unknown, counted as new)."""


@dataclass(frozen=True, slots=True)
class Progress:
    """Whether an iteration moved the loop, and why (in words the summary shows)."""

    made: bool
    why: str


def judge_progress(
    before: Measures, after: Measures, *, seen_trees: frozenset[str] = frozenset()
) -> Progress:
    """Did the iteration that turned ``before`` into ``after`` make progress (module docstring)?

    ``seen_trees`` are the trees of HEAD the run had before this iteration.
    """
    if (
        before.plan_unchecked is not None
        and after.plan_unchecked is not None
        and after.plan_unchecked < before.plan_unchecked
    ):
        return Progress(True, "a plan box checked")
    if after.gate is not None:
        if after.gate == "":
            return Progress(True, "the gate passes")
        if after.gate != before.gate:
            return Progress(True, "the gate's failures changed")
        return Progress(False, f"the same gate failures ({after.gate})")
    if after.plan_unchecked is not None:
        return Progress(False, f"no plan box checked ({after.plan_unchecked} open)")
    if after.commits and (after.tree is None or after.tree not in seen_trees):
        return Progress(True, "new commits")
    if after.commits:
        return Progress(False, "commits that undo earlier changes")
    return Progress(False, "no commits")


def stall_streak(streak: int, progress: Progress) -> int:
    """Iterations in a row without progress, after one more iteration."""
    return 0 if progress.made else streak + 1


def stall_warning(streak: int, stall_after: int, repeats: str) -> str | None:
    """The prompt's opening when the next iteration is the last before ``stalled``."""
    if stall_after <= 0 or streak != stall_after - 1 or streak == 0:
        return None
    return (
        f"# The loop is not moving\n\n{streak} iteration{'s' if streak != 1 else ''} in a row "
        f"made no progress: {repeats}. If this iteration makes none either, the loop stops "
        "(`stalled`). Change approach: find the cause rather than repeating the last attempt.\n"
        "\n---\n\n"
    )
