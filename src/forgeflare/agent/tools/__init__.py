"""The agent's five tools (Read, Glob, Bash, Edit, Grep): schemas, effects and dispatch."""

from forgeflare.agent.tools._bash import (
    BASH_TIMEOUT,
    MAX_BASH_OUTPUT,
    bash_tool,
    cap_output,
    run_bash,
)
from forgeflare.agent.tools._edit import (
    MAX_EDIT_BYTES,
    edit_file,
)
from forgeflare.agent.tools._glob import (
    MAX_GLOB_ENTRIES,
    glob_files,
)
from forgeflare.agent.tools._grep import (
    GREP_TIMEOUT,
    MAX_GREP_MATCHES,
    find_rg,
    grep_tool,
    search,
)
from forgeflare.agent.tools._guard import (
    check_command,
    denied_reason,
    normalize_command,
)
from forgeflare.agent.tools._inputs import (
    BashInput,
    EditInput,
    GlobInput,
    GrepInput,
    ReadInput,
    ToolInput,
    parse_input,
    tool_schema,
)
from forgeflare.agent.tools._read import (
    MAX_READ_BYTES,
    read_file,
)
from forgeflare.agent.tools._registry import (
    TOOL_NAMES,
    dispatch_tool,
    tool_effect,
    tool_schemas,
)
from forgeflare.agent.tools._sandbox import (
    SANDBOX_ENV,
    check_sandbox,
    sandbox_argv,
    sandbox_mode,
)
from forgeflare.agent.tools._types import (
    ALLOW_PATHS_ENV,
    ToolEffect,
    ToolError,
    ToolOutput,
    allowed_roots,
    confine,
    resolve_path,
)

__all__ = [
    "ALLOW_PATHS_ENV",
    "BASH_TIMEOUT",
    "GREP_TIMEOUT",
    "MAX_BASH_OUTPUT",
    "MAX_EDIT_BYTES",
    "MAX_GLOB_ENTRIES",
    "MAX_GREP_MATCHES",
    "MAX_READ_BYTES",
    "SANDBOX_ENV",
    "TOOL_NAMES",
    "BashInput",
    "EditInput",
    "GlobInput",
    "GrepInput",
    "ReadInput",
    "ToolEffect",
    "ToolError",
    "ToolInput",
    "ToolOutput",
    "allowed_roots",
    "bash_tool",
    "cap_output",
    "check_command",
    "check_sandbox",
    "confine",
    "denied_reason",
    "dispatch_tool",
    "edit_file",
    "find_rg",
    "glob_files",
    "grep_tool",
    "normalize_command",
    "parse_input",
    "read_file",
    "resolve_path",
    "run_bash",
    "sandbox_argv",
    "sandbox_mode",
    "search",
    "tool_effect",
    "tool_schema",
    "tool_schemas",
]
