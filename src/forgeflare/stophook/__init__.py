"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_stop_hook` is the shell Claude Code's Stop hook runs.

The names load on first use (PEP 562): Claude Code runs the hook at every Stop of every
session, and its process (``_entry``) must not pay for the gate, the reviewer, the installer
and the CLI helpers that importing them all here would load.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the hook's process does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.stophook._answer import answer_loop as answer_loop
    from forgeflare.stophook._answer import answer_text as answer_text
    from forgeflare.stophook._answer import parked_lines as parked_lines
    from forgeflare.stophook._answer import waiting_question as waiting_question
    from forgeflare.stophook._check import Checked as Checked
    from forgeflare.stophook._check import GATE_TIMEOUT_S as GATE_TIMEOUT_S
    from forgeflare.stophook._check import PLAN_FILE as PLAN_FILE
    from forgeflare.stophook._check import REVIEW_TIMEOUT_S as REVIEW_TIMEOUT_S
    from forgeflare.stophook._check import check_claim as check_claim
    from forgeflare.stophook._check import diff_since as diff_since
    from forgeflare.stophook._check import head_commit as head_commit
    from forgeflare.stophook._check import review_claim as review_claim
    from forgeflare.stophook._check import run_gate as run_gate
    from forgeflare.stophook._claims import ClaimNote as ClaimNote
    from forgeflare.stophook._claims import REVIEWS_RELPATH as REVIEWS_RELPATH
    from forgeflare.stophook._claims import ReviewNote as ReviewNote
    from forgeflare.stophook._claims import claim_from_json as claim_from_json
    from forgeflare.stophook._claims import claim_to_json as claim_to_json
    from forgeflare.stophook._claims import describe_claim as describe_claim
    from forgeflare.stophook._claims import gate_refused as gate_refused
    from forgeflare.stophook._claims import reviewer_refused as reviewer_refused
    from forgeflare.stophook._completion import RULE as RULE
    from forgeflare.stophook._completion import completion_hint as completion_hint
    from forgeflare.stophook._completion import judged_text as judged_text
    from forgeflare.stophook._errors import LoopStateError as LoopStateError
    from forgeflare.stophook._errors import SettingsFileError as SettingsFileError
    from forgeflare.stophook._errors import StateLockTimeout as StateLockTimeout
    from forgeflare.stophook._errors import StopHookError as StopHookError
    from forgeflare.stophook._errors import TranscriptError as TranscriptError
    from forgeflare.stophook._hook import DISABLE_ENV as DISABLE_ENV
    from forgeflare.stophook._hook import DISABLE_FILE as DISABLE_FILE
    from forgeflare.stophook._hook import StopHookOutcome as StopHookOutcome
    from forgeflare.stophook._hook import run_stop_hook as run_stop_hook
    from forgeflare.stophook._install import DEFAULT_COMMAND as DEFAULT_COMMAND
    from forgeflare.stophook._install import HOOK_TIMEOUT_S as HOOK_TIMEOUT_S
    from forgeflare.stophook._install import PORTABLE_COMMAND as PORTABLE_COMMAND
    from forgeflare.stophook._install import PORTABLE_RELPATH as PORTABLE_RELPATH
    from forgeflare.stophook._install import PORTABLE_SCRIPT as PORTABLE_SCRIPT
    from forgeflare.stophook._install import SETTINGS_RELPATH as SETTINGS_RELPATH
    from forgeflare.stophook._install import command_problem as command_problem
    from forgeflare.stophook._continuation import continue_output as continue_output
    from forgeflare.stophook._continuation import continued as continued
    from forgeflare.stophook._install import forgeflare_command as forgeflare_command
    from forgeflare.stophook._install import hook_command as hook_command
    from forgeflare.stophook._install import install_hook as install_hook
    from forgeflare.stophook._install import is_stop_hook_command as is_stop_hook_command
    from forgeflare.stophook._install import merge_stop_hook as merge_stop_hook
    from forgeflare.stophook._install import write_portable_wrapper as write_portable_wrapper
    from forgeflare.stophook._lag import DEFAULT_WAIT_MS as DEFAULT_WAIT_MS
    from forgeflare.stophook._lag import Reading as Reading
    from forgeflare.stophook._lag import WAIT_ENV as WAIT_ENV
    from forgeflare.stophook._lag import read_settled as read_settled
    from forgeflare.stophook._lag import settled as settled
    from forgeflare.stophook._lag import wait_seconds as wait_seconds
    from forgeflare.stophook._loops import cancel_loops as cancel_loops
    from forgeflare.stophook._loops import describe_state as describe_state
    from forgeflare.stophook._loops import loop_status as loop_status
    from forgeflare.stophook._loops import start_loop as start_loop
    from forgeflare.stophook._machine import ANSWER_HOW as ANSWER_HOW
    from forgeflare.stophook._machine import BLOCK_MESSAGE as BLOCK_MESSAGE
    from forgeflare.stophook._machine import Corrupt as Corrupt
    from forgeflare.stophook._machine import Event as Event
    from forgeflare.stophook._machine import Frame as Frame
    from forgeflare.stophook._machine import LoopRecord as LoopRecord
    from forgeflare.stophook._machine import Phase as Phase
    from forgeflare.stophook._machine import Refusal as Refusal
    from forgeflare.stophook._machine import STALE_AFTER as STALE_AFTER
    from forgeflare.stophook._machine import StopDecision as StopDecision
    from forgeflare.stophook._machine import StoredState as StoredState
    from forgeflare.stophook._machine import block_reason as block_reason
    from forgeflare.stophook._machine import claimed as claimed
    from forgeflare.stophook._machine import push_frame as push_frame
    from forgeflare.stophook._machine import record_answer as record_answer
    from forgeflare.stophook._machine import transition as transition
    from forgeflare.stophook._plugin import LoopArgs as LoopArgs
    from forgeflare.stophook._plugin import PLUGIN_FILES as PLUGIN_FILES
    from forgeflare.stophook._plugin import default_plugin_dir as default_plugin_dir
    from forgeflare.stophook._plugin import install_plugin as install_plugin
    from forgeflare.stophook._plugin import parse_loop_args as parse_loop_args
    from forgeflare.stophook._plugin import plugin_files as plugin_files
    from forgeflare.stophook._signals import Mode as Mode
    from forgeflare.stophook._signals import SIGNALS as SIGNALS
    from forgeflare.stophook._signals import find_signal as find_signal
    from forgeflare.stophook._statefile import JSON_STATE_RELPATH as JSON_STATE_RELPATH
    from forgeflare.stophook._statefile import LEGACY_RELPATHS as LEGACY_RELPATHS
    from forgeflare.stophook._statefile import LOCK_TIMEOUT_S as LOCK_TIMEOUT_S
    from forgeflare.stophook._statefile import MARKDOWN_STATE_RELPATH as MARKDOWN_STATE_RELPATH
    from forgeflare.stophook._statefile import SCHEMA_VERSION as SCHEMA_VERSION
    from forgeflare.stophook._statefile import STATE_DIRNAME as STATE_DIRNAME
    from forgeflare.stophook._statefile import StateSession as StateSession
    from forgeflare.stophook._statefile import any_state as any_state
    from forgeflare.stophook._statefile import legacy_note as legacy_note
    from forgeflare.stophook._statefile import legacy_states as legacy_states
    from forgeflare.stophook._statefile import open_json_state as open_json_state
    from forgeflare.stophook._statefile import open_state as open_state
    from forgeflare.stophook._statefile import parse_json_state as parse_json_state
    from forgeflare.stophook._statefile import parse_timestamp as parse_timestamp
    from forgeflare.stophook._statefile import render_json_state as render_json_state
    from forgeflare.stophook._statefile import state_home as state_home
    from forgeflare.stophook._statefile import state_lock as state_lock
    from forgeflare.stophook._statefile import state_name as state_name
    from forgeflare.stophook._statefile import state_path as state_path
    from forgeflare.stophook._transcript import FinalMessage as FinalMessage
    from forgeflare.stophook._transcript import assistant_text_of as assistant_text_of
    from forgeflare.stophook._transcript import final_message as final_message
    from forgeflare.stophook._transcript import final_message_if_written as final_message_if_written
    from forgeflare.stophook._transcript import last_assistant_text as last_assistant_text

