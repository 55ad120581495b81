"""Many loops: fleet files, worktrees and landing, and the fleet on Kubernetes."""

from forgeflare.fleet._config import (
    FleetConfigError,
    FleetFile,
    FleetLoop,
    FleetSettings,
    load_fleet_file,
    parse_fleet_text,
)
from forgeflare.fleet._k8s import (
    CONTAINERFILE,
    RETRIED_EXIT_CODES,
    k8s_documents,
    k8s_files,
    pod_failure_policy,
)
from forgeflare.fleet._land import (
    LandResult,
    land,
    may_land,
)
from forgeflare.fleet._run import (
    FleetOptions,
    end_leftovers,
    run_fleet,
)
from forgeflare.fleet._state import (
    FleetRecord,
    LoopRecord,
    LoopStatus,
    load_record,
    save_record,
    state_dir,
)

__all__ = [
    "CONTAINERFILE",
    "RETRIED_EXIT_CODES",
    "FleetConfigError",
    "FleetFile",
    "FleetLoop",
    "FleetOptions",
    "FleetRecord",
    "FleetSettings",
    "LandResult",
    "LoopRecord",
    "LoopStatus",
    "end_leftovers",
    "k8s_documents",
    "k8s_files",
    "land",
    "load_fleet_file",
    "load_record",
    "may_land",
    "parse_fleet_text",
    "pod_failure_policy",
    "run_fleet",
    "save_record",
    "state_dir",
]
