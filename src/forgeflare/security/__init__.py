"""What keeps a run in its box: secrets, the sandbox, scoped exec, keys, git guards, gates.

The names load on first use (PEP 562), so importing this face loads none of its modules.
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

TYPE_CHECKING = False  # not typing's: the stop-hook's quick path does not load typing
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.security._gaterun import GateBox as GateBox
    from forgeflare.security._gaterun import gate_box as gate_box
    from forgeflare.security._gaterun import run_gate as run_gate
    from forgeflare.security._gaterun import run_project_gate_blocking as run_project_gate_blocking
    from forgeflare.security._git import GIT_TIMEOUT as GIT_TIMEOUT
    from forgeflare.security._git import GitResult as GitResult
    from forgeflare.security._git import NETWORK_TIMEOUT as NETWORK_TIMEOUT
    from forgeflare.security._git import SAFE_CONFIG as SAFE_CONFIG
    from forgeflare.security._git import git_argv as git_argv
    from forgeflare.security._git import git_env as git_env
    from forgeflare.security._git import git_timeout as git_timeout
    from forgeflare.security._git import run_git as run_git
    from forgeflare.security._gitguard import changes as changes
    from forgeflare.security._gitguard import describe_changes as describe_changes
    from forgeflare.security._gitguard import git_fingerprint as git_fingerprint
    from forgeflare.security._keychannel import KEY_FD_ENV as KEY_FD_ENV
    from forgeflare.security._keychannel import hand_over as hand_over
    from forgeflare.security._keychannel import hide_secrets as hide_secrets
    from forgeflare.security._keychannel import secrets_fd as secrets_fd
    from forgeflare.security._keychannel import split_secrets as split_secrets
    from forgeflare.security._reviewdiff import collect_diff as collect_diff
    from forgeflare.security._reviewdiff import (
        collect_project_diff_blocking as collect_project_diff_blocking,
    )
    from forgeflare.security._sandbox import AgentBox as AgentBox
    from forgeflare.security._sandbox import BoxSettings as BoxSettings
    from forgeflare.security._sandbox import CACHE_DIRS as CACHE_DIRS
    from forgeflare.security._sandbox import GIT_DIR_ENV as GIT_DIR_ENV
    from forgeflare.security._sandbox import INSTALL_HINT as INSTALL_HINT
    from forgeflare.security._sandbox import SANDBOX_ENV as SANDBOX_ENV
    from forgeflare.security._sandbox import SOCKETS_ENV as SOCKETS_ENV
    from forgeflare.security._sandbox import SandboxChoice as SandboxChoice
    from forgeflare.security._sandbox import SandboxPlan as SandboxPlan
    from forgeflare.security._sandbox import WRITABLE_ENV as WRITABLE_ENV
    from forgeflare.security._sandbox import bwrap_argv as bwrap_argv
    from forgeflare.security._sandbox import check_sandbox as check_sandbox
    from forgeflare.security._sandbox import choose_sandbox as choose_sandbox
    from forgeflare.security._sandbox import host_sockets as host_sockets
    from forgeflare.security._sandbox import landlock_abi as landlock_abi
    from forgeflare.security._sandbox import loop_sandbox as loop_sandbox
    from forgeflare.security._sandbox import outermost as outermost
    from forgeflare.security._sandbox import probe_sandbox as probe_sandbox
    from forgeflare.security._sandbox import require_sandbox as require_sandbox
    from forgeflare.security._sandbox import sandbox_argv as sandbox_argv
    from forgeflare.security._sandbox import sandbox_env as sandbox_env
    from forgeflare.security._sandbox import sandbox_mode as sandbox_mode
    from forgeflare.security._sandbox import sandbox_plan as sandbox_plan
    from forgeflare.security._sandbox import scope_abstract_sockets as scope_abstract_sockets
    from forgeflare.security._secrets import PASS_ENV_VAR as PASS_ENV_VAR
    from forgeflare.security._secrets import child_environment as child_environment
    from forgeflare.security._secrets import pass_env_from as pass_env_from
    from forgeflare.security._secrets import scrub_environment as scrub_environment

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    _gaterun="GateBox gate_box run_gate run_project_gate_blocking",
    _git="GIT_TIMEOUT GitResult NETWORK_TIMEOUT SAFE_CONFIG git_argv git_env git_timeout run_git",
    _gitguard="changes describe_changes git_fingerprint",
    _keychannel="KEY_FD_ENV hand_over hide_secrets secrets_fd split_secrets",
    _reviewdiff="collect_diff collect_project_diff_blocking",
    _sandbox=(
        "AgentBox BoxSettings CACHE_DIRS GIT_DIR_ENV INSTALL_HINT SANDBOX_ENV SOCKETS_ENV"
        " SandboxChoice SandboxPlan WRITABLE_ENV bwrap_argv check_sandbox choose_sandbox"
        " host_sockets landlock_abi loop_sandbox outermost probe_sandbox require_sandbox"
        " sandbox_argv sandbox_env sandbox_mode sandbox_plan scope_abstract_sockets"
    ),
    _secrets="PASS_ENV_VAR child_environment pass_env_from scrub_environment",
)
