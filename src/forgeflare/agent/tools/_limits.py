"""What each tool gives back at most and how long it may take: the limits the tool
descriptions (:mod:`._inputs`) tell the model, in one place.

Read and Edit share the file size; the search tools share the shape (entries returned, then
the time a search may take).
"""

from __future__ import annotations

__all__ = [
    "BASH_TIMEOUT",
    "GLOB_TIMEOUT",
    "GREP_TIMEOUT",
    "MAX_BASH_OUTPUT",
    "MAX_EDIT_BYTES",
    "MAX_GLOB_ENTRIES",
    "MAX_GLOB_SCAN",
    "MAX_GREP_MATCHES",
    "MAX_READ_BYTES",
]

MAX_READ_BYTES = 1024 * 1024
"""Files larger than this (1 MB) are refused by Read and Edit: they would flood the context
window."""

MAX_EDIT_BYTES = 100 * 1024
"""Largest ``old_str`` or ``new_str`` of an Edit (100 KB, UTF-8 encoded)."""

BASH_TIMEOUT = 120.0
"""Seconds a command may run before its process group is killed."""

MAX_BASH_OUTPUT = 100 * 1024
"""Characters of output sent to the model (head and tail kept, the middle elided)."""

MAX_GLOB_ENTRIES = 1000
"""At most this many paths are returned; the result says how many more matched."""

MAX_GLOB_SCAN = 200_000
"""At most this many directory entries are looked at; the result says the search stopped."""

GLOB_TIMEOUT = 20.0
"""Seconds a Glob search may take before it stops with what it found so far."""

MAX_GREP_MATCHES = 50
"""At most this many matching lines are returned; the result says how many there were."""

GREP_TIMEOUT = 60.0
"""Seconds a Grep search may take before it is stopped."""
