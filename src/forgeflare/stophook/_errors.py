"""Errors of ``forgeflare stop-hook``.

Exception tree (below :class:`forgeflare.ForgeflareError`)::

    StopHookError                  any failure of the stop-hook commands
    ├── LoopStateError             the loop state file cannot be used for the asked command
    ├── StateLockTimeout           another process held the state lock for too long
    ├── TranscriptError            the transcript named by Claude Code cannot be read
    └── SettingsFileError          .claude/settings.json is not JSON of the expected shape
                                   (also a ConfigError: the user's file is wrong)

The hook itself never lets one of these escape: it fails open (exit 0, one note on stderr).
"""

from __future__ import annotations

from forgeflare._errors import ConfigError, ForgeflareError

__all__ = [
    "LoopStateError",
    "SettingsFileError",
    "StateLockTimeout",
    "StopHookError",
    "TranscriptError",
]


class StopHookError(ForgeflareError):
    """A ``forgeflare stop-hook`` command failed."""


class LoopStateError(StopHookError):
    """The loop state exists but cannot serve the command (corrupted, or a foreign loop)."""


class StateLockTimeout(StopHookError):
    """The state lock stayed taken past the deadline (another process hangs holding it)."""


class TranscriptError(StopHookError):
    """The transcript file could not be opened or read (not: it holds no assistant text)."""


class SettingsFileError(StopHookError, ConfigError):
    """``.claude/settings.json`` is not valid JSON, or its ``hooks`` part has the wrong shape."""
