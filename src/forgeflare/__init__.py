"""forgeflare: a toolkit for Ralph loops.

The package holds four parts, each a subpackage: ``agent`` (the coding agent behind
``forgeflare run``), ``hooks`` (the in-process hook layer), ``supervisor`` (``forgeflare loop``
and ``forgeflare stop-hook``), ``templates`` (``forgeflare init``), plus ``mockapi``, a scripted
Anthropic Messages API used by the demo and the tests.
"""

from forgeflare._errors import ConfigError, ForgeflareError

__version__ = "0.2.0"

__all__ = ["ConfigError", "ForgeflareError", "__version__"]
