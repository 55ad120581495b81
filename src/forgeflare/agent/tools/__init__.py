"""The agent's five tools (Read, Glob, Bash, Edit, Grep): schemas, effects and dispatch."""

from forgeflare.agent.tools._bash import BASH_TIMEOUT
from forgeflare.agent.tools._bash import MAX_BASH_OUTPUT
from forgeflare.agent.tools._bash import bash_tool
from forgeflare.agent.tools._bash import cap_output
from forgeflare.agent.tools._bash import run_bash
from forgeflare.agent.tools._edit import MAX_EDIT_BYTES
from forgeflare.agent.tools._edit import edit_file
from forgeflare.agent.tools._glob import GLOB_TIMEOUT
from forgeflare.agent.tools._glob import MAX_GLOB_ENTRIES
from forgeflare.agent.tools._glob import MAX_GLOB_SCAN
from forgeflare.agent.tools._glob import glob_walk
from forgeflare.agent.tools._glob import glob_files
from forgeflare.agent.tools._grep import GREP_TIMEOUT
from forgeflare.agent.tools._grep import MAX_GREP_MATCHES
from forgeflare.agent.tools._grep import find_rg
from forgeflare.agent.tools._grep import grep_tool
from forgeflare.agent.tools._grep import search
from forgeflare.agent.tools._guard import check_command
from forgeflare.agent.tools._guard import denied_reason
from forgeflare.agent.tools._guard import normalize_command
from forgeflare.agent.tools._inputs import BashInput
from forgeflare.agent.tools._inputs import EditInput
from forgeflare.agent.tools._inputs import GlobInput
from forgeflare.agent.tools._inputs import GrepInput
from forgeflare.agent.tools._inputs import ReadInput
from forgeflare.agent.tools._inputs import ToolInput
from forgeflare.agent.tools._inputs import parse_input
from forgeflare.agent.tools._inputs import tool_schema
from forgeflare.agent.tools._read import MAX_READ_BYTES
from forgeflare.agent.tools._read import read_file
from forgeflare.agent.tools._registry import TOOL_NAMES
from forgeflare.agent.tools._registry import dispatch_tool
from forgeflare.agent.tools._registry import tool_effect
from forgeflare.agent.tools._registry import tool_schemas
from forgeflare.security import BoxSettings
from forgeflare.security import CACHE_DIRS
from forgeflare.security import GIT_DIR_ENV
from forgeflare.security import INSTALL_HINT
from forgeflare.security import SANDBOX_ENV
from forgeflare.security import SOCKETS_ENV
from forgeflare.security import WRITABLE_ENV
from forgeflare.security import SandboxChoice
from forgeflare.security import SandboxPlan
from forgeflare.security import bwrap_argv
from forgeflare.security import check_sandbox
from forgeflare.security import choose_sandbox
from forgeflare.security import host_sockets
from forgeflare.security import loop_sandbox
from forgeflare.security import landlock_abi
from forgeflare.security import outermost
from forgeflare.security import probe_sandbox
from forgeflare.security import require_sandbox
from forgeflare.security import sandbox_argv
from forgeflare.security import sandbox_env
from forgeflare.security import sandbox_mode
from forgeflare.security import sandbox_plan
from forgeflare.security import scope_abstract_sockets
from forgeflare.agent.tools._types import ALLOW_PATHS_ENV
from forgeflare.agent.tools._types import ToolEffect
from forgeflare.agent.tools._types import ToolError
from forgeflare.agent.tools._types import ToolOutput
from forgeflare.agent.tools._types import allowed_roots
from forgeflare.agent.tools._types import confine
from forgeflare.agent.tools._types import extra_links
from forgeflare.agent.tools._types import hard_link_refused
from forgeflare.agent.tools._types import link_refused
from forgeflare.agent.tools._types import resolve_path

__all__ = [
    "ALLOW_PATHS_ENV",
    "BASH_TIMEOUT",
    "CACHE_DIRS",
    "GIT_DIR_ENV",
    "GLOB_TIMEOUT",
    "GREP_TIMEOUT",
    "INSTALL_HINT",
    "MAX_BASH_OUTPUT",
    "MAX_EDIT_BYTES",
    "MAX_GLOB_ENTRIES",
    "MAX_GLOB_SCAN",
    "MAX_GREP_MATCHES",
    "MAX_READ_BYTES",
    "SANDBOX_ENV",
    "SOCKETS_ENV",
    "TOOL_NAMES",
    "WRITABLE_ENV",
    "BashInput",
    "BoxSettings",
    "EditInput",
    "GlobInput",
    "GrepInput",
    "ReadInput",
    "SandboxChoice",
    "SandboxPlan",
    "ToolEffect",
    "ToolError",
    "ToolInput",
    "ToolOutput",
    "allowed_roots",
    "bash_tool",
    "bwrap_argv",
    "cap_output",
    "check_command",
    "check_sandbox",
    "choose_sandbox",
    "confine",
    "denied_reason",
    "dispatch_tool",
    "edit_file",
    "extra_links",
    "find_rg",
    "glob_files",
    "glob_walk",
    "grep_tool",
    "hard_link_refused",
    "host_sockets",
    "landlock_abi",
    "link_refused",
    "loop_sandbox",
    "normalize_command",
    "outermost",
    "parse_input",
    "probe_sandbox",
    "read_file",
    "require_sandbox",
    "resolve_path",
    "run_bash",
    "sandbox_argv",
    "sandbox_env",
    "sandbox_mode",
    "sandbox_plan",
    "scope_abstract_sockets",
    "search",
    "tool_effect",
    "tool_schema",
    "tool_schemas",
]
