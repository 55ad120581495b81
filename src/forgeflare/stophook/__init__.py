"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_stop_hook` is the shell Claude Code's Stop hook runs.
"""

from forgeflare.stophook._errors import (
    LoopStateError,
    SettingsFileError,
    StateLockTimeout,
    StopHookError,
    TranscriptError,
)
from forgeflare.stophook._hook import StopHookOutcome, run_stop_hook
from forgeflare.stophook._install import install_hook, merge_stop_hook
from forgeflare.stophook._loops import (
    cancel_loops,
    describe_state,
    loop_status,
    start_loop,
)
from forgeflare.stophook._machine import (
    STALE_AFTER,
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    Phase,
    StopDecision,
    StoredState,
    block_reason,
    push_frame,
    transition,
)
from forgeflare.stophook._signals import SIGNALS, Mode, find_signal
from forgeflare.stophook._statefile import (
    open_state,
    parse_json_state,
    parse_markdown_state,
    render_json_state,
)
from forgeflare.stophook._transcript import last_assistant_text

__all__ = [
    "SIGNALS",
    "STALE_AFTER",
    "Corrupt",
    "Event",
    "Frame",
    "LoopRecord",
    "LoopStateError",
    "Mode",
    "Phase",
    "SettingsFileError",
    "StateLockTimeout",
    "StopDecision",
    "StopHookError",
    "StopHookOutcome",
    "StoredState",
    "TranscriptError",
    "block_reason",
    "cancel_loops",
    "describe_state",
    "find_signal",
    "install_hook",
    "last_assistant_text",
    "loop_status",
    "merge_stop_hook",
    "open_state",
    "parse_json_state",
    "parse_markdown_state",
    "push_frame",
    "render_json_state",
    "run_stop_hook",
    "start_loop",
    "transition",
]
