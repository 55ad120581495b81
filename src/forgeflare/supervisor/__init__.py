"""The loop supervisor (``forgeflare loop``): iterations, gates, finish rules and run records.

Errors of this part: ``ConfigError`` (a bad setting, names key and source) and
:class:`RecordError` (a run record cannot be written or read; a ``ForgeflareError``).
"""

from forgeflare.supervisor._agentproc import ChildResult, StopControl, exit_status, supervise
from forgeflare.supervisor._config import (
    AgentSection,
    FresherSection,
    HooksSection,
    LimitsSection,
    LoadedConfig,
    LoopConfig,
    PathsSection,
    default_config_toml,
    default_prompt,
    load_config,
    parse_duration,
)
from forgeflare.supervisor._display import Display
from forgeflare.supervisor._finish import (
    FINISH_EXIT_CODES,
    Continue,
    Decision,
    FinishType,
    IterationOutcome,
    Limits,
    Streaks,
    check_limits,
    count_unchecked,
    decide,
)
from forgeflare.supervisor._lifecycle import (
    HookContext,
    HookResult,
    HookStatus,
    hook_env,
    run_hook,
)
from forgeflare.supervisor._loop import LoopOptions, LoopResult, run_loop
from forgeflare.supervisor._records import RecordError, RunRecord

__all__ = [
    "FINISH_EXIT_CODES",
    "AgentSection",
    "ChildResult",
    "Continue",
    "Decision",
    "Display",
    "FinishType",
    "FresherSection",
    "HookContext",
    "HookResult",
    "HookStatus",
    "HooksSection",
    "IterationOutcome",
    "Limits",
    "LimitsSection",
    "LoadedConfig",
    "LoopConfig",
    "LoopOptions",
    "LoopResult",
    "PathsSection",
    "RecordError",
    "RunRecord",
    "StopControl",
    "Streaks",
    "check_limits",
    "count_unchecked",
    "decide",
    "default_config_toml",
    "default_prompt",
    "exit_status",
    "hook_env",
    "load_config",
    "parse_duration",
    "run_hook",
    "run_loop",
    "supervise",
]
