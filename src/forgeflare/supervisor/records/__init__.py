"""What a loop keeps and tells.

Run records under ``.fresher/runs/<run-id>/`` (:class:`RunStore`, :class:`RunRecord` and its
rows; :class:`RecordError` when one cannot be written or read), the runs read back
(:func:`list_runs`, :func:`finish_reason`, :func:`iteration_rows`), the requests of the last
hour, a question parked for an answer from another terminal, the live display and the
notifications sent when a loop ends or waits.
"""

from forgeflare.supervisor.records._blocked import ANSWER_FILE as ANSWER_FILE
from forgeflare.supervisor.records._blocked import read_answer as read_answer
from forgeflare.supervisor.records._blocked import take_answer as take_answer
from forgeflare.supervisor.records._blocked import waiting_run as waiting_run
from forgeflare.supervisor.records._blocked import write_answer as write_answer
from forgeflare.supervisor.records._display import AgentStatus as AgentStatus
from forgeflare.supervisor.records._display import LoopDisplay as LoopDisplay
from forgeflare.supervisor.records._display import SUMMARY_ROWS as SUMMARY_ROWS
from forgeflare.supervisor.records._display import parse_agent_line as parse_agent_line
from forgeflare.supervisor.records._display import summary_lines as summary_lines
from forgeflare.supervisor.records._history import IterationRow as IterationRow
from forgeflare.supervisor.records._history import finish_reason as finish_reason
from forgeflare.supervisor.records._history import iteration_rows as iteration_rows
from forgeflare.supervisor.records._history import runs_root as runs_root
from forgeflare.supervisor.records._hourly import HOUR as HOUR
from forgeflare.supervisor.records._hourly import hour_allowance as hour_allowance
from forgeflare.supervisor.records._hourly import sent_by_rows as sent_by_rows
from forgeflare.supervisor.records._notify import NOTIFY_EVENTS as NOTIFY_EVENTS
from forgeflare.supervisor.records._notify import Notifier as Notifier
from forgeflare.supervisor.records._notify import NotifyEvent as NotifyEvent
from forgeflare.supervisor.records._notify import notify_preflight as notify_preflight
from forgeflare.supervisor.records._notify import notify_urls as notify_urls
from forgeflare.supervisor.records._notify import render_message as render_message
from forgeflare.supervisor.records._notify import should_notify as should_notify
from forgeflare.supervisor.records._records import CheckpointRecord as CheckpointRecord
from forgeflare.supervisor.records._records import ClaimRecord as ClaimRecord
from forgeflare.supervisor.records._records import HookRecord as HookRecord
from forgeflare.supervisor.records._records import InProgress as InProgress
from forgeflare.supervisor.records._records import IterationRecord as IterationRecord
from forgeflare.supervisor.records._records import ProgressRecord as ProgressRecord
from forgeflare.supervisor.records._records import RUN_MARKER as RUN_MARKER
from forgeflare.supervisor.records._records import RecordError as RecordError
from forgeflare.supervisor.records._records import ReviewRecord as ReviewRecord
from forgeflare.supervisor.records._records import RunRecord as RunRecord
from forgeflare.supervisor.records._records import RunSettings as RunSettings
from forgeflare.supervisor.records._records import RunStore as RunStore
from forgeflare.supervisor.records._records import Totals as Totals
from forgeflare.supervisor.records._records import WaitRecord as WaitRecord
from forgeflare.supervisor.records._records import find_resumable as find_resumable
from forgeflare.supervisor.records._records import list_runs as list_runs
from forgeflare.supervisor.records._records import new_run_id as new_run_id
from forgeflare.supervisor.records._records import newest_run as newest_run
from forgeflare.supervisor.records._records import orphan_group as orphan_group
from forgeflare.supervisor.records._records import read_run as read_run

__all__ = sorted(name for name in dir() if not name.startswith("_"))  # what this face imports