_WHERE = {
    "ANSWER_HOW": "_machine",
    "BLOCK_MESSAGE": "_machine",
    "DEFAULT_COMMAND": "_install",
    "DEFAULT_WAIT_MS": "_lag",
    "DISABLE_ENV": "_hook",
    "DISABLE_FILE": "_hook",
    "GATE_TIMEOUT_S": "_check",
    "HOOK_TIMEOUT_S": "_install",
    "JSON_STATE_RELPATH": "_statefile",
    "LEGACY_RELPATHS": "_statefile",
    "LOCK_TIMEOUT_S": "_statefile",
    "MARKDOWN_STATE_RELPATH": "_statefile",
    "PLAN_FILE": "_check",
    "PLUGIN_FILES": "_plugin",
    "PORTABLE_COMMAND": "_install",
    "PORTABLE_RELPATH": "_install",
    "PORTABLE_SCRIPT": "_install",
    "REVIEWS_RELPATH": "_claims",
    "REVIEW_TIMEOUT_S": "_check",
    "RULE": "_completion",
    "SCHEMA_VERSION": "_statefile",
    "SETTINGS_RELPATH": "_install",
    "SIGNALS": "_signals",
    "STALE_AFTER": "_machine",
    "STATE_DIRNAME": "_statefile",
    "WAIT_ENV": "_lag",
    "Checked": "_check",
    "ClaimNote": "_claims",
    "Corrupt": "_machine",
    "Event": "_machine",
    "FinalMessage": "_transcript",
    "Frame": "_machine",
    "LoopArgs": "_plugin",
    "LoopRecord": "_machine",
    "LoopStateError": "_errors",
    "Mode": "_signals",
    "Phase": "_machine",
    "Reading": "_lag",
    "Refusal": "_machine",
    "ReviewNote": "_claims",
    "SettingsFileError": "_errors",
    "StateLockTimeout": "_errors",
    "StateSession": "_statefile",
    "StopDecision": "_machine",
    "StopHookError": "_errors",
    "StopHookOutcome": "_hook",
    "StoredState": "_machine",
    "TranscriptError": "_errors",
    "answer_loop": "_answer",
    "answer_text": "_answer",
    "any_state": "_statefile",
    "assistant_text_of": "_transcript",
    "block_reason": "_machine",
    "cancel_loops": "_loops",
    "check_claim": "_check",
    "claim_from_json": "_claims",
    "claim_to_json": "_claims",
    "claimed": "_machine",
    "command_problem": "_install",
    "continue_output": "_continuation",
    "continued": "_continuation",
    "completion_hint": "_completion",
    "default_plugin_dir": "_plugin",
    "describe_claim": "_claims",
    "describe_state": "_loops",
    "diff_since": "_check",
    "final_message": "_transcript",
    "final_message_if_written": "_transcript",
    "find_signal": "_signals",
    "forgeflare_command": "_install",
    "gate_refused": "_claims",
    "head_commit": "_check",
    "hook_command": "_install",
    "install_hook": "_install",
    "install_plugin": "_plugin",
    "is_stop_hook_command": "_install",
    "judged_text": "_completion",
    "last_assistant_text": "_transcript",
    "legacy_note": "_statefile",
    "legacy_states": "_statefile",
    "loop_status": "_loops",
    "merge_stop_hook": "_install",
    "open_json_state": "_statefile",
    "open_state": "_statefile",
    "parked_lines": "_answer",
    "parse_json_state": "_statefile",
    "parse_loop_args": "_plugin",
    "parse_timestamp": "_statefile",
    "plugin_files": "_plugin",
    "push_frame": "_machine",
    "read_settled": "_lag",
    "record_answer": "_machine",
    "render_json_state": "_statefile",
    "review_claim": "_check",
    "reviewer_refused": "_claims",
    "run_gate": "_check",
    "run_stop_hook": "_hook",
    "settled": "_lag",
    "start_loop": "_loops",
    "state_home": "_statefile",
    "state_lock": "_statefile",
    "state_name": "_statefile",
    "state_path": "_statefile",
    "transition": "_machine",
    "wait_seconds": "_lag",
    "waiting_question": "_answer",
    "write_portable_wrapper": "_install",
}
"""Each public name and the private module that holds it."""

