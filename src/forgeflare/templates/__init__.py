"""``forgeflare init`` and ``forgeflare demo``: project templates and the offline demo.

Errors of this part: :class:`TemplateError` (a ``ForgeflareError``): the target directory is
unusable, a file cannot be written, or the demo's loop did not finish in time. A demo mock
server that does not start is the mock API's own ``MockAPIError``.

Names are imported on first use (PEP 562): the CLI imports this package on every command,
and ``init``'s dependencies (pydantic models of the supervisor) are not light.
"""

from forgeflare.templates._demo import (
    DemoSummary,
    demo_story_text,
    run_demo,
    seed_files,
    summarize,
)
from forgeflare.templates._guard_script import (
    GUARD_SCRIPT,
    guard_core,
    render_guard_script,
)
from forgeflare.templates._init import (
    CLAUDE_AGENT_COMMAND,
    GITIGNORE_LINES,
    Action,
    InitAction,
    InitReport,
    TemplateError,
    TemplateFile,
    backend_config_toml,
    claude_config_toml,
    init_project,
    merge_gitignore,
    plan_init,
    template_files,
)

__all__ = [
    "CLAUDE_AGENT_COMMAND",
    "GITIGNORE_LINES",
    "GUARD_SCRIPT",
    "Action",
    "DemoSummary",
    "InitAction",
    "InitReport",
    "TemplateError",
    "TemplateFile",
    "backend_config_toml",
    "claude_config_toml",
    "demo_story_text",
    "guard_core",
    "init_project",
    "merge_gitignore",
    "plan_init",
    "render_guard_script",
    "run_demo",
    "seed_files",
    "summarize",
    "template_files",
]
