"""The hook layer's part of ``convergence.json``: recording PostToolUse observations.

The file's contract (the ``final`` record, reading and writing it) lives on neutral ground in
:mod:`forgeflare._convergence`, which the agent and the supervisor import directly.
"""

from __future__ import annotations

from pathlib import Path

from forgeflare._convergence import Observation, load_for_update
from forgeflare._fsutil import atomic_write_text

__all__ = ["append_observations"]


def append_observations(path: Path, observations: list[Observation]) -> None:
    """One read-modify-write that appends ``observations``. Raises ``OSError`` on failure."""
    state = load_for_update(path)
    state.observations.extend(observations)
    atomic_write_text(path, state.model_dump_json(indent=2) + "\n")
