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
    land_pr,
    may_land,
    pr_remote,
)
from forgeflare.fleet._report import (
    fleet_report_html,
    fleet_report_text,
    loop_report_text,
)
from forgeflare.fleet._run import (
    FleetInterrupted,
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
    "FleetInterrupted",
    "FleetLoop",
    "FleetOptions",
    "FleetRecord",
    "FleetSettings",
    "LandResult",
    "LoopRecord",
    "LoopStatus",
    "end_leftovers",
    "fleet_report_html",
    "fleet_report_text",
    "k8s_documents",
    "k8s_files",
    "land",
    "land_pr",
    "load_fleet_file",
    "load_record",
    "loop_report_text",
    "may_land",
    "parse_fleet_text",
    "pod_failure_policy",
    "pr_remote",
    "run_fleet",
    "save_record",
    "state_dir",
]
