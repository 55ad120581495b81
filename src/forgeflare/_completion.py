"""What completes a loop: the tags, their finder, the rule the model is shown, the plan's boxes.

Neutral ground: the stop-hook and the loop supervisor both import this module, so a loop run by
either completes by one rule.

Completion signals are found by reading the markdown rather than grepping it.

A signal counts only when it stands alone on a line of ordinary text (at most three spaces of
indentation, surrounding whitespace ignored), anywhere in the last assistant text. Lines in
fenced code blocks (``` and ~~~, an unclosed fence runs to the end), in indented code blocks,
and inside inline code spans (which may cross lines within a paragraph) never count: an agent
that *explains* the signal must not end its own loop.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from enum import StrEnum

__all__ = [
    "BLOCKED_PROMPT",
    "BLOCKED_TAG",
    "COMPLETE_TAG",
    "LOOP_COMPLETE_PROMPT",
    "NO_QUESTION",
    "RULE",
    "SIGNALS",
    "Mode",
    "answer_preamble",
    "blocked_hint",
    "completion_hint",
    "completion_signal",
    "count_unchecked",
    "find_question",
    "find_signal",
    "plan_tasks",
]


class Mode(StrEnum):
    """What kind of loop a frame runs; it decides which tags complete it."""

    LOOP = "loop"
    TASK = "task"
    ISSUE = "issue"
    GRIND = "grind"


_LOOP_SIGNALS = (
    "<loop-done>COMPLETE</loop-done>",
    "<loop-done>MAX_ITERATIONS</loop-done>",
    "<loop-done>STUCK</loop-done>",
)

SIGNALS: dict[Mode, tuple[str, ...]] = {
    Mode.LOOP: _LOOP_SIGNALS,
    Mode.TASK: _LOOP_SIGNALS,
    Mode.ISSUE: (*_LOOP_SIGNALS, "<issue-complete>DONE</issue-complete>"),
    Mode.GRIND: ("<grind-done>NO_MORE_ISSUES</grind-done>", "<grind-done>MAX_ISSUES</grind-done>"),
}
"""The exact tags that complete a frame of each mode (the spec's table)."""

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# A fence opened on a list item's own line ("- ```", "1. ~~~"): its closing fence may be
# indented up to the item's content column plus three.
_LIST_FENCE_OPEN = re.compile(r"^((?:[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+)+)(`{3,}|~{3,})(.*)$")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def find_signal(text: str, mode: Mode) -> str | None:
    """The last completion signal of ``mode`` that stands on its own line outside code."""
    wanted = frozenset(SIGNALS[mode])
    found: str | None = None
    for line in _prose_lines(text):
        stripped = line.strip()
        if stripped in wanted:
            found = stripped
    return found


def _indent(line: str) -> int:
    """Columns of leading whitespace, tabs to the next multiple of four (CommonMark)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _closes(line: str, char: str, length: int, base: int) -> bool:
    if _indent(line) > base + 3:
        return False
    body = line.strip()
    return len(body) >= length and body == char * len(body)


def _prose_lines(text: str) -> Iterator[str]:
    """Lines that could carry a signal: outside code blocks and code spans, indent <= 3."""
    for _, line in _numbered_prose(text):
        yield line


def _numbered_prose(text: str) -> Iterator[tuple[int, str]]:
    """:func:`_prose_lines` with each line's index in ``text.splitlines()``."""
    fence: tuple[str, int, int] | None = None  # (char, length, container indent)
    paragraph: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines()):
        if fence is not None:
            if _closes(line, *fence):
                fence = None
            continue
        if not line.strip():
            yield from _paragraph_prose(paragraph)
            paragraph = []
            continue
        if _indent(line) >= 4:
            # Starts an indented code block, unless it continues a paragraph (lazy line);
            # either way it is not "alone on its line", but a continuation can hold a span.
            if paragraph:
                paragraph.append((number, line))
            continue
        fence = _fence_opened(line)
        if fence is not None:
            yield from _paragraph_prose(paragraph)
            paragraph = []
            continue
        if _ATX_HEADING.match(line) or _THEMATIC_BREAK.match(line):
            yield from _paragraph_prose(paragraph)
            paragraph = []
            continue
        paragraph.append((number, line))
    yield from _paragraph_prose(paragraph)


def _fence_opened(line: str) -> tuple[str, int, int] | None:
    """``(char, length, container indent)`` when ``line`` opens a fenced code block."""
    match = _FENCE_OPEN.match(line)
    base = 0
    if match is None:
        match = _LIST_FENCE_OPEN.match(line)
        if match is None:
            return None
        base = len(match.group(1).expandtabs(4))
        fence, info = match.group(2), match.group(3)
    else:
        fence, info = match.group(1), match.group(2)
    if fence[0] == "`" and "`" in info:  # a backtick fence's info string has no backticks
        return None
    return fence[0], len(fence), base


