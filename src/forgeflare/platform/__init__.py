"""The machine under forgeflare: child processes, their groups, spawning, dumps, output caps.

The names load on first use (PEP 562), so importing this face loads none of its modules.
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

TYPE_CHECKING = False  # not typing's: the stop-hook's quick path does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.platform._dumpable import forbid_dumps as forbid_dumps
    from forgeflare.platform._outputcap import HeadTail as HeadTail
    from forgeflare.platform._outputcap import LineCap as LineCap
    from forgeflare.platform._pgroup import become_subreaper as become_subreaper
    from forgeflare.platform._pgroup import end_adopted as end_adopted
    from forgeflare.platform._pgroup import end_marked_processes as end_marked_processes
    from forgeflare.platform._pgroup import end_pids as end_pids
    from forgeflare.platform._pgroup import end_popen as end_popen
    from forgeflare.platform._pgroup import escaped_descendants as escaped_descendants
    from forgeflare.platform._pgroup import is_alive as is_alive
    from forgeflare.platform._pgroup import popen_in_group as popen_in_group
    from forgeflare.platform._pgroup import process_started as process_started
    from forgeflare.platform._process import ChildResult as ChildResult
    from forgeflare.platform._process import exit_status as exit_status
    from forgeflare.platform._process import kill_group as kill_group
    from forgeflare.platform._process import run_child as run_child
    from forgeflare.platform._process import run_child_blocking as run_child_blocking

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    _dumpable="forbid_dumps",
    _outputcap="HeadTail LineCap",
    _pgroup=(
        "become_subreaper end_adopted end_marked_processes end_pids end_popen escaped_descendants"
        " is_alive popen_in_group process_started"
    ),
    _process="ChildResult exit_status kill_group run_child run_child_blocking",
)
