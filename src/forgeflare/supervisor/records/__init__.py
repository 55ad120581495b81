"""What a loop keeps and tells.

Run records under ``.fresher/runs/<run-id>/`` (:class:`RunStore`, :class:`RunRecord` and its
rows; :class:`RecordError` when one cannot be written or read), the runs read back
(:func:`list_runs`, :func:`finish_reason`, :func:`iteration_rows`), the requests of the last
hour, a question parked for an answer from another terminal, the live display and the
notifications sent when a loop ends or waits.
"""

from forgeflare.supervisor.records._blocked import ANSWER_FILE
from forgeflare.supervisor.records._blocked import read_answer
from forgeflare.supervisor.records._blocked import take_answer
from forgeflare.supervisor.records._blocked import waiting_run
from forgeflare.supervisor.records._blocked import write_answer
from forgeflare.supervisor.records._display import AgentStatus
from forgeflare.supervisor.records._display import LoopDisplay
from forgeflare.supervisor.records._display import SUMMARY_ROWS
from forgeflare.supervisor.records._display import parse_agent_line
from forgeflare.supervisor.records._display import summary_lines
from forgeflare.supervisor.records._history import IterationRow
from forgeflare.supervisor.records._history import finish_reason
from forgeflare.supervisor.records._history import iteration_rows
from forgeflare.supervisor.records._history import runs_root
from forgeflare.supervisor.records._hourly import HOUR
from forgeflare.supervisor.records._hourly import hour_allowance
from forgeflare.supervisor.records._hourly import sent_by_rows
from forgeflare.supervisor.records._notify import NOTIFY_EVENTS
from forgeflare.supervisor.records._notify import Notifier
from forgeflare.supervisor.records._notify import NotifyEvent
from forgeflare.supervisor.records._notify import notify_preflight
from forgeflare.supervisor.records._notify import notify_urls
from forgeflare.supervisor.records._notify import render_message
from forgeflare.supervisor.records._notify import should_notify
from forgeflare.supervisor.records._records import CheckpointRecord
from forgeflare.supervisor.records._records import ClaimRecord
from forgeflare.supervisor.records._records import HookRecord
from forgeflare.supervisor.records._records import InProgress
from forgeflare.supervisor.records._records import IterationRecord
from forgeflare.supervisor.records._records import ProgressRecord
from forgeflare.supervisor.records._records import RUN_MARKER
from forgeflare.supervisor.records._records import RecordError
from forgeflare.supervisor.records._records import ReviewRecord
from forgeflare.supervisor.records._records import RunRecord
from forgeflare.supervisor.records._records import RunSettings
from forgeflare.supervisor.records._records import RunStore
from forgeflare.supervisor.records._records import Totals
from forgeflare.supervisor.records._records import WaitRecord
from forgeflare.supervisor.records._records import find_resumable
from forgeflare.supervisor.records._records import list_runs
from forgeflare.supervisor.records._records import new_run_id
from forgeflare.supervisor.records._records import newest_run
from forgeflare.supervisor.records._records import orphan_group
from forgeflare.supervisor.records._records import read_run

__all__ = [
    "ANSWER_FILE",
    "HOUR",
    "NOTIFY_EVENTS",
    "RUN_MARKER",
    "SUMMARY_ROWS",
    "AgentStatus",
    "CheckpointRecord",
    "ClaimRecord",
    "HookRecord",
    "InProgress",
    "IterationRecord",
    "IterationRow",
    "LoopDisplay",
    "Notifier",
    "NotifyEvent",
    "ProgressRecord",
    "RecordError",
    "ReviewRecord",
    "RunRecord",
    "RunSettings",
    "RunStore",
    "Totals",
    "WaitRecord",
    "find_resumable",
    "finish_reason",
    "hour_allowance",
    "iteration_rows",
    "list_runs",
    "new_run_id",
    "newest_run",
    "notify_preflight",
    "notify_urls",
    "orphan_group",
    "parse_agent_line",
    "read_answer",
    "read_run",
    "render_message",
    "runs_root",
    "sent_by_rows",
    "should_notify",
    "summary_lines",
    "take_answer",
    "waiting_run",
    "write_answer",
]
