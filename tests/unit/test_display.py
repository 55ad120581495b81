"""The agent's display: held text is written only once accepted; discarded text is marked."""

from __future__ import annotations

import io

import pytest

from forgeflare.agent import AgentDisplay


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
