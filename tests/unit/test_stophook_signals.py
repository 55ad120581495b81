"""Markdown-aware signal detection: own line counts, code of every kind does not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgeflare.stophook import SIGNALS, Mode, find_signal

SIG = "<loop-done>COMPLETE</loop-done>"


@pytest.mark.parametrize(
    "text",
    [
        SIG,
        f"Done.\n{SIG}",
        f"{SIG}\nAnd a summary after it.",  # anywhere, not only the last line
        f"Intro\n\n   {SIG}   \n\nmore",  # up to three spaces, trailing blanks
        f"```\ncode\n```\n{SIG}",  # after a closed fence
        f"~~~~\n```\n~~~~\n{SIG}",  # a shorter other-char line does not close ~~~~
        f"Use `code` here\n{SIG}",  # closed code span on an earlier line
        f"    indented code\n\n{SIG}",
        f"    ```\n{SIG}",  # an indented ``` is code content, not a fence
        f"a stray ` backtick\n{SIG}",  # unmatched backtick is literal
        f"# Heading with ` tick\n{SIG}\n` x",  # heading ends the paragraph: no span across
        f"\\`escaped\n{SIG}\n`",  # escaped backtick opens nothing... the later one is alone
        f"Done.\r\n{SIG}\r\n",
        f"- ```\n  code\n  ```\n{SIG}",  # the list item's fence closes at its indent
        f"1. ```\n   code\n      ```\n{SIG}",  # closing fence up to content column + 3
        f"- a list item\n\n{SIG}",
    ],
)
def test_found(text: str) -> None:
    assert find_signal(text, Mode.LOOP) == SIG


@pytest.mark.parametrize(
    "text",
    [
        "",
        f"Signal with `{SIG}` inline",
        f"`{SIG}`",
        f"To finish, print {SIG} on its own line.",
        f"```\n{SIG}\n```",
        f"~~~\n{SIG}\n~~~",
        f"```markdown\nHere is how:\n{SIG}\n```\nThat's all.",
        f"Explaining:\n```\n{SIG}",  # unclosed fence runs to the end
        f"~~~\n```\n{SIG}\n```\n",  # ``` does not close ~~~
        f"````\n```\n{SIG}\n````",  # a shorter fence does not close a longer one
        f"    {SIG}",  # indented code block
        f"\t{SIG}",
        f"Text\n\n    {SIG}\n",
        f"Paragraph\n    {SIG}",  # lazy continuation: indented, so not alone on its line
        f"A span opens ` here\n{SIG}\nand closes ` here",  # multi-line code span
        f"`` span with ` inside\n{SIG}\n``",
        f"- ```\n  {SIG}\n  ```",  # a fence opened on a list item's line
        f"10. ~~~\n    {SIG}\n",
        f"> {SIG}",  # quoted, not alone
        "<loop-done>COMPLETE</loop-done> and more",
        "<loop-done>complete</loop-done>",
        "<loop-done>DONE</loop-done>",
    ],
)
def test_not_found(text: str) -> None:
    assert find_signal(text, Mode.LOOP) is None


def test_modes_have_their_own_tags() -> None:
    issue = "<issue-complete>DONE</issue-complete>"
    grind = "<grind-done>NO_MORE_ISSUES</grind-done>"
    assert find_signal(issue, Mode.ISSUE) == issue
    assert find_signal(SIG, Mode.ISSUE) == SIG
    assert find_signal(issue, Mode.LOOP) is None
    assert find_signal(SIG, Mode.GRIND) is None
    assert find_signal(grind, Mode.GRIND) == grind
    assert find_signal("<loop-done>STUCK</loop-done>", Mode.TASK) is not None


def test_many_unmatched_backticks_stay_fast() -> None:
    text = "` x\n" * 20_000 + SIG
    # every run has length 1 and they pair up: 20 000 is even, so the signal is outside
    assert find_signal(text, Mode.LOOP) == SIG
    assert find_signal("`` " + "` " * 50_000 + "\n" + SIG, Mode.LOOP) == SIG


prose = st.text(alphabet="abcdef XYZ.,!?-:;()\n", max_size=80)
all_signals = [s for mode in Mode for s in SIGNALS[mode]]


@given(st.text(max_size=300), st.sampled_from(list(Mode)))
def test_never_raises(text: str, mode: Mode) -> None:
    result = find_signal(text, mode)
    assert result is None or result in SIGNALS[mode]


@given(prose, prose, st.sampled_from(list(Mode)), st.sampled_from(["```", "~~~", "````"]))
def test_fenced_signal_is_never_found(before: str, after: str, mode: Mode, fence: str) -> None:
    signal = SIGNALS[mode][0]
    assert find_signal(f"{before}\n{fence}\n{signal}\n{fence}\n{after}", mode) is None
    assert find_signal(f"{before}\n{fence}\n{signal}\n{after}", mode) is None


@given(prose, prose, st.sampled_from(list(Mode)))
def test_indented_or_inline_signal_is_never_found(before: str, after: str, mode: Mode) -> None:
    signal = SIGNALS[mode][-1]
    assert find_signal(f"{before}\n\n    {signal}\n\n{after}", mode) is None
    assert find_signal(f"{before}\n`{signal}`\n{after}", mode) is None


@given(prose, prose, st.sampled_from(list(Mode)), st.integers(0, 3))
def test_signal_alone_on_a_line_is_found(before: str, after: str, mode: Mode, pad: int) -> None:
    signal = SIGNALS[mode][-1]
    assert find_signal(f"{before}\n\n{' ' * pad}{signal}\n\n{after}", mode) == signal
