"""Many loops: fleet files, worktrees and landing, and the fleet on Kubernetes."""

from forgeflare.fleet._config import (
    FleetConfigError,
    FleetFile,
    FleetLoop,
    FleetSettings,
    load_fleet_file,
    parse_fleet_text,
)
from forgeflare.fleet._k8s import RETRIED_EXIT_CODES, k8s_documents, k8s_files, pod_failure_policy

__all__ = [
    "RETRIED_EXIT_CODES",
    "FleetConfigError",
    "FleetFile",
    "FleetLoop",
    "FleetSettings",
    "k8s_documents",
    "k8s_files",
    "load_fleet_file",
    "parse_fleet_text",
    "pod_failure_policy",
]
