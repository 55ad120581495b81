"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_stop_hook` is the shell Claude Code's Stop hook runs.

The names load on first use (PEP 562): Claude Code runs the hook at every Stop of every
session, and its process (``_entry``) must not pay for the gate, the reviewer, the installer
and the CLI helpers that importing them all here would load.
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

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

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    _answer="answer_loop answer_text parked_lines waiting_question",
    _check=(
        "Checked GATE_TIMEOUT_S PLAN_FILE REVIEW_TIMEOUT_S check_claim diff_since head_commit"
        " review_claim run_gate"
    ),
    _claims=(
        "ClaimNote REVIEWS_RELPATH ReviewNote claim_from_json claim_to_json describe_claim"
        " gate_refused reviewer_refused"
    ),
    _completion="RULE completion_hint judged_text",
    _errors="LoopStateError SettingsFileError StateLockTimeout StopHookError TranscriptError",
    _hook="DISABLE_ENV DISABLE_FILE StopHookOutcome run_stop_hook",
    _install=(
        "DEFAULT_COMMAND HOOK_TIMEOUT_S PORTABLE_COMMAND PORTABLE_RELPATH PORTABLE_SCRIPT"
        " SETTINGS_RELPATH command_problem forgeflare_command hook_command install_hook"
        " is_stop_hook_command merge_stop_hook write_portable_wrapper"
    ),
    _continuation="continue_output continued",
    _lag="DEFAULT_WAIT_MS Reading WAIT_ENV read_settled settled wait_seconds",
    _loops="cancel_loops describe_state loop_status start_loop",
    _machine=(
        "ANSWER_HOW BLOCK_MESSAGE Corrupt Event Frame LoopRecord Phase Refusal STALE_AFTER"
        " StopDecision StoredState block_reason claimed push_frame record_answer transition"
    ),
    _plugin="LoopArgs PLUGIN_FILES default_plugin_dir install_plugin parse_loop_args plugin_files",
    _signals="Mode SIGNALS find_signal",
    _statefile=(
        "JSON_STATE_RELPATH LEGACY_RELPATHS LOCK_TIMEOUT_S MARKDOWN_STATE_RELPATH SCHEMA_VERSION"
        " STATE_DIRNAME StateSession any_state legacy_note legacy_states open_json_state"
        " open_state parse_json_state parse_timestamp render_json_state state_home state_lock"
        " state_name state_path"
    ),
    _transcript=(
        "FinalMessage assistant_text_of final_message final_message_if_written last_assistant_text"
    ),
)
