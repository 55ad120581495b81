"""The loop supervisor (``forgeflare loop``): iterations, gates, finish rules and run records.

Its rooms, each with its own face: ``agents`` (which agent runs next, its process and key),
``config`` (settings and what a loop would run, for trust), ``records`` (run records, runs
read back, display, notifications), ``evidence`` (git facts, delivery, the reviewer, the
finish and wait rules), ``run`` (the loop and its parts, its commands) and ``backends`` (each
agent CLI). This face holds what the rest of forgeflare and a user need: run a loop, read
its settings and records, stop it. Errors of this part: ``ConfigError`` (a bad setting,
names key and source) and :class:`RecordError` (a run record cannot be written or read).
"""

from forgeflare.supervisor.agents import read_windows
from forgeflare.supervisor.agents import window_store_path
from forgeflare.supervisor.config import BackendName
from forgeflare.supervisor.config import LoopConfig
from forgeflare.supervisor.config import LoopOptions
from forgeflare.supervisor.config import box_settings
from forgeflare.supervisor.config import default_config_toml
from forgeflare.supervisor.config import default_prompt
from forgeflare.supervisor.config import load_config
from forgeflare.supervisor.config import loop_trust_items
from forgeflare.supervisor.config import parse_duration
from forgeflare.supervisor.records import IterationRecord
from forgeflare.supervisor.records import IterationRow
from forgeflare.supervisor.records import RecordError
from forgeflare.supervisor.records import RunRecord
from forgeflare.supervisor.records import RunStore
from forgeflare.supervisor.records import Totals
from forgeflare.supervisor.records import finish_reason
from forgeflare.supervisor.records import iteration_rows
from forgeflare.supervisor.records import list_runs
from forgeflare.supervisor.records import newest_run
from forgeflare.supervisor.records import read_run
from forgeflare.supervisor.records import runs_root
from forgeflare.supervisor.evidence import FINISH_EXIT_CODES
from forgeflare.supervisor.evidence import GitResult
from forgeflare.supervisor.evidence import run_git
from forgeflare.supervisor.run import LOCK_RELPATH
from forgeflare.supervisor.run import lock_holder
from forgeflare.supervisor.run import request_stop
from forgeflare.supervisor.run import run_loop

__all__ = [
    "FINISH_EXIT_CODES",
    "LOCK_RELPATH",
    "BackendName",
    "GitResult",
    "IterationRecord",
    "IterationRow",
    "LoopConfig",
    "LoopOptions",
    "RecordError",
    "RunRecord",
    "RunStore",
    "Totals",
    "box_settings",
    "default_config_toml",
    "default_prompt",
    "finish_reason",
    "iteration_rows",
    "list_runs",
    "load_config",
    "lock_holder",
    "loop_trust_items",
    "newest_run",
    "parse_duration",
    "read_run",
    "read_windows",
    "request_stop",
    "run_git",
    "run_loop",
    "runs_root",
    "window_store_path",
]
