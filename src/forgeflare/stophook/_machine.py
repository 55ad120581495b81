"""The stop-hook state machine: a pure function from (stored state, last text, now) to a decision.

States (:class:`Phase`) and the spec's transition table::

    IDLE       -> ACTIVE      loop start (``push_frame``)         stack not empty
    ACTIVE     -> ACTIVE      iteration                           no completion signal: iter + 1
    ACTIVE     -> COMPLETING  completion                          signal of the top frame's mode
    ACTIVE     -> STUCK       max_iter                            iter >= max
    ACTIVE     -> STUCK       staleness                           updated_at older than 7200 s
    ACTIVE     -> ABORTED     corruption / abort event            invalid state, event ABORT
    COMPLETING -> IDLE        pop frame                           stack empty after the pop
    COMPLETING -> ACTIVE      pop frame                           an outer frame remains
    ACTIVE     -> BLOCKED     question                            BLOCKED tag, no completion
    BLOCKED    -> BLOCKED     any stop                            no answer yet (stop allowed)
    BLOCKED    -> ACTIVE      answered                            ``stop-hook answer`` was run

Only ACTIVE -> ACTIVE blocks the stop (the session continues), and COMPLETING -> ACTIVE: an
inner frame that completes hands the same session on to the outer frame, blocking with the
outer frame's continuation (a deliberate change from the spec's exit 0, which ended the
session with the outer loop unfinished), and BLOCKED -> ACTIVE, whose continuation starts
with the question and the answer. Everything else allows the stop. The hook exits 0 in both
cases.

A question parks the frame: it is kept with its ``question`` (not removed like a completed
one), every stop is allowed, and a parked or answered frame is never stale (it waits for a
person, maybe overnight). :func:`record_answer` stores the answer; the session's next stop
then resumes the same iteration (an answer is not a new iteration, so a question asked on the
last one can still be acted on).

Frames belong to a session: a frame records the ``session_id`` of the first Stop that reaches
it; a Stop of another session passes through (exit 0) and changes nothing. A Stop without a
session id (an older client, a test) is taken to be the frame's own session. A loop
that ends (stack empty, stuck, aborted) has its state removed: ``transition`` returns ``None``
as the new state. The checks run in this order: abort, staleness, a parked frame, signal,
question, max iterations, so a signal (or a question) given on the last allowed iteration still
completes (parks) its frame instead of ending the whole stack as stuck; a message with both a
completion tag and a question completes.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from forgeflare._completion import answer_preamble, find_question
from forgeflare.stophook._claims import ClaimNote
from forgeflare.stophook._continuation import BLOCK_MESSAGE, continuation
from forgeflare.stophook._rawstate import STALE_AFTER
from forgeflare.stophook._signals import Mode, find_signal

__all__ = [
    "ANSWER_HOW",
    "BLOCK_MESSAGE",
    "STALE_AFTER",
    "Corrupt",
    "Event",
    "Frame",
    "LoopRecord",
    "Phase",
    "Refusal",
    "StopDecision",
    "StoredState",
    "block_reason",
    "claimed",
    "push_frame",
    "record_answer",
    "transition",
]


class Phase(StrEnum):
    """The machine state one hook invocation reaches."""

    IDLE = "IDLE"
    ACTIVE = "ACTIVE"
    COMPLETING = "COMPLETING"
    STUCK = "STUCK"
    ABORTED = "ABORTED"
    BLOCKED = "BLOCKED"
    """The running frame waits for a person's answer to its question."""


class Event(StrEnum):
    """The ``event`` field of the stored state (the spec's ``loop:current`` messages)."""

    STATE = "STATE"
    DONE = "DONE"
    ABORT = "ABORT"


