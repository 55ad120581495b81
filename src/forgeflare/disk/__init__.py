"""Files forgeflare reads and writes: capped reads, validation, damaged files, atomic writes.

The names load on first use (PEP 562), so importing this face loads none of its modules.
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

TYPE_CHECKING = False  # not typing's: the stop-hook's quick path does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.disk._convergence import AgentReport as AgentReport
    from forgeflare.disk._convergence import CONVERGENCE_RELPATH as CONVERGENCE_RELPATH
    from forgeflare.disk._convergence import ConvergenceError as ConvergenceError
    from forgeflare.disk._convergence import ConvergenceState as ConvergenceState
    from forgeflare.disk._convergence import Final as Final
    from forgeflare.disk._convergence import MAX_COUNT as MAX_COUNT
    from forgeflare.disk._convergence import Observation as Observation
    from forgeflare.disk._convergence import Tokens as Tokens
    from forgeflare.disk._convergence import append_observations as append_observations
    from forgeflare.disk._convergence import clear_convergence as clear_convergence
    from forgeflare.disk._convergence import convergence_path as convergence_path
    from forgeflare.disk._convergence import read_convergence as read_convergence
    from forgeflare.disk._convergence import write_final as write_final
    from forgeflare.disk._damaged import DamagedFileError as DamagedFileError
    from forgeflare.disk._damaged import loads as loads
    from forgeflare.disk._damaged import read_json as read_json
    from forgeflare.disk._damaged import read_named_text as read_named_text
    from forgeflare.disk._damaged import read_text as read_text
    from forgeflare.disk._damaged import require_utf8 as require_utf8
    from forgeflare.disk._damaged import scrub_surrogates as scrub_surrogates
    from forgeflare.disk._fsutil import append_line as append_line
    from forgeflare.disk._fsutil import atomic_write_text as atomic_write_text
    from forgeflare.disk._fsutil import check_project_folders as check_project_folders
    from forgeflare.disk._fsutil import open_regular as open_regular
    from forgeflare.disk._fsutil import overwrite_in_place as overwrite_in_place
    from forgeflare.disk._fsutil import read_json_model as read_json_model
    from forgeflare.disk._jsonl import json_objects as json_objects
    from forgeflare.disk._readfile import CONFIG_LIMIT as CONFIG_LIMIT
    from forgeflare.disk._readfile import RECORD_LIMIT as RECORD_LIMIT
    from forgeflare.disk._readfile import not_regular as not_regular
    from forgeflare.disk._readfile import read_limited as read_limited
    from forgeflare.disk._readfile import read_limited_text as read_limited_text
    from forgeflare.disk._runtime_files import RUNTIME_PATTERNS as RUNTIME_PATTERNS
    from forgeflare.disk._runtime_files import WRITTEN_FOLDERS as WRITTEN_FOLDERS
    from forgeflare.disk._validation import Loc as Loc
    from forgeflare.disk._validation import error_key as error_key
    from forgeflare.disk._validation import error_problem as error_problem
    from forgeflare.disk._validation import validation_message as validation_message

__all__ = [
    "CONFIG_LIMIT",
    "CONVERGENCE_RELPATH",
    "MAX_COUNT",
    "RECORD_LIMIT",
    "RUNTIME_PATTERNS",
    "WRITTEN_FOLDERS",
    "AgentReport",
    "ConvergenceError",
    "ConvergenceState",
    "DamagedFileError",
    "Final",
    "Loc",
    "Observation",
    "Tokens",
    "append_line",
    "append_observations",
    "atomic_write_text",
    "check_project_folders",
    "clear_convergence",
    "convergence_path",
    "error_key",
    "error_problem",
    "json_objects",
    "loads",
    "not_regular",
    "open_regular",
    "overwrite_in_place",
    "read_convergence",
    "read_json",
    "read_json_model",
    "read_limited",
    "read_limited_text",
    "read_named_text",
    "read_text",
    "require_utf8",
    "scrub_surrogates",
    "validation_message",
    "write_final",
]

_WHERE = {
    "AgentReport": "_convergence",
    "CONFIG_LIMIT": "_readfile",
    "CONVERGENCE_RELPATH": "_convergence",
    "ConvergenceError": "_convergence",
    "ConvergenceState": "_convergence",
    "DamagedFileError": "_damaged",
    "Final": "_convergence",
    "Loc": "_validation",
    "MAX_COUNT": "_convergence",
    "Observation": "_convergence",
    "RECORD_LIMIT": "_readfile",
    "RUNTIME_PATTERNS": "_runtime_files",
    "Tokens": "_convergence",
    "WRITTEN_FOLDERS": "_runtime_files",
    "append_line": "_fsutil",
    "append_observations": "_convergence",
    "atomic_write_text": "_fsutil",
    "check_project_folders": "_fsutil",
    "clear_convergence": "_convergence",
    "convergence_path": "_convergence",
    "error_key": "_validation",
    "error_problem": "_validation",
    "json_objects": "_jsonl",
    "loads": "_damaged",
    "not_regular": "_readfile",
    "open_regular": "_fsutil",
    "overwrite_in_place": "_fsutil",
    "read_convergence": "_convergence",
    "read_json": "_damaged",
    "read_json_model": "_fsutil",
    "read_limited": "_readfile",
    "read_limited_text": "_readfile",
    "read_named_text": "_damaged",
    "read_text": "_damaged",
    "require_utf8": "_damaged",
    "scrub_surrogates": "_damaged",
    "validation_message": "_validation",
    "write_final": "_convergence",
}
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
