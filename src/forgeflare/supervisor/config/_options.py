"""What ``forgeflare loop`` was asked to do (the loop and its parts read it)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgeflare.supervisor.config._config import LoopConfig

__all__ = ["LoopOptions"]


@dataclass
class LoopOptions:
    """What ``forgeflare loop`` was asked to do."""

    project_dir: Path
    config: LoopConfig = field(default_factory=LoopConfig)
    resume: bool = False
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = sys.executable
    warnings: list[str] = field(default_factory=list)
    task: str | None = None
    """A fleet loop's task: put first in the prompt of every iteration."""
    trust_project: bool = False
    """``--trust-project``: run the project's hooks without a recorded trust."""
    pass_env: Sequence[str] = ()
    """Secret-looking variables to pass to hooks and tools anyway (``--pass-env``)."""
    raw: bool = False
    """Show the agent's output as it is (``--raw``), not as the backend reads it."""
    project_command: bool = True
    """The agent command came from the project's config.toml (so trust covers it)."""
