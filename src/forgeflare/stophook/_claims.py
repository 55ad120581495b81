"""What the stop-hook keeps of a refused completion claim, and the continuation it opens with.

Pure. The loop supervisor keeps the same facts in ``run.json`` (``claim``, ``review``,
``progress``); an in-session loop keeps them on its frame in the loop state, so that
``stop-hook status`` can show the last refused claim and the reviewer's verdicts:

* :class:`ClaimNote`: a refused claim (the loop's ``claim_rejected``): the iteration, who
  refused it (``gate`` or ``reviewer``), why, the gate's exit code and failure signature;
* :class:`ReviewNote`: the reviewer's verdict on it, with its tokens and cost (or why it gave
  none), and the file beside the state that holds its request and answer.

The texts are ``forgeflare._evidence``'s, the loop's own; a reviewer that failed refuses the
claim with one line saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the state file loads this module on every Stop: no dataclasses there
    from forgeflare._evidence import GateRun

__all__ = [
    "REVIEWS_RELPATH",
    "ClaimNote",
    "ReviewNote",
    "claim_from_json",
    "claim_to_json",
    "describe_claim",
    "gate_refused",
    "reviewer_refused",
]


REVIEWS_RELPATH = Path(".forgeflare") / "loop-reviews"
"""Where the reviewer's requests and answers are kept, beside the loop state."""


class ReviewNote(NamedTuple):
    """The reviewer's verdict on a claim, or why it gave none (``complete`` is ``None``)."""

    model: str
    complete: bool | None
    reasons: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    error: str = ""
    tokens: int = 0
    """Input + output + cache reads + cache writes (the one meaning of a total)."""
    cost_usd: float | None = None
    file: str = ""
    """The request and answer, in :data:`REVIEWS_RELPATH` beside the state."""


class ClaimNote(NamedTuple):
    """A completion claim the gate or the reviewer refused."""

    iteration: int
    rejected_by: str
    """``gate`` or ``reviewer``."""
    why: str
    gate_exit: int | None = None
    gate_signature: str = ""
    """What failed, normalised (empty: the gate passed or did not run)."""
    review: ReviewNote | None = None


def gate_refused(run: GateRun, iteration: int) -> tuple[str, str, ClaimNote]:
    """A red gate: the continuation's opening, the failure signature, the note."""
    from forgeflare._evidence import gate_tail, rejection_text

    code = "could not run" if run.exit_code is None else f"exit {run.exit_code}"
    last = gate_tail(run.output, 1)
    note = ClaimNote(
        iteration=iteration,
        rejected_by="gate",
        why=f"gate {code}" + (f": {last}" if last else ""),
        gate_exit=run.exit_code,
        gate_signature=run.signature,
    )
    return rejection_text(by="tag", rejected_by="gate", gate=run), run.signature, note


def reviewer_refused(
    review: ReviewNote, gate: GateRun | None, iteration: int
) -> tuple[str, ClaimNote] | None:
    """The reviewer's verdict on a claim the gate passed: ``None`` when it accepts it, else the
    continuation's opening and the note. A reviewer that gave no verdict refuses the claim
    with one line saying why (it never completes a loop)."""
    from forgeflare._evidence import rejection_text

    if review.complete is True:
        return None
    if review.complete is None:
        why = f"the reviewer gave no verdict: {review.error or 'no answer'}"
        text = (
            f"Your completion claim was not accepted: {why}. Check your work, then claim "
            "completion again.\n\n"
        )
    else:
        why = "; ".join(review.reasons) or "the reviewer judged it not complete"
        text = rejection_text(
            by="tag",
            rejected_by="reviewer",
            gate=gate,
            reasons=review.reasons,
            missing=review.missing,
        )
    note = ClaimNote(
        iteration=iteration,
        rejected_by="reviewer",
        why=why,
        gate_exit=None if gate is None else gate.exit_code,
        review=review,
    )
    return text, note


