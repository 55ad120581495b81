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

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    _convergence=(
        "AgentReport CONVERGENCE_RELPATH ConvergenceError ConvergenceState Final MAX_COUNT"
        " Observation Tokens append_observations clear_convergence convergence_path"
        " read_convergence write_final"
    ),
    _damaged=(
        "DamagedFileError loads read_json read_named_text read_text require_utf8 scrub_surrogates"
    ),
    _fsutil=(
        "append_line atomic_write_text check_project_folders open_regular overwrite_in_place"
        " read_json_model"
    ),
    _jsonl="json_objects",
    _readfile="CONFIG_LIMIT RECORD_LIMIT not_regular read_limited read_limited_text",
    _runtime_files="RUNTIME_PATTERNS WRITTEN_FOLDERS",
    _validation="Loc error_key error_problem validation_message",
)
