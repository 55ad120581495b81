"""The template hook ``bash-guard.py``, written from the one Bash deny-list core.

The script must run with a bare ``python3`` in any project, so it cannot import forgeflare:
``forgeflare init`` writes it with a copy of the code between the ``guard core`` markers of
``forgeflare/agent/tools/_guard.py`` (:func:`render_guard_script`). The package ships the
script with those markers only, so the core exists once in the source.
"""

from __future__ import annotations

from pathlib import Path

from forgeflare.agent.tools import _guard

__all__ = ["GUARD_SCRIPT", "GUARD_SCRIPT_NAME", "guard_core", "render_guard_script"]

BEGIN = "# --- guard core begin ---\n"
END = "# --- guard core end ---\n"
GUARD_SCRIPT_NAME = "bash-guard.py"
GUARD_SCRIPT = Path(__file__).parent / "files" / "dot-forgeflare" / "hooks" / GUARD_SCRIPT_NAME
"""The shipped template (markers only); ``init`` writes :func:`render_guard_script` of it."""


def _between(text: str, where: str) -> tuple[int, int]:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{where} has no '{BEGIN.strip()}' ... '{END.strip()}' markers")
    return start + len(BEGIN), end


def guard_core() -> str:
    """The deny-list core's source: the lines between the markers of ``_guard.py``."""
    text = Path(_guard.__file__).read_text(encoding="utf-8")
    start, end = _between(text, "_guard.py")
    return text[start:end]


def render_guard_script(script: str) -> str:
    """``script`` with the text between its markers replaced by the current core."""
    start, end = _between(script, "bash-guard.py")
    return script[:start] + guard_core() + script[end:]
