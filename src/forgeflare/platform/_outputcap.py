"""How much of a child's output forgeflare keeps: its head and its tail, with the cut said.

A gate that prints 50 MB per run, or a hook that loops on a print, must not fill the run folder
(two iterations of such a gate left 210 MB of logs) nor the loop's memory. The start says what
ran and the end says how it failed; the middle is cut and the cut's size stated. Pure: the
callers hand in bytes or lines and write what is kept.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["KEEP_HEAD", "KEEP_TAIL", "HeadTail", "LineCap", "cut_note"]

KEEP_HEAD = 1 << 20
"""Bytes kept from the start of one gate or hook run's output."""
KEEP_TAIL = 1 << 20
"""Bytes kept from its end."""


def cut_note(cut: int) -> str:
    """The line that stands where output was cut: ``[forgeflare: 48.0 MB of output cut]``."""
    size = f"{cut / (1 << 20):.1f} MB" if cut >= 1 << 20 else f"{cut} bytes"
    return f"[forgeflare: {size} of output cut here]"


@dataclass
class HeadTail:
    """Output taken in chunks (:meth:`extend`), at most ``head`` + ``tail`` bytes kept."""

    head: int = KEEP_HEAD
    tail: int = KEEP_TAIL
    _start: bytearray = field(default_factory=bytearray, repr=False)
    _end: bytearray = field(default_factory=bytearray, repr=False)
    _dropped: int = 0

    def extend(self, data: bytes) -> None:
        """Take the next chunk of output."""
        room = self.head - len(self._start)
        if room > 0:
            self._start += data[:room]
            data = data[room:]
        if not data:
            return
        self._end += data
        if len(self._end) > 2 * self.tail:  # trimmed now and then: amortised O(1) per byte
            over = len(self._end) - self.tail
            del self._end[:over]
            self._dropped += over

    @property
    def cut(self) -> int:
        """Bytes of output not kept."""
        return self._dropped + max(0, len(self._end) - self.tail)

    def kept(self) -> bytes:
        """The head, then a line saying how much was cut (when any), then the tail."""
        end = bytes(self._end[-self.tail :]) if self.tail else b""
        if not self.cut:
            return bytes(self._start) + bytes(self._end)
        note = f"\n{cut_note(self.cut)}\n".encode()
        return bytes(self._start) + note + end


@dataclass
class LineCap:
    """Lines passed on to ``forward`` while ``head`` bytes last; after that the last ``tail``
    bytes of lines are held back and passed on by :meth:`close`, after a line saying the cut.

    Each line costs ``overhead`` bytes more than its length: a log line carries a time stamp and
    a prefix, so a million short lines would otherwise still fill the log."""

    forward: Callable[[bytes], None]
    head: int = KEEP_HEAD
    tail: int = KEEP_TAIL
    overhead: int = 0
    _sent: int = 0
    _held: deque[bytes] = field(default_factory=deque, repr=False)
    _held_bytes: int = 0
    _cut: int = 0

    def __call__(self, line: bytes) -> None:
        """Take one line of output."""
        cost = len(line) + self.overhead
        if self._sent + cost <= self.head and not self._held:
            self._sent += cost
            self.forward(line)
            return
        held = line[: max(0, self.tail - self.overhead)]
        self._held.append(held)
        self._cut += len(line) - len(held)
        self._held_bytes += len(held) + self.overhead
        while self._held_bytes > self.tail and self._held:
            gone = self._held.popleft()
            self._held_bytes -= len(gone) + self.overhead
            self._cut += len(gone)

    def close(self) -> None:
        """Pass on the held tail, after a line saying how much was cut."""
        if self._cut:
            self.forward(f"{cut_note(self._cut)}\n".encode())
        while self._held:
            self.forward(self._held.popleft())
        self._held_bytes = self._cut = 0
