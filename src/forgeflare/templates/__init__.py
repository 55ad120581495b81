"""``forgeflare init`` and ``forgeflare demo``: project templates and the offline demo.

Errors of this part: :class:`TemplateError` (a ``ForgeflareError``): the target directory is
unusable, a file cannot be written, or the demo's loop did not finish in time. A demo mock
server that does not start is the mock API's own ``MockAPIError``.

The face holds what other code uses (the CLI imports its work from the modules themselves).
"""

from forgeflare.templates._demo import demo_story_text
from forgeflare.templates._demo import seed_files
from forgeflare.templates._demo import summarize
from forgeflare.templates._guard_script import GUARD_SCRIPT
from forgeflare.templates._guard_script import GUARD_SCRIPT_NAME
from forgeflare.templates._guard_script import guard_core
from forgeflare.templates._guard_script import render_guard_script
from forgeflare.templates._init import Action
from forgeflare.templates._init import GITIGNORE_LINES
from forgeflare.templates._init import TemplateError
from forgeflare.templates._init import TemplateUsageError
from forgeflare.templates._init import TemplateFile
from forgeflare.templates._init import backend_config_toml
from forgeflare.templates._init import init_project
from forgeflare.templates._init import merge_gitignore
from forgeflare.templates._init import plan_init
from forgeflare.templates._init import template_files

__all__ = [
    "GITIGNORE_LINES",
    "GUARD_SCRIPT",
    "GUARD_SCRIPT_NAME",
    "Action",
    "TemplateError",
    "TemplateFile",
    "TemplateUsageError",
    "backend_config_toml",
    "demo_story_text",
    "guard_core",
    "init_project",
    "merge_gitignore",
    "plan_init",
    "render_guard_script",
    "seed_files",
    "summarize",
    "template_files",
]
