"""The hook layer's part of ``convergence.json``: recording PostToolUse observations.

The file's contract (the ``final`` record, reading and writing it) lives in
:mod:`forgeflare._convergence`; the names re-exported here keep ``forgeflare.hooks``'s
public names working.
"""

from __future__ import annotations

from pathlib import Path

from forgeflare._convergence import (
    CONVERGENCE_RELPATH,
    ConvergenceError,
    ConvergenceState,
    Final,
    Observation,
    clear_convergence,
    convergence_path,
    load_for_update,
    read_convergence,
    write_final,
)
from forgeflare._fsutil import atomic_write_text

__all__ = [
    "CONVERGENCE_RELPATH",
    "ConvergenceError",
    "ConvergenceState",
    "Final",
    "Observation",
    "append_observations",
    "clear_convergence",
    "convergence_path",
    "read_convergence",
    "write_final",
]


def append_observations(path: Path, observations: list[Observation]) -> None:
    """One read-modify-write that appends ``observations``. Raises ``OSError`` on failure."""
    state = load_for_update(path)
    state.observations.extend(observations)
    atomic_write_text(path, state.model_dump_json(indent=2) + "\n")
