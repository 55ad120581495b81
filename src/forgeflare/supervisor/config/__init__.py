"""The loop's settings and what it would run from a project.

``.fresher/config.toml``, ``FRESHER_*`` variables and flags read into one :class:`LoopConfig`
(:func:`load_config`; a bad value is a ``ConfigError`` naming key and source), what
``forgeflare loop`` was asked (:class:`LoopOptions`), the sandbox settings
(:func:`box_settings`), and the project files a loop would run, for trust
(:func:`loop_trust_items`).
"""

from forgeflare.supervisor.config._config import BackendName
from forgeflare.supervisor.config._config import FresherSection
from forgeflare.supervisor.config._config import LimitsSection
from forgeflare.supervisor.config._config import LoadedConfig
from forgeflare.supervisor.config._config import LoopConfig
from forgeflare.supervisor.config._config import bounds_words
from forgeflare.supervisor.config._config import box_settings
from forgeflare.supervisor.config._config import default_config_toml
from forgeflare.supervisor.config._config import default_prompt
from forgeflare.supervisor.config._config import format_duration
from forgeflare.supervisor.config._config import load_config
from forgeflare.supervisor.config._config import parse_duration
from forgeflare.supervisor.config._config import parse_on_blocked
from forgeflare.supervisor.config._options import LoopOptions
from forgeflare.supervisor.config._trust import hooks_modules
from forgeflare.supervisor.config._trust import loop_trust_items
from forgeflare.supervisor.config._trust import security_defaults

__all__ = [
    "BackendName",
    "FresherSection",
    "LimitsSection",
    "LoadedConfig",
    "LoopConfig",
    "LoopOptions",
    "bounds_words",
    "box_settings",
    "default_config_toml",
    "default_prompt",
    "format_duration",
    "hooks_modules",
    "load_config",
    "loop_trust_items",
    "parse_duration",
    "parse_on_blocked",
    "security_defaults",
]
