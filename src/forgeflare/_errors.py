"""The root of every error forgeflare raises on purpose.

Exception tree (each part adds its own branch below the root; the CLI turns any
``ForgeflareError`` into one line on stderr and its ``exit_code``)::

    ForgeflareError
    ├── ConfigError                a user's file, flag or environment variable is wrong
    ├── agent.APIError             the Messages API failed (see forgeflare.agent)
    ├── hooks.HookConfigError      hooks.toml is malformed (a ConfigError)
    └── ...                        further branches are documented in each subpackage
"""

from __future__ import annotations

__all__ = ["ConfigError", "ForgeflareError"]


class ForgeflareError(Exception):
    """Base class of the errors forgeflare raises on purpose.

    ``exit_code`` is the process exit status the CLI uses when this error ends a command.
    """

    exit_code: int = 1


class ConfigError(ForgeflareError):
    """A setting given by the user is invalid: the message names the key and where it came from."""

    exit_code = 2
