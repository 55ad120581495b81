"""What the agent shows a person: assistant text on stdout, one tagged line per event on stderr.

stdout carries only accepted answers. When it is not a terminal (a pipe, a loop's log), a
response's text is held until the response is accepted and dropped when its stream fails and is
retried. On a terminal the text streams as it comes, and a discarded part is marked as such.

The tagged lines (``[tool] Bash: pytest -q``, ``[usage] in=… out=… cache_read=… cache_write=…
total=…``) are also what the loop supervisor parses for its status line, so their shape is a
contract; ``total`` counts every kind, as the loop's records do. Colour only on a
terminal and never with ``NO_COLOR`` (rich handles both).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from forgeflare._termtext import for_terminal

if TYPE_CHECKING:  # rich loads only for a terminal: an agent in a loop never loads it
    from rich.console import Console

__all__ = ["AgentDisplay", "plain", "plain_line", "styled", "summarize_input"]

_PREVIEW = 200


def summarize_input(input: dict[str, Any] | None) -> str:
    """The first argument's value on one line, as in the session's key-actions list."""
    if not input:
        return ""
    first = str(next(iter(input.values())))
    first = " ".join(first.split())
    return first if len(first) <= _PREVIEW else first[: _PREVIEW - 1] + "…"


def _size(text: str) -> str:
    n = len(text.encode())
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False


def styled(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether rich would style what goes to ``stream``: rich's own test, a terminal unless
    ``TTY_COMPATIBLE`` (0 or 1) or a non-empty ``FORCE_COLOR`` says otherwise."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    return _isatty(stream)


def plain(text: str) -> str | None:
    """``text`` as rich prints it where it styles nothing, or ``None`` where rich would change
    it: a tab (rich expands it by terminal cells) or a trailing backslash (rich's ``escape``
    doubles it). Such rare lines are left to rich."""
    return None if "\t" in text or text.endswith("\\") else text + "\n"


def plain_line(tag: str, text: str) -> str | None:
    """A tagged line as rich prints it where it styles nothing (``None``: see :func:`plain`)."""
    return plain(f"[{tag}] {text}")


class AgentDisplay:
    """Terminal and log output of one agent process. Safe to call from worker threads."""

    def __init__(
        self,
        *,
        verbose: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        hold_text: bool | None = None,
    ) -> None:
        self.verbose = verbose
        self._out = out if out is not None else sys.stdout
        # None: hold unless stdout is a terminal, where a person wants to see the text come.
        self._hold = not _isatty(self._out) if hold_text is None else hold_text
        self._pending: list[str] = []
        self._streamed = False
        self._err_file = err if err is not None else sys.stderr
        # Without styles the lines are written as rich would write them, and rich (35 ms of
        # CPU, 5% of an agent's start) is not loaded: a loop's agents and every piped run.
        self._rich: Console | None = None
        self._plain = not styled(self._err_file, os.environ)
        self._lock = threading.Lock()
        self._mid_line = False
        self._err_mid_line = False

    def _end_out_line(self) -> None:
        """End a line of assistant text left open on stdout (the caller holds the lock)."""
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False

    def _console(self) -> Console:
        if self._rich is None:
            from rich.console import Console

            # emoji off: a tool's input shows as written (``:smile:`` stays), as in plain lines
            self._rich = Console(file=self._err_file, highlight=False, emoji=False)
        return self._rich

    def _line(self, tag: str, text: str, style: str = "dim") -> None:
        with self._lock:
            self._end_out_line()
            if self._err_mid_line:
                self._err_file.write("\n")
                self._err_mid_line = False
            shown = for_terminal(text)
            self._emit(plain_line(tag, shown), f"[{style}]\\[{tag}][/{style}] ", shown)

    def _emit(self, written: str | None, markup: str, text: str, style: str | None = None) -> None:
        """``written`` where rich styles nothing and prints it unchanged; else rich prints
        ``markup`` and the escaped ``text`` (the caller holds the lock)."""
        if self._plain and written is not None:
            self._write_err(written)
            return
        from rich.markup import escape

        self._console().print(markup + escape(text), soft_wrap=True, style=style)

    def _write_err(self, text: str) -> None:
        self._err_file.write(text)
        self._err_file.flush()

    def text(self, chunk: str) -> None:
        """A streamed piece of assistant text (held until accepted when not on a terminal)."""
        with self._lock:
            if self._hold:
                self._pending.append(chunk)
                return
            self._write_out(chunk)
            self._streamed = True

    def _write_out(self, chunk: str) -> None:
        chunk = for_terminal(chunk)  # the model's text may carry what a repository holds
        self._out.write(chunk)
        self._out.flush()
        self._mid_line = not chunk.endswith("\n")

    def end_message(self) -> None:
        """The response was accepted: write its held text and finish its line."""
        with self._lock:
            if self._pending:
                self._write_out("".join(self._pending))
                self._pending.clear()
            self._streamed = False
            self._end_out_line()

    def discard(self) -> None:
        """The response being streamed failed and will not count: drop or mark its text."""
        with self._lock:
            self._pending.clear()
            if self._streamed:
                self._end_out_line()
                self._out.write("[discarded: the response above was cut off and is retried]\n")
                self._out.flush()
            self._streamed = False

    def info(self, text: str) -> None:
        self._line("info", text)

    def verbose_info(self, text: str) -> None:
        if self.verbose:
            self._line("info", text)

    def warn(self, text: str) -> None:
        self._line("warn", text, "yellow")

    def error(self, text: str) -> None:
        self._line("error", text, "bold red")

    def retry(self, text: str) -> None:
        """Retry log lines arrive already tagged (``[retry] …``) from the client."""
        text = for_terminal(text)  # the text may quote what a server sent
        with self._lock:
            self._emit(plain(text), "", text, style="yellow")

    def tool_call(self, name: str, input: dict[str, Any] | None) -> None:
        self._line("tool", f"{name}: {summarize_input(input)}", "cyan")

    def tool_output(self, chunk: str) -> None:
        """Live output of a running Bash command, on stderr as it arrives.

        A person watching (or reading the loop's iteration log in the morning) sees what the
        command printed; the model gets the same text in the tool_result.
        """
        if not chunk:
            return
        chunk = for_terminal(chunk)
        with self._lock:
            self._write_err(chunk)
            self._err_mid_line = not chunk.endswith("\n")

    def tool_result(self, name: str, content: str, *, is_error: bool) -> None:
        if is_error:
            preview = " ".join(content.split())[:_PREVIEW]
            self._line("result", f"{name}: error: {preview}", "red")
        else:
            self._line("result", f"{name}: {_size(content)}")

    def blocked(self, name: str, message: str) -> None:
        self._line("blocked", f"{name}: {message}", "magenta")

    def usage(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        total: int,
        cache_read: int = 0,
        cache_write: int = 0,
    ) -> None:
        """One response's tokens by kind, and the turn's total so far (every kind counted)."""
        self._line(
            "usage",
            f"in={input_tokens} out={output_tokens} cache_read={cache_read} "
            f"cache_write={cache_write} total={total}",
        )