class Frame(NamedTuple):
    """One loop on the stack: its mode, the iteration it is in, its cap and its prompt.

    ``session_id`` is the Claude Code session the frame belongs to ("" until its first Stop).
    ``judged`` is the transcript message id judged at this frame's last Stop: a transcript
    that still ends there at the next Stop lags, and its old tag must not end a new turn.
    """

    mode: Mode
    iter: int
    max: int
    prompt: str = ""
    session_id: str = ""
    judged: str = ""
    gate: str = ""
    """A command a completion claim must pass (``stop-hook start --gate``); empty: none."""
    stall_after: int = 0
    """End the loop after this many refused claims in a row with the same gate failures."""
    failures: str = ""
    """The gate's failure signature at the last refused claim."""
    stalled: int = 0
    """Refused claims in a row that left the gate's failures as they were."""
    question: str = ""
    """The question the frame is parked on (``<loop-done>BLOCKED</loop-done>``); empty: none."""
    answer: str = ""
    """The answer to ``question`` (``stop-hook answer``), not yet given to the model."""
    reviewer: str = ""
    """A model that judges a claim the gate passed (``stop-hook start --reviewer``)."""
    base: str = ""
    """The commit the frame started at (the reviewer sees the diff since); empty: none."""
    claims: tuple[ClaimNote, ...] = ()
    """The claims the gate or the reviewer refused, oldest first."""

    @property
    def blocked(self) -> bool:
        """Parked on a question nobody answered yet."""
        return bool(self.question) and not self.answer


class Refusal(NamedTuple):
    """The gate or the reviewer refused the claim in the last message: the continuation's
    opening, what failed (normalised: ``forgeflare._evidence.failure_signature``; empty when
    the gate passed), and the record kept on the frame."""

    text: str
    signature: str
    note: ClaimNote | None = None


class LoopRecord(NamedTuple):
    """A valid stored state; the last frame of ``stack`` is the innermost (running) loop."""

    event: Event
    run_id: str
    updated_at: datetime
    stack: tuple[Frame, ...]


class Corrupt(NamedTuple):
    """Stored state that could not be understood; ``why`` says what was wrong."""

    why: str


StoredState = LoopRecord | Corrupt | None
"""What a project holds: a record, something unreadable, or nothing at all (``None``)."""


class StopDecision(NamedTuple):
    """What the hook does: block with ``reason`` (continue the session), or allow with an
    optional note. The hook exits 0 either way (see ``_continuation.continue_output``)."""

    phase: Phase
    block: bool = False
    reason: str = ""
    note: str = ""

    @property
    def exit_code(self) -> int:
        """Always 0: a block is said on stdout (exit 2 would show the model the hook's path)."""
        return 0


def block_reason(frame: Frame) -> str:
    """The spec's continuation line for ``frame``, how to finish, then its original prompt."""
    return continuation(frame.iter, frame.max, frame.mode, frame.prompt)


def _owned_by_other(frame: Frame, session_id: str | None) -> bool:
    return bool(session_id) and bool(frame.session_id) and frame.session_id != session_id


def _claim(frame: Frame, session_id: str | None) -> Frame:
    return frame._replace(session_id=session_id) if session_id and not frame.session_id else frame


def _iterate(
    state: LoopRecord,
    stack: tuple[Frame, ...],
    now: datetime,
    session_id: str | None,
    judged: str | None = None,
) -> tuple[StoredState, StopDecision]:
    """One more iteration of the top frame of ``stack``, or STUCK at its cap."""
    top = stack[-1]
    if top.iter >= top.max:
        return None, StopDecision(
            Phase.STUCK,
            note=(
                f"{top.mode} loop reached its cap ({top.iter}/{top.max}, MAX_ITERATIONS); ended it"
            ),
        )
    advanced = _claim(top, session_id)._replace(iter=top.iter + 1)
    if judged:
        advanced = advanced._replace(judged=judged)
    new_state = state._replace(event=Event.STATE, updated_at=now, stack=(*stack[:-1], advanced))
    return new_state, StopDecision(Phase.ACTIVE, block=True, reason=block_reason(advanced))


def claimed(state: StoredState, last_assistant_text: str | None) -> Frame | None:
    """The running frame when the last message claims its completion (the hook then runs the
    frame's gate, if it has one, before :func:`transition`)."""
    if not isinstance(state, LoopRecord) or state.event is not Event.STATE or not state.stack:
        return None
    top = state.stack[-1]
    if top.question:  # parked or answered: no claim is judged until the loop goes on
        return None
    if last_assistant_text is None or find_signal(last_assistant_text, top.mode) is None:
        return None
    return top


