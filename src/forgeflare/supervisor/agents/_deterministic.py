"""Failures that waiting cannot fix, told apart from those it can (pure).

An agent that is not logged in, has a bad key, is refused as root, names a model that does not
exist or lost a helper it needs fails the same way every time: three error iterations with
pauses between them only burn the night. :func:`deterministic_failure` says when an error
iteration is one of these: its line matches the backend's table (:data:`COMMON_TABLE` plus the
backend's own ``deterministic_errors``), or the same line came from an earlier error iteration
of the same agent in this run, unless it is a usage limit, an outage or a network failure
(those :mod:`._waiting` waits out). Like a spent quota, such a failure falls back to the next
agent when a fallback is set, else ends the loop ``error`` (exit 12) with the agent's line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = [
    "COMMON_TABLE",
    "Row",
    "deterministic_failure",
    "error_line",
    "iteration_failure",
    "same_line",
]

COMMON_TABLE: tuple[str, ...] = (
    r"\bnot logged in\b",
    r"\binvalid (?:x-)?api[ _-]?key\b",
    r"\bauthentication[_ ](?:error|failed)\b",
    r"\bunauthori[sz]ed\b",
    r"\bpermission_error\b",
    r"cannot be used with root",
    r"\bnot_found_error\b",
    r"\bmodel\b.{0,80}\b(?:not found|does not exist|not supported|unknown)\b",
    r"\b(?:unknown|invalid) model\b",
)
"""Lines of failures no retry fixes, whatever the agent (matched case-insensitively)."""

_TRANSIENT = re.compile(
    r"rate[_ ]?limit|usage limit|\b429\b|overloaded|\b5\d\d\b|server[_ ]error|timed? ?out"
    r"|timeout|connection|connect\b|econn\w+|enotfound|eai_again|getaddrinfo|network"
    r"|socket hang up|fetch failed|stream (?:closed|disconnected|error)|reconnecting",
    re.IGNORECASE,
)
"""Words of a usage limit, an outage or a network failure: never deterministic by repetition."""

_ERRORS = frozenset({"agent_error", "api_error"})
_MAX_LINE = 300


def error_line(text: str | None) -> str:
    """The agent's one line about its failure: the last non-blank line of ``text``, trimmed to
    a length a terminal line and a run record can hold (``""`` for none)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= _MAX_LINE else line[: _MAX_LINE - 1] + "…"


def same_line(a: str, b: str) -> bool:
    """Two error lines say the same (case, spacing and digits aside: a request id or a count
    that changes does not make another error)."""

    def norm(text: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text)).strip().casefold()

    return bool(a.strip()) and norm(a) == norm(b)


def deterministic_failure(
    *,
    outcome: str,
    transient: bool,
    line: str,
    earlier: Iterable[str] = (),
    table: Sequence[str] = (),
) -> str | None:
    """The agent's line when this iteration failed in a way waiting cannot fix, else ``None``.

    ``outcome``/``transient`` are the iteration report's; ``line`` its agent's error line
    (:func:`error_line`); ``earlier`` the lines of this agent's earlier error iterations in
    the run; ``table`` the backend's own patterns, added to :data:`COMMON_TABLE`.
    """
    if outcome not in _ERRORS or transient or not line.strip():
        return None
    for pattern in (*COMMON_TABLE, *table):
        if re.search(pattern, line, re.IGNORECASE):
            return line
    if _TRANSIENT.search(line):
        return None
    if any(same_line(line, before) for before in earlier):
        return line
    return None


class Row(Protocol):
    """What :func:`iteration_failure` reads of an iteration (a report, or a run's row)."""

    @property
    def outcome(self) -> str: ...
    @property
    def transient(self) -> bool | None: ...
    @property
    def detail(self) -> str | None: ...


def iteration_failure(
    report: Row, earlier: Iterable[Row], *, table: Sequence[str] = ()
) -> str | None:
    """:func:`deterministic_failure` of an iteration's ``report``, with the lines of the
    ``earlier`` rows of the same agent (backend and profile) that were errors."""
    before = [
        error_line(row.detail)
        for row in earlier
        if row.outcome in _ERRORS and not row.transient and row.detail
    ]
    return deterministic_failure(
        outcome=report.outcome,
        transient=bool(report.transient),
        line=error_line(report.detail),
        earlier=before,
        table=table,
    )
