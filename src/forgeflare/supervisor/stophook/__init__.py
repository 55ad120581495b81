"""``forgeflare stop-hook``: the stop-hook state machine for loops inside one agent session.

The pure core is :func:`transition` (with :func:`find_signal` for markdown-aware signal
detection); :func:`run_hook` is the shell Claude Code's Stop hook runs.
"""

from typing import TYPE_CHECKING

from forgeflare._lazy import attach

if TYPE_CHECKING:
    from forgeflare.supervisor.stophook._errors import (
        LoopStateError,
        SettingsFileError,
        StateLockTimeout,
        StopHookError,
        TranscriptError,
    )
    from forgeflare.supervisor.stophook._hook import HookOutcome, run_hook
    from forgeflare.supervisor.stophook._install import install_hook, merge_stop_hook
    from forgeflare.supervisor.stophook._loops import (
        cancel_loops,
        describe_state,
        loop_status,
        start_loop,
    )
    from forgeflare.supervisor.stophook._machine import (
        STALE_AFTER,
        Corrupt,
        Decision,
        Event,
        Frame,
        LoopRecord,
        Phase,
        StoredState,
        block_reason,
        push_frame,
        transition,
    )
    from forgeflare.supervisor.stophook._signals import SIGNALS, Mode, find_signal
    from forgeflare.supervisor.stophook._statefile import (
        open_state,
        parse_json_state,
        parse_markdown_state,
        render_json_state,
    )
    from forgeflare.supervisor.stophook._transcript import last_assistant_text

__getattr__, __dir__ = attach(
    __name__,
    {
        "forgeflare.supervisor.stophook._errors": (
            "LoopStateError",
            "SettingsFileError",
            "StateLockTimeout",
            "StopHookError",
            "TranscriptError",
        ),
        "forgeflare.supervisor.stophook._hook": ("HookOutcome", "run_hook"),
        "forgeflare.supervisor.stophook._install": ("install_hook", "merge_stop_hook"),
        "forgeflare.supervisor.stophook._loops": (
            "cancel_loops",
            "describe_state",
            "loop_status",
            "start_loop",
        ),
        "forgeflare.supervisor.stophook._machine": (
            "STALE_AFTER",
            "Corrupt",
            "Decision",
            "Event",
            "Frame",
            "LoopRecord",
            "Phase",
            "StoredState",
            "block_reason",
            "push_frame",
            "transition",
        ),
        "forgeflare.supervisor.stophook._signals": ("SIGNALS", "Mode", "find_signal"),
        "forgeflare.supervisor.stophook._statefile": (
            "open_state",
            "parse_json_state",
            "parse_markdown_state",
            "render_json_state",
        ),
        "forgeflare.supervisor.stophook._transcript": ("last_assistant_text",),
    },
)

__all__ = [
    "SIGNALS",
    "STALE_AFTER",
    "Corrupt",
    "Decision",
    "Event",
    "Frame",
    "HookOutcome",
    "LoopRecord",
    "LoopStateError",
    "Mode",
    "Phase",
    "SettingsFileError",
    "StateLockTimeout",
    "StopHookError",
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
    "run_hook",
    "start_loop",
    "transition",
]