def _refused_claim(
    state: LoopRecord,
    top: Frame,
    signal: str,
    refused: Refusal,
    now: datetime,
    session_id: str | None,
) -> tuple[StoredState, StopDecision]:
    """The gate or the reviewer refused the claim: go on with why first, or end a stalled
    loop (a claim the gate passed resets the streak: the loop's "the gate passes")."""
    same = bool(top.failures) and refused.signature == top.failures
    streak = top.stalled + 1 if same else 0
    if top.stall_after and streak >= top.stall_after:
        return None, StopDecision(
            Phase.STUCK,
            note=(
                f"stalled: {streak} claims in a row refused with the same gate failures "
                f"({refused.signature}); ended the loop, stop allowed"
            ),
        )
    marked = _noted(top._replace(failures=refused.signature, stalled=streak), refused)
    stack = (*state.stack[:-1], marked)
    new_state, decision = _iterate(state._replace(stack=stack), stack, now, session_id)
    if decision.block:
        decision = decision._replace(reason=f"{refused.text}{decision.reason}")
    by = refused.note.rejected_by if refused.note is not None else "gate"
    return new_state, decision._replace(note=f"{signal} refused by the {by}")


def _noted(frame: Frame, refused: Refusal) -> Frame:
    """``frame`` with the refused claim's record kept."""
    return frame if refused.note is None else frame._replace(claims=(*frame.claims, refused.note))


def _claimed_done(
    state: LoopRecord,
    top: Frame,
    signal: str,
    now: datetime,
    session_id: str | None,
    judged: str | None,
) -> tuple[StoredState, StopDecision]:
    """The innermost loop completed: end the record, or pop it and go on with the outer one."""
    rest = state.stack[:-1]
    if not rest:
        return None, StopDecision(
            Phase.COMPLETING, note=f"loop complete: {signal} ({top.mode} mode)"
        )
    outer = rest[-1]
    popped = state._replace(event=Event.STATE, updated_at=now, stack=rest)
    if outer.blocked:
        return popped, StopDecision(
            Phase.COMPLETING,
            note=(
                f"inner loop complete: {signal} ({top.mode} mode); the outer {outer.mode} "
                "loop waits for an answer (forgeflare stop-hook answer)"
            ),
        )
    if _owned_by_other(outer, session_id):
        return popped, StopDecision(
            Phase.COMPLETING,
            note=(
                f"inner loop complete: {signal} ({top.mode} mode); the outer {outer.mode} "
                "loop belongs to another session"
            ),
        )
    new_state, decision = _iterate(popped, rest, now, session_id, judged)
    done = f"inner loop complete: {signal} ({top.mode} mode)"
    return new_state, decision._replace(note=f"{done}; {decision.note}" if decision.note else done)


ANSWER_HOW = 'answer with /forgeflare:answer TEXT, or forgeflare stop-hook answer "TEXT"'
"""How a parked frame is answered, in the hook's note and in ``stop-hook status``."""


