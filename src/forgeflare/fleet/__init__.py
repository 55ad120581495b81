"""Many loops: fleet files, worktrees and landing, and the fleet on Kubernetes."""

from forgeflare.fleet._config import FleetConfigError
from forgeflare.fleet._config import FleetFile
from forgeflare.fleet._config import FleetLoop
from forgeflare.fleet._config import FleetSettings
from forgeflare.fleet._config import load_fleet_file
from forgeflare.fleet._config import fleet_problems
from forgeflare.fleet._config import parse_fleet_text
from forgeflare.fleet._k8s import RETRIED_EXIT_CODES
from forgeflare.fleet._k8s import containerfile
from forgeflare.fleet._k8s import is_git_url
from forgeflare.fleet._k8s import k8s_documents
from forgeflare.fleet._k8s import k8s_files
from forgeflare.fleet._k8s import pod_failure_policy
from forgeflare.fleet._k8s import pod_max_cost
from forgeflare.fleet._land import LandOutcome
from forgeflare.fleet._land import LandResult
from forgeflare.fleet._land import Landing
from forgeflare.fleet._land import is_land_outcome
from forgeflare.fleet._land import land
from forgeflare.fleet._land import land_pr
from forgeflare.fleet._land import may_land
from forgeflare.fleet._land import pr_remote
from forgeflare.fleet._report import fleet_report_html
from forgeflare.fleet._report import fleet_report_text
from forgeflare.fleet._report import loop_report_text
from forgeflare.fleet._run import FleetInterrupted
from forgeflare.fleet._run import FleetOptions
from forgeflare.fleet._run import end_leftovers
from forgeflare.fleet._run import finished_fleet
from forgeflare.fleet._run import run_fleet
from forgeflare.fleet._run import fleet_spent
from forgeflare.fleet._state import FleetRecord
from forgeflare.fleet._state import LoopRecord
from forgeflare.fleet._state import LoopStatus
from forgeflare.fleet._state import load_record
from forgeflare.fleet._state import save_record
from forgeflare.fleet._state import state_dir
from forgeflare.fleet._report import fleet_todo

__all__ = [
    "RETRIED_EXIT_CODES",
    "FleetConfigError",
    "FleetFile",
    "FleetInterrupted",
    "FleetLoop",
    "FleetOptions",
    "FleetRecord",
    "FleetSettings",
    "LandOutcome",
    "LandResult",
    "Landing",
    "LoopRecord",
    "LoopStatus",
    "containerfile",
    "end_leftovers",
    "finished_fleet",
    "fleet_problems",
    "fleet_report_html",
    "fleet_report_text",
    "fleet_spent",
    "fleet_todo",
    "is_git_url",
    "is_land_outcome",
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
    "pod_max_cost",
    "pr_remote",
    "run_fleet",
    "save_record",
    "state_dir",
]
