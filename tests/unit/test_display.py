"""The agent's display: held text is written only once accepted; discarded text is marked."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from forgeflare._termtext import for_terminal
from forgeflare.agent import AgentDisplay
from forgeflare.agent._display import plain, plain_line, styled


def _display(**options: bool) -> tuple[AgentDisplay, io.StringIO, io.StringIO]:
    """A display over two fresh buffers: it, its stdout, its stderr."""
    out, err = io.StringIO(), io.StringIO()
    return AgentDisplay(out=out, err=err, **options), out, err


# Text is held when asked, and by default when stdout is not a terminal (a StringIO is not).
@pytest.mark.parametrize("options", [{"hold_text": True}, {}], ids=["asked", "not-a-terminal"])
def test_held_text_is_written_on_acceptance_and_dropped_on_discard(
    options: dict[str, bool],
) -> None:
    display, out, _ = _display(**options)
    display.text("cut ")
    display.text("short")
    display.discard()
    assert out.getvalue() == ""
    display.text("the answer")
    assert out.getvalue() == ""
    display.end_message()
    assert out.getvalue() == "the answer\n"


def test_streamed_text_that_is_discarded_is_marked() -> None:
    display, out, _ = _display(hold_text=False)
    display.text("cut sh")
    display.discard()
    display.text("the answer")
    display.end_message()
    assert out.getvalue() == (
        "cut sh\n[discarded: the response above was cut off and is retried]\nthe answer\n"
    )


def test_a_discard_with_nothing_streamed_prints_nothing() -> None:
    display, out, _ = _display(hold_text=False)
    display.discard()
    display.end_message()
    assert out.getvalue() == ""


def test_text_from_the_model_and_the_project_reaches_the_terminal_without_escapes() -> None:
    display, out, err = _display(hold_text=False)
    display.text("said \x1b]52;c;cm0gLXJmIH4=\x07this\n")
    display.tool_output("cat: \x1b]0;pwned\x07\x1b[2Kfile \u202eevil\n")
    display.tool_result("Bash", "\x9b31mfailed", is_error=True)
    assert out.getvalue() == "said this\n"
    assert "cat: file <U+202E>evil\n" in err.getvalue()
    assert "Bash: error: failed" in err.getvalue()
    assert not any(c in err.getvalue() + out.getvalue() for c in "\x1b\x07\x9b\u202e")


TAGS = ["tool", "result", "blocked", "usage", "info", "warn", "error"]
"""The display's tags: fixed words (a ``[`` in one would be markup to rich)."""


# Where rich would style nothing (a pipe, a loop's log) the display writes its lines itself and
# rich is never loaded; the lines must be the ones rich writes, for any text.
@given(tag=st.sampled_from(TAGS), text=st.text())
@example(tag="tool", text="Bash: abc\n e :smile: [b]x[/b] \\[y] ⺀")
@example(tag="tool", text="⺀\t")
@example(tag="tool", text="a\\")
def test_a_plain_line_is_the_line_rich_prints_without_styles(tag: str, text: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    shown = for_terminal(text)
    line, retry = io.StringIO(), io.StringIO()
    Console(file=line, highlight=False, emoji=False, force_terminal=False).print(
        f"[dim]\\[{tag}][/dim] {escape(shown)}", soft_wrap=True
    )
    Console(file=retry, highlight=False, emoji=False, force_terminal=False).print(
        escape(shown), soft_wrap=True, style="yellow"
    )
    if "\t" in shown or shown.endswith("\\"):  # what rich changes is left to it
        assert plain_line(tag, shown) is None
        assert plain(shown) is None
    else:
        assert plain_line(tag, shown) == line.getvalue()
        assert plain(shown) == retry.getvalue()


@pytest.mark.parametrize(
    ("environ", "terminal", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": ""}, True, False),
        ({"TTY_COMPATIBLE": "1"}, False, True),
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True, False),
        ({"TTY_COMPATIBLE": "yes"}, False, False),
        ({"NO_COLOR": "1"}, False, False),
    ],
)
def test_styled_is_richs_own_terminal_test(
    environ: dict[str, str], terminal: bool, expected: bool
) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return terminal

    from rich.console import Console

    assert styled(Stream(), environ) is expected
    assert Console(file=Stream(), _environ=environ).is_terminal is expected


def test_an_agent_in_a_pipe_writes_its_lines_without_loading_rich() -> None:
    script = (
        "import io, sys\n"
        "from forgeflare.agent._display import AgentDisplay\n"
        "err = io.StringIO()\n"
        "d = AgentDisplay(out=io.StringIO(), err=err)\n"
        "d.tool_call('Bash', {'command': 'ls\\t-la [x] :smile:'})\n"
        "d.retry('[retry] 529 overloaded\\x1b[2J, waiting 2s')\n"
        "print('rich' in sys.modules, repr(err.getvalue()))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    loaded, _, written = done.stdout.strip().partition(" ")
    assert loaded == "False"
    assert written == repr("[tool] Bash: ls -la [x] :smile:\n[retry] 529 overloaded, waiting 2s\n")