def _paragraph_prose(numbered: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    if not numbered:
        return
    lines = [line for _, line in numbered]
    joined = "\n".join(lines)
    spans = _code_spans(joined)
    starts = [start for start, _ in spans]
    offset = 0
    for number, line in numbered:
        # A line lies inside a span when the nearest span opening before it closes after it.
        i = bisect.bisect_left(starts, offset) - 1
        inside = i >= 0 and spans[i][1] > offset
        if not inside and _indent(line) <= 3:
            yield number, line
        offset += len(line) + 1
    return


def _code_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each inline code span: a backtick run closed by one of equal length.

    Runs are collected once and closers found by bisection, so a text full of unmatched
    backticks stays linear-ish instead of rescanning to the end for every opener.
    """
    runs: list[tuple[int, int, bool]] = []  # (position, length, first backtick escaped)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in _PUNCTUATION and text[i + 1] != "`":
            i += 2
            continue
        if ch == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            escaped = i > 0 and text[i - 1] == "\\" and not _escaped_backslash(text, i - 1)
            runs.append((i, j - i, escaped))
            i = j
            continue
        i += 1
    by_length: dict[int, list[int]] = {}
    for index, (_, length, _) in enumerate(runs):
        by_length.setdefault(length, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        pos, length, escaped = runs[index]
        if escaped:
            pos, length = pos + 1, length - 1
        candidates = by_length.get(length, [])
        k = bisect.bisect_right(candidates, index)
        if length > 0 and k < len(candidates):
            closer = candidates[k]
            spans.append((pos, runs[closer][0] + runs[closer][1]))
            index = closer + 1
        else:
            index += 1
    return spans


def _escaped_backslash(text: str, pos: int) -> bool:
    """Whether the backslash at ``pos`` is itself escaped (an odd run of backslashes before)."""
    count = 0
    pos -= 1
    while pos >= 0 and text[pos] == "\\":
        count += 1
        pos -= 1
    return count % 2 == 1


COMPLETE_TAG = "<loop-done>COMPLETE</loop-done>"
"""The tag that completes a loop (``Mode.LOOP``'s first signal)."""

RULE = (
    "on its own line, outside code, in the final message of your turn "
    "(its text, not thinking or tool calls)"
)
"""Where a tag counts, in the words the model is shown."""

LOOP_COMPLETE_PROMPT = (
    f"\nWhen the whole task is done, end your final message with {COMPLETE_TAG} on a "
    "line of its own (not in code). Do not write it before.\n"
)
"""Appended to the prompt of loop agents that complete by the tag in their final message."""


def completion_hint(mode: Mode) -> str:
    """One or two sentences naming the tags that finish a ``mode`` loop and the rule."""
    first, *others = SIGNALS[mode]
    hint = f"To finish, write {first} {RULE}."
    if others:
        also = " or ".join([", ".join(others[:-1]), others[-1]] if len(others) > 2 else others)
        hint += f" {also} also end{'s' if len(others) == 1 else ''} the loop."
    return hint


BLOCKED_TAG = "<loop-done>BLOCKED</loop-done>"
"""The tag that parks a loop on a question (the question follows on the next lines)."""

BLOCKED_PROMPT = (
    f"\nIf you cannot go on without a decision or something only a person can give (a choice "
    f"between designs, a missing credential, an unclear requirement), end your final message "
    f"with {BLOCKED_TAG} {RULE}, and your question on the lines after it. Do not guess.\n"
)
"""Appended to every loop iteration's prompt: how the agent asks a question."""

NO_QUESTION = "(the agent gave no question)"


def blocked_hint() -> str:
    """The sentence that tells a model in a stop-hook loop how to ask a person a question
    (it follows :func:`completion_hint`, whose rule it refers to)."""
    return (
        f"If only a person can decide how to go on, write {BLOCKED_TAG} the same way, with your "
        "question on the lines after it; do not guess."
    )


def answer_preamble(question: str, answer: str) -> str:
    """What the next prompt (or continuation) starts with once a question was answered."""
    return (
        "An earlier iteration of this loop stopped to ask a question; it has been answered.\n\n"
        f"Question:\n{question.strip()}\n\nAnswer:\n{answer.strip()}\n\n---\n\n"
    )


"""The question recorded when the tag stands with nothing after it."""


def find_question(text: str) -> str | None:
    """The question after the last :data:`BLOCKED_TAG` standing on its own line outside code.

    The question is the rest of the message after the tag's line (stripped); ``None`` when
    the tag does not stand in ``text``.
    """
    if BLOCKED_TAG not in (text or ""):
        return None
    at = None
    for number, line in _numbered_prose(text):
        if line.strip() == BLOCKED_TAG:
            at = number
    if at is None:
        return None
    rest = "\n".join(text.splitlines()[at + 1 :]).strip()
    return rest or NO_QUESTION


def completion_signal(text: str) -> str | None:
    """``COMPLETE_TAG`` when it stands on its own line, outside code, in ``text``."""
    return COMPLETE_TAG if find_signal(text or "", Mode.LOOP) == COMPLETE_TAG else None


_TASK = re.compile(r"^[ \t]*[-*+][ \t]+\[( |x|X)\][ \t]*(.*)$", re.MULTILINE)
"""A Markdown task box: ``- [ ] text``, ``* [x] text``, ``+ [X] text``."""


def plan_tasks(plan_text: str) -> list[tuple[bool, str]]:
    """Every task box of a plan, in order: (checked, its text)."""
    return [(m.group(1) != " ", m.group(2).strip()) for m in _TASK.finditer(plan_text)]


def count_unchecked(plan_text: str) -> int:
    """Unchecked Markdown task boxes (``- [ ] ...``, also ``*`` / ``+`` bullets) in a plan."""
    return sum(1 for checked, _ in plan_tasks(plan_text) if not checked)