def _first(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def _new_top(
    state: LoopRecord, top: Frame, now: datetime, session_id: str | None, judged: str | None
) -> LoopRecord:
    """``state`` with ``top`` as its running frame, claimed by the session, ``judged`` kept."""
    top = _claim(top, session_id)
    if judged:
        top = top._replace(judged=judged)
    return state._replace(event=Event.STATE, updated_at=now, stack=(*state.stack[:-1], top))


def _park(
    state: LoopRecord,
    top: Frame,
    question: str,
    now: datetime,
    session_id: str | None,
    judged: str | None,
) -> tuple[StoredState, StopDecision]:
    """ACTIVE -> BLOCKED: keep the frame with its question and let the session stop."""
    new_state = _new_top(state, top._replace(question=question, answer=""), now, session_id, judged)
    note = f"loop blocked: the agent asks: {_first(question)}; stop allowed; {ANSWER_HOW}"
    return new_state, StopDecision(Phase.BLOCKED, note=note)


def _parked_or_answered(
    state: LoopRecord,
    top: Frame,
    now: datetime,
    session_id: str | None,
    judged: str | None,
) -> tuple[StoredState, StopDecision]:
    """A parked frame: allow every stop until it is answered (BLOCKED -> BLOCKED); then go on
    with the same iteration, its continuation opening with the question and the answer."""
    if top.blocked:
        note = f"loop waits for an answer to: {_first(top.question)}; stop allowed; {ANSWER_HOW}"
        return state, StopDecision(Phase.BLOCKED, note=note)
    new_state = _new_top(state, top._replace(question="", answer=""), now, session_id, judged)
    reason = answer_preamble(top.question, top.answer) + block_reason(new_state.stack[-1])
    return new_state, StopDecision(
        Phase.ACTIVE, block=True, reason=reason, note="answered: the loop goes on"
    )


def record_answer(state: StoredState, answer: str, now: datetime) -> LoopRecord | str:
    """The state with ``answer`` given to the running frame's question (pure), or why not.

    A second answer before the session's next stop replaces the first. The state's time is
    renewed: the loop is live again, and the staleness limit counts from here.
    """
    if not answer.strip():
        return "the answer is empty"
    if not isinstance(state, LoopRecord) or state.event is not Event.STATE or not state.stack:
        return "no loop in this project"
    top = state.stack[-1]
    if not top.question:
        return f"the running {top.mode}-mode loop asked no question (it is not blocked)"
    answered = top._replace(answer=answer.strip())
    return state._replace(updated_at=now, stack=(*state.stack[:-1], answered))


def transition(
    state: StoredState,
    last_assistant_text: str | None,
    now: datetime,
    session_id: str | None = None,
    *,
    judged: str | None = None,
    refused: Refusal | None = None,
) -> tuple[StoredState, StopDecision]:
    """Decide one stop attempt of session ``session_id``. Pure: no I/O, total over its inputs.

    ``judged`` is the transcript message id the text came from (kept on the frame that goes
    on, so the next Stop can tell a lagging transcript), ``None`` when unknown.

    ``last_assistant_text`` is ``None`` when it could not be read; the hook then never blocks
    (it fails open) but still applies staleness, abort and max-iteration clean-up.
    ``now`` must be timezone-aware. The returned state is ``state`` itself when nothing
    changed, ``None`` when the loop ended and its state is to be removed. ``refused`` is why
    the frame's gate refused the claim in the last message: the loop then goes on, and the
    continuation starts with it.
    """
    if state is None:
        return None, StopDecision(Phase.IDLE)
    if isinstance(state, Corrupt):
        return None, StopDecision(
            Phase.ABORTED, note=f"corrupted loop state ({state.why}); removed it, stop allowed"
        )
    if state.event is Event.DONE or not state.stack:
        return state, StopDecision(Phase.IDLE)
    if state.event is Event.ABORT:
        return None, StopDecision(Phase.ABORTED, note="loop aborted; state removed, stop allowed")
    age = now - state.updated_at
    if age > STALE_AFTER and not state.stack[-1].question:
        return None, StopDecision(
            Phase.STUCK,
            note=(
                f"loop state is stale (updated {int(age.total_seconds())} s ago, "
                f"limit {int(STALE_AFTER.total_seconds())} s); ended it, stop allowed"
            ),
        )
    top = state.stack[-1]
    if _owned_by_other(top, session_id):
        # Another session's loop: this Stop is none of its business (and must not count).
        return state, StopDecision(Phase.IDLE)
    if top.question:
        return _parked_or_answered(state, top, now, session_id, judged)
    signal = None if last_assistant_text is None else find_signal(last_assistant_text, top.mode)
    if signal is not None and refused is not None:
        return _refused_claim(state, top, signal, refused, now, session_id)
    if signal is not None:
        return _claimed_done(state, top, signal, now, session_id, judged)
    question = None if last_assistant_text is None else find_question(last_assistant_text)
    if question is not None:
        return _park(state, top, question, now, session_id, judged)
    if top.iter >= top.max:
        return _iterate(state, state.stack, now, session_id)
    if last_assistant_text is None:
        return state, StopDecision(
            Phase.ACTIVE, note="cannot read the last assistant message; stop allowed"
        )
    return _iterate(state, state.stack, now, session_id, judged)


def push_frame(state: StoredState, frame: Frame, now: datetime, run_id: str) -> LoopRecord:
    """IDLE -> ACTIVE (or nest): ``frame`` on top of a live stack, else a new run ``run_id``.

    A stale, finished, aborted or corrupted state is replaced rather than extended, so
    starting a loop never revives a zombie outer loop; a frame parked on a question (answered
    or not) is kept, however old: it waits for a person.
    """
    live = (
        isinstance(state, LoopRecord)
        and state.event is Event.STATE
        and bool(state.stack)
        and (now - state.updated_at <= STALE_AFTER or bool(state.stack[-1].question))
    )
    if live and isinstance(state, LoopRecord):
        return state._replace(updated_at=now, stack=(*state.stack, frame))
    return LoopRecord(event=Event.STATE, run_id=run_id, updated_at=now, stack=(frame,))
