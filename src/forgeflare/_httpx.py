"""``httpx`` without its command-line tool.

httpx imports its CLI (click, rich, pygments) whenever they are installed, as they are here;
forgeflare never runs it, and it cost every agent start ~50 ms of CPU, once per iteration. A
``None`` entry makes that optional import fail the way httpx expects when they are missing.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx  # noqa: E402

__all__ = ["httpx"]
