"""The quick Stop: the two Stops that happen thousands of times a day, decided without loading
the state machine, ``typing`` or ``pathlib``.

- **No loop in the project** (every Stop of every session anywhere else): the stop is allowed,
  silently, or with one line when the project carries a 0.3 state file (never acted on).
- **A running loop whose final message claims nothing**: the next iteration, blocked with the
  continuation, exactly as :func:`~._machine.transition` answers it (a property test holds the
  two equal on generated states and messages).

The second is :mod:`._quickloop`, loaded only when the project has a loop: the first costs
``json`` and ``os``.

Anything else (a tag in the message, a parked, stale, finished or corrupted state, another
session's frame, refused claims on record, a transcript that does not hold the turn's final
message yet, input that needs ``_damaged``) returns ``None``, and the full hook (``_hook``)
decides. So this module can only be faster than the full hook, never different.
"""

from __future__ import annotations

import json
import os

from forgeflare.stophook._stopio import DISABLE_ENV, Quick, allow_line
from forgeflare.stophook._where import (
    DISABLE_FILE,
    legacy_files,
    legacy_note,
    project_of,
    state_file,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (mypy treats any TYPE_CHECKING as true)
    from collections.abc import Mapping
    from datetime import datetime

__all__ = ["quick_stop"]


def quick_stop(
    stdin_text: str, *, environ: Mapping[str, str], cwd: str, now: datetime | None = None
) -> Quick | None:
    """The hook's answer to this Stop when it is one of the two quick ones, else ``None``.

    ``now`` (timezone-aware; default: the clock's) matters only when a loop is running.
    """
    if environ.get(DISABLE_ENV) == "1":
        return 0, "", ""
    if "\\u" in stdin_text:
        return None  # an escape that may spell a lone surrogate: _damaged's reading
    try:
        payload = json.loads(stdin_text) if stdin_text.strip() else {}
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict) or payload.get("hook_event_name", "Stop") != "Stop":
        return None
    project = project_of(payload, cwd)
    if os.path.exists(os.path.join(project, DISABLE_FILE)):
        return 0, "", ""
    state = state_file(project)
    if not os.path.exists(state):
        # A state file in the project is a clone's, maybe a hostile one: never acted on.
        old = legacy_files(project)
        return 0, "", allow_line(legacy_note(old[0])) if old else ""
    # Only now the rest: no loop here (nearly every Stop) needs no more than json and os.
    from forgeflare.stophook._quickloop import next_iteration

    return next_iteration(state, payload, now)
