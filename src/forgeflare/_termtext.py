"""Text from a record or a project made safe for a terminal.

A run's records hold what the agent, a hook or a repository wrote; a terminal obeys escape
sequences in what it prints: OSC 52 writes the clipboard, OSC 0/2 the window title, CSI moves
the cursor and erases lines, a carriage return overprints. Bidi controls (U+202E and kin)
reorder what the reader sees, so a trusted command can read as another. Everything that prints
such text (``report``, ``runs``, ``watch``, ``stop-hook status``, ``trust --show``, the loop's
lines) passes it through :func:`for_terminal` first: escape sequences are dropped whole,
other control characters dropped, bidi controls shown as a visible ``<U+202E>`` marker.
"""

from __future__ import annotations

import re

__all__ = ["for_terminal"]

_ESCAPE_SEQUENCE = re.compile(
    # A string command (OSC, DCS, SOS, PM, APC: ESC ] P X ^ _ or their C1 forms) runs to its
    # terminator (BEL or ST), or to the next ESC or the end when a hostile one has none.
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    # CSI: parameters, intermediates, a final byte (ESC [ or C1 0x9b).
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # Any other escape: intermediates and a final byte, or a lone ESC.
    r"|\x1b[ -/]*[0-~]?"
)
# C0 but tab and newline, DEL, C1: what is left once the sequences are gone.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _marker(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def for_terminal(text: str) -> str:
    """``text`` without escape sequences or control characters (tab and newline stay; CRLF
    reads as a newline), bidi controls shown as ``<U+XXXX>``."""
    text = _ESCAPE_SEQUENCE.sub("", text).replace("\r\n", "\n")
    return _BIDI.sub(_marker, _CONTROL.sub("", text))
