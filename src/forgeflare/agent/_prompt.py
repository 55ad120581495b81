"""The system prompt: where the agent is, how to use its five tools, the project's rules.

The project's own instructions come from the first of ``AGENTS.md`` and ``CLAUDE.md`` that
exists in its directory, and in a loop also from ``.fresher/AGENTS.md``; each is named in the
prompt and cut at :data:`INSTRUCTIONS_CAP` characters (saying so), so a huge file cannot crowd
out the conversation.
"""

from __future__ import annotations

import platform
from pathlib import Path

from forgeflare._completion import COMPLETE_TAG
from forgeflare.disk import read_limited_text

__all__ = ["INSTRUCTIONS_CAP", "build_system_prompt", "project_instructions"]

INSTRUCTIONS_CAP = 20_000
"""Characters of one instructions file put into the system prompt."""

_GUIDANCE = """\
You are a coding agent working in a software project. Use the tools to inspect and change it:
- Read: read a file (up to 1 MB). Read before you Edit.
- Glob: find files by pattern, e.g. "src/**/*.py".
- Grep: search file contents with a regular expression (ripgrep syntax).
- Edit: replace an exact string in a file (old_str must match exactly once unless replace_all);
  an empty old_str creates a missing file or appends to an existing one.
- Bash: run a shell command in the project directory (120 s timeout); use it to run tests,
  builds and git.
Several Read, Glob and Grep calls in one response run in parallel.
Work in small verified steps: make a change, run the relevant check, then continue.
If a tool call is blocked by a hook, read the reason and take another approach.
When the task is done, say so briefly and stop."""


_LOOP_DONE = (
    "\nYou run in a loop that restarts you until the work is done. Commit your work with git "
    "as you go. When the whole task is done and committed, end your final message with "
    f"{COMPLETE_TAG} on a line of its own (not in code); the loop then checks the claim "
    "(its gate, its reviewer, a clean work tree). Do not write it before.\n"
)
"""What the system prompt says in a loop: how to claim completion."""


def project_instructions(cwd: Path, *, loop: bool = False) -> list[tuple[str, str]]:
    """``(name, text)`` of the project's instruction files, each capped."""
    names = [next((n for n in ("AGENTS.md", "CLAUDE.md") if (cwd / n).is_file()), None)]
    if loop:
        names.append(".fresher/AGENTS.md")
    found = []
    for name in names:
        if name is None:
            continue
        try:
            text = read_limited_text(cwd / name, folder=cwd, errors="replace")
        except OSError:
            continue
        if len(text) > INSTRUCTIONS_CAP:
            cut = len(text) - INSTRUCTIONS_CAP
            text = text[:INSTRUCTIONS_CAP] + f"\n[... {cut} more characters of {name} cut ...]"
        if text.strip():
            found.append((name, text.strip()))
    return found


def build_system_prompt(cwd: Path, *, loop: bool = False) -> str:
    """The prompt with the working directory, platform and project instructions."""
    prompt = (
        f"{_GUIDANCE}\n\n"
        f"Working directory: {cwd}\n"
        f"Platform: {platform.system()} {platform.release()} ({platform.machine()})\n"
    )
    if loop:
        # One meaning of the tag for every backend: a claim the loop judges (gate, reviewer,
        # a clean committed tree), never a finish by itself.
        prompt += _LOOP_DONE
    for name, text in project_instructions(cwd, loop=loop):
        prompt += f"\nProject instructions from {name}:\n<instructions>\n{text}\n</instructions>\n"
    return prompt
