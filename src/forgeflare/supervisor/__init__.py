"""The loop supervisor (``forgeflare loop``): iterations, gates, finish rules and run records.

Its rooms, each with its own face: ``agents`` (which agent runs next, its process and key),
``config`` (settings and what a loop would run, for trust), ``records`` (run records, runs
read back, display, notifications), ``evidence`` (git facts, delivery, the reviewer, the
finish and wait rules), ``run`` (the loop and its parts, its commands) and ``backends`` (each
agent CLI). This face holds what the rest of forgeflare and a user need: run a loop, read
its settings and records, stop it. Errors of this part: ``ConfigError`` (a bad setting,
names key and source) and :class:`RecordError` (a run record cannot be written or read).
The names load on first use (PEP 562): a command that reads records does not load the loop.
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

TYPE_CHECKING = False  # not typing's: as the other lazy faces
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.supervisor.agents import read_windows as read_windows
    from forgeflare.supervisor.agents import window_store_path as window_store_path
    from forgeflare.supervisor.config import BackendName as BackendName
    from forgeflare.supervisor.config import LoopConfig as LoopConfig
    from forgeflare.supervisor.config import LoopOptions as LoopOptions
    from forgeflare.supervisor.config import box_settings as box_settings
    from forgeflare.supervisor.config import default_config_toml as default_config_toml
    from forgeflare.supervisor.config import default_prompt as default_prompt
    from forgeflare.supervisor.config import load_config as load_config
    from forgeflare.supervisor.config import loop_trust_items as loop_trust_items
    from forgeflare.supervisor.config import parse_duration as parse_duration
    from forgeflare.supervisor.records import IterationRecord as IterationRecord
    from forgeflare.supervisor.records import IterationRow as IterationRow
    from forgeflare.supervisor.records import RecordError as RecordError
    from forgeflare.supervisor.records import RunRecord as RunRecord
    from forgeflare.supervisor.records import RunStore as RunStore
    from forgeflare.supervisor.records import Totals as Totals
    from forgeflare.supervisor.records import finish_reason as finish_reason
    from forgeflare.supervisor.records import iteration_rows as iteration_rows
    from forgeflare.supervisor.records import list_runs as list_runs
    from forgeflare.supervisor.records import newest_run as newest_run
    from forgeflare.supervisor.records import read_run as read_run
    from forgeflare.supervisor.records import runs_root as runs_root
    from forgeflare.supervisor.evidence import FINISH_EXIT_CODES as FINISH_EXIT_CODES
    from forgeflare.supervisor.evidence import GitResult as GitResult
    from forgeflare.supervisor.evidence import run_git as run_git
    from forgeflare.supervisor.run import LOCK_RELPATH as LOCK_RELPATH
    from forgeflare.supervisor.run import lock_holder as lock_holder
    from forgeflare.supervisor.run import request_stop as request_stop
    from forgeflare.supervisor.run import run_loop as run_loop

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    agents="read_windows window_store_path",
    config=(
        "BackendName LoopConfig LoopOptions box_settings default_config_toml default_prompt"
        " load_config loop_trust_items parse_duration"
    ),
    records=(
        "IterationRecord IterationRow RecordError RunRecord RunStore Totals finish_reason"
        " iteration_rows list_runs newest_run read_run runs_root"
    ),
    evidence="FINISH_EXIT_CODES GitResult run_git",
    run="LOCK_RELPATH lock_holder request_stop run_loop",
)