def describe_claim(note: ClaimNote) -> list[str]:
    """Lines for ``stop-hook status``: the refused claim, then the reviewer's verdict."""
    lines = [f"last refused claim: iteration {note.iteration}, by the {note.rejected_by}"]
    lines.append(f"  why: {note.why}")
    if note.gate_signature:
        lines.append(f"  gate failures: {note.gate_signature}")
    review = note.review
    if review is not None:
        verdict = {True: "complete", False: "not complete", None: "no verdict"}[review.complete]
        cost = "cost unknown" if review.cost_usd is None else f"${review.cost_usd:.4f}"
        lines.append(f"  reviewer {review.model}: {verdict} ({review.tokens} tokens, {cost})")
        lines += [f"    missing: {m}" for m in review.missing]
        if review.file:
            lines.append(f"    request and answer: {REVIEWS_RELPATH / review.file}")
    return lines


# --- the state file's shape -------------------------------------------------------------------


def claim_to_json(note: ClaimNote) -> dict[str, Any]:
    """The note as the state file keeps it (the loop's field names)."""
    doc: dict[str, Any] = {
        "by": "tag",
        "accepted": False,
        "rejected_by": note.rejected_by,
        "why": note.why,
        "iteration": note.iteration,
        "gate_exit": note.gate_exit,
        "gate_signature": note.gate_signature,
    }
    if note.review is not None:
        r = note.review
        doc["review"] = {
            "model": r.model,
            "complete": r.complete,
            "reasons": list(r.reasons),
            "missing": list(r.missing),
            "error": r.error or None,
            "tokens": r.tokens,
            "cost_usd": r.cost_usd,
            "file": r.file or None,
        }
    return doc


class _Bad(Exception):
    """A field of a kept claim is not of its shape (the message names it)."""


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{where} is not a list of strings")
    return tuple(value)


def _review_from_json(raw: object) -> ReviewNote:
    if not isinstance(raw, Mapping):
        raise _Bad("review is not an object")
    complete = raw.get("complete")
    tokens = raw.get("tokens", 0)
    cost = raw.get("cost_usd")
    if complete is not None and not isinstance(complete, bool):
        raise _Bad("review.complete is not true, false or null")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise _Bad("review.tokens is not a non-negative integer")
    if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
        raise _Bad("review.cost_usd is not a number")
    texts = {k: raw.get(k) or "" for k in ("model", "error", "file")}
    if not all(isinstance(v, str) for v in texts.values()):
        raise _Bad("review.model, error or file is not a string")
    return ReviewNote(
        model=str(texts["model"]),
        complete=complete,
        reasons=_strings(raw.get("reasons", []), "review.reasons"),
        missing=_strings(raw.get("missing", []), "review.missing"),
        error=str(texts["error"]),
        tokens=tokens,
        cost_usd=None if cost is None else float(cost),
        file=str(texts["file"]),
    )


def _claim(raw: object) -> ClaimNote:
    if not isinstance(raw, Mapping):
        raise _Bad("not an object")
    iteration, by, why = raw.get("iteration"), raw.get("rejected_by"), raw.get("why", "")
    if not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 0:
        raise _Bad("iteration is not a non-negative integer")
    if by not in ("gate", "reviewer"):
        raise _Bad(f"rejected_by {by!r} is not gate or reviewer")
    code, signature = raw.get("gate_exit"), raw.get("gate_signature") or ""
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        raise _Bad("gate_exit is not an integer or null")
    if not isinstance(why, str) or not isinstance(signature, str):
        raise _Bad("why or gate_signature is not a string")
    review = raw.get("review")
    return ClaimNote(
        iteration=iteration,
        rejected_by=str(by),
        why=why,
        gate_exit=code,
        gate_signature=signature,
        review=None if review is None else _review_from_json(review),
    )


def claim_from_json(raw: object) -> ClaimNote | str:
    """A note from the state file, or what is wrong with it (one phrase naming the field)."""
    try:
        return _claim(raw)
    except _Bad as exc:
        return str(exc)
