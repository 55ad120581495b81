"""Where a mock server listens and how it says so: the address, the port file and the record.

Both protocols' servers (:mod:`._server`, :mod:`._responses`) take one :class:`Listen`, as the
CLI's ``--host``, ``--port``, ``--port-file`` and ``--record`` give it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forgeflare.disk import atomic_write_text
from forgeflare.mockapi._errors import MockAPIError

__all__ = ["Listen", "write_port_file"]


@dataclass(frozen=True)
class Listen:
    """``host`` and ``port`` (0: a free one) to listen on; ``port_file`` gets the bound port
    once the socket listens; ``record`` one JSON line per request, written before the reply."""

    host: str = "127.0.0.1"
    port: int = 0
    port_file: Path | None = None
    record: Path | None = None


def write_port_file(port_file: Path, port: int) -> None:
    """Write the bound ``port`` to ``port_file`` atomically (one line); MockAPIError if not."""
    try:
        atomic_write_text(port_file, f"{port}\n")
    except OSError as exc:
        raise MockAPIError(f"cannot write port file {port_file}: {exc.strerror or exc}") from exc