__all__ = [
    "ANSWER_HOW",
    "BLOCK_MESSAGE",
    "DEFAULT_COMMAND",
    "DEFAULT_WAIT_MS",
    "DISABLE_ENV",
    "DISABLE_FILE",
    "GATE_TIMEOUT_S",
    "HOOK_TIMEOUT_S",
    "JSON_STATE_RELPATH",
    "LEGACY_RELPATHS",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_STATE_RELPATH",
    "PLAN_FILE",
    "PLUGIN_FILES",
    "PORTABLE_COMMAND",
    "PORTABLE_RELPATH",
    "PORTABLE_SCRIPT",
    "REVIEWS_RELPATH",
    "REVIEW_TIMEOUT_S",
    "RULE",
    "SCHEMA_VERSION",
    "SETTINGS_RELPATH",
    "SIGNALS",
    "STALE_AFTER",
    "STATE_DIRNAME",
    "WAIT_ENV",
    "Checked",
    "ClaimNote",
    "Corrupt",
    "Event",
    "FinalMessage",
    "Frame",
    "LoopArgs",
    "LoopRecord",
    "LoopStateError",
    "Mode",
    "Phase",
    "Reading",
    "Refusal",
    "ReviewNote",
    "SettingsFileError",
    "StateLockTimeout",
    "StateSession",
    "StopDecision",
    "StopHookError",
    "StopHookOutcome",
    "StoredState",
    "TranscriptError",
    "answer_loop",
    "answer_text",
    "any_state",
    "assistant_text_of",
    "block_reason",
    "cancel_loops",
    "check_claim",
    "claim_from_json",
    "claim_to_json",
    "claimed",
    "command_problem",
    "completion_hint",
    "continue_output",
    "continued",
    "default_plugin_dir",
    "describe_claim",
    "describe_state",
    "diff_since",
    "final_message",
    "final_message_if_written",
    "find_signal",
    "forgeflare_command",
    "gate_refused",
    "head_commit",
    "hook_command",
    "install_hook",
    "install_plugin",
    "is_stop_hook_command",
    "judged_text",
    "last_assistant_text",
    "legacy_note",
    "legacy_states",
    "loop_status",
    "merge_stop_hook",
    "open_json_state",
    "open_state",
    "parked_lines",
    "parse_json_state",
    "parse_loop_args",
    "parse_timestamp",
    "plugin_files",
    "push_frame",
    "read_settled",
    "record_answer",
    "render_json_state",
    "review_claim",
    "reviewer_refused",
    "run_gate",
    "run_stop_hook",
    "settled",
    "start_loop",
    "state_home",
    "state_lock",
    "state_name",
    "state_path",
    "transition",
    "wait_seconds",
    "waiting_question",
    "write_portable_wrapper",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # the next look-up is an ordinary global
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
