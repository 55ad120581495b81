"""Errors of the mock API server (the ``MockAPIError`` branch of ``ForgeflareError``)."""

from __future__ import annotations

from forgeflare._errors import ConfigError, ForgeflareError

__all__ = ["MockAPIError", "MockListenError", "MockScriptError"]


class MockAPIError(ForgeflareError):
    """The mock API server could not do what it was asked."""


class MockScriptError(MockAPIError, ConfigError):
    """The script file is missing, unreadable, not JSON/TOML, or does not match the schema.

    The message names the file and the first problem (with its location in the script).
    """


class MockListenError(MockAPIError):
    """The server could not bind its listening socket (address in use, bad host, ...)."""
