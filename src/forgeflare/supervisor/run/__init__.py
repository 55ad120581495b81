"""The running loop: :func:`run_loop` and the parts it is made of.

A loop is one :class:`LoopSetup` (what never changes) and one :class:`RunBook` (its record),
and a few parts built from them, each owning its state: :class:`AgentSwitching`,
:class:`IterationRunner`, :class:`LoopDelivery`, :class:`LoopChecks`, :class:`LoopWaits`,
:class:`LoopProof`, assembled by :class:`LoopParts` and driven one :class:`LoopStep` at a time.
Also here: the preflight and project lock, lifecycle hooks, resume, stop, pause and hint, and
the commands of ``forgeflare loop`` and its neighbours (registered lazily by ``forgeflare._app``).
"""

from forgeflare.supervisor.run._checkpoint import LoopDelivery
from forgeflare.supervisor.run._checks import LoopChecks
from forgeflare.supervisor.run._iteration import IterationRunner
from forgeflare.supervisor.run._iteration import is_fresh
from forgeflare.supervisor.run._lifecycle import HookContext
from forgeflare.supervisor.run._lifecycle import HookStatus
from forgeflare.supervisor.run._loop import run_loop
from forgeflare.supervisor.run._preflight import LOCK_RELPATH
from forgeflare.supervisor.run._preflight import lock_holder
from forgeflare.supervisor.run._proof import LoopProof
from forgeflare.supervisor.run._runbook import RunBook
from forgeflare.supervisor.run._setup import LoopSetup
from forgeflare.supervisor.run._setup import loop_limits
from forgeflare.supervisor.run._step import LoopParts
from forgeflare.supervisor.run._step import LoopStep
from forgeflare.supervisor.run._stop import request_stop
from forgeflare.supervisor.run._stop import stop_requested
from forgeflare.supervisor.run._switching import AgentSwitching
from forgeflare.supervisor.run._waiting import LoopWaits

__all__ = [
    "LOCK_RELPATH",
    "AgentSwitching",
    "HookContext",
    "HookStatus",
    "IterationRunner",
    "LoopChecks",
    "LoopDelivery",
    "LoopParts",
    "LoopProof",
    "LoopSetup",
    "LoopStep",
    "LoopWaits",
    "RunBook",
    "is_fresh",
    "lock_holder",
    "loop_limits",
    "request_stop",
    "run_loop",
    "stop_requested",
]
