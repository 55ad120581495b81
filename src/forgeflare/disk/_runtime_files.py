"""The files forgeflare writes while it runs: nobody should commit them.

``init`` puts these patterns in the project's ``.gitignore``; a fleet adds them to the
repository's ``info/exclude`` too, so an agent's ``git add -A`` in a fleet worktree never
commits a loop's lock or records (two loops committing ``.fresher/loop.lock`` conflict when
the second lands).
"""

from __future__ import annotations

__all__ = ["RUNTIME_PATTERNS", "WRITTEN_FOLDERS"]

RUNTIME_PATTERNS: tuple[str, ...] = (
    ".forgeflare/convergence.json",
    ".forgeflare/convergence.json.tmp",
    ".forgeflare/*.log",
    ".forgeflare/loop-state.*",
    ".fresher/runs/",
    ".fresher/loop.lock",
    ".fresher/stop-request",
    ".fresher/stop-request.tmp",
    ".entire/",
    ".forgeflare-fleet/",
)
"""gitignore patterns of every file written at run time (each one is in the docs' files
table)."""

WRITTEN_FOLDERS: tuple[str, ...] = (".fresher", ".forgeflare", ".entire")
"""The project folders forgeflare writes in (besides ``[paths] log_dir``): checked at the start
of ``loop`` and ``run`` to stay inside the project after following links."""
