"""forgeflare: a toolkit for Ralph loops.

Each part is a subpackage: ``agent`` (the coding agent behind ``forgeflare run``), ``hooks``
(the in-process hook layer), ``supervisor`` (``forgeflare loop``), ``stophook`` (``forgeflare
stop-hook``, Claude Code's Stop hook), ``templates`` (``forgeflare init``), ``report``,
``fleet``, plus ``mockapi``, a scripted Anthropic Messages API used by the demo and the tests.
"""

from forgeflare._errors import ConfigError, ForgeflareError

__version__ = "0.2.0"

__all__ = ["ConfigError", "ForgeflareError", "__version__"]
