"""The pure parts of a question that parks a loop: the finder, the setting, the finish rule."""

from __future__ import annotations

import json

import pytest

from forgeflare._completion import BLOCKED_TAG, NO_QUESTION, find_question
from forgeflare.supervisor.backends import asked
from forgeflare.supervisor.config import parse_on_blocked
from forgeflare.supervisor.evidence import (
    FinishType,
    IterationOutcome,
    Limits,
    Streaks,
    finish_rule,
)
from forgeflare.supervisor.records._blocked import answer_preamble

T = BLOCKED_TAG


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (f"{T}\nWhich API?", "Which API?"),
        (
            f"I tried.\n\n{T}\nA or B?\nBoth are fine by the spec.",
            "A or B?\nBoth are fine by the spec.",
        ),
        (f"  {T}  \n  Which?  ", "Which?"),
        (T, NO_QUESTION),
        (f"say `{T}` to ask", None),
        (f"```\n{T}\nWhich?\n```", None),
        (f"    {T}\n    Which?", None),  # an indented code block
        (f"the tag {T} inside a line", None),
        ("<loop-done>COMPLETE</loop-done>", None),
        ("", None),
        (f"```\n{T}\n```\n{T}\nThe real one?", "The real one?"),
    ],
)
def test_find_question(text: str, question: str | None) -> None:
    assert find_question(text) == question


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("stop", None), ("wait:30m", 1800.0), (" wait:2h ", 7200.0), ("wait:500ms", 0.5)],
)
def test_on_blocked_values(value: str, seconds: float | None) -> None:
    assert parse_on_blocked(value) == seconds


@pytest.mark.parametrize("value", ["later", "wait", "wait:", "wait:soon", "stop:1h", 5, True])
def test_bad_on_blocked_is_one_line(value: object) -> None:
    with pytest.raises(ValueError, match=r"stop|wait|duration") as info:
        parse_on_blocked(value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("outcome", "finish"),
    [
        (IterationOutcome(question="Which?", mode="planning"), FinishType.BLOCKED),
        # completing wins: the plan is done
        (IterationOutcome(question="Which?", plan_unchecked=0), FinishType.COMPLETE),
        # a skipped iteration asked nothing
        (IterationOutcome(question="Which?", skipped=True, mode="planning"), None),
        # a question wins over the iteration limit and no_changes
        (IterationOutcome(question="Which?", git_changed=False), FinishType.BLOCKED),
    ],
)
def test_finish_rule_blocked(outcome: IterationOutcome, finish: FinishType | None) -> None:
    _, decision = finish_rule(
        outcome=outcome, streaks=Streaks(), iteration=1, elapsed=0.0, limits=Limits()
    )
    assert (decision if isinstance(decision, FinishType) else None) == finish


def test_blocked_exit_code() -> None:
    assert FinishType.BLOCKED.exit_code == 20


@pytest.mark.parametrize(
    ("tool_input", "questions"),
    [
        ({"questions": [{"question": "A or B?", "options": []}]}, ["A or B?"]),
        ({"questions": [{"question": "One?"}, {"question": " Two? "}]}, ["One?", "Two?"]),
        ({"question": "Plain?"}, ["Plain?"]),
        ({"questions": "nonsense"}, []),
        (None, []),
    ],
)
def test_question_tool_calls(tool_input: object, questions: list[str]) -> None:
    assert asked(tool_input) == questions


def test_preamble_puts_the_question_before_the_answer() -> None:
    text = answer_preamble("Which?\n", " This one. ")
    assert text.index("Which?") < text.index("This one.")
    assert text.endswith("---\n\n")


def test_claude_question_tool_and_tag_reach_the_iteration_report() -> None:
    from forgeflare.supervisor.backends import ChildEnd, ClaudeBackend, ClaudeStreamReader

    ask = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "name": "AskUserQuestion",
                    "input": {"questions": [{"question": "Postgres or SQLite?", "options": []}]},
                }
            ]
        },
    }
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}
    for final, question in [("ok", "Postgres or SQLite?"), (f"{T}\nWhich port?", "Which port?")]:
        reader = ClaudeStreamReader()
        for event in (ask, {**result, "result": final}):
            reader.feed(json.dumps(event))
        report = ClaudeBackend().report(reader, ChildEnd(exit_code=0), None, None)
        assert report.question == question  # the tag's question wins over the tool's
