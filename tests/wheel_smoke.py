"""The built wheel alone, in a fresh venv: what a user gets from ``pipx install forgeflare``.

``python tests/wheel_smoke.py WHEEL`` (used by ``make dist``, and by the test suite on a wheel
it builds) installs the wheel into a new virtual environment and runs ``forgeflare --version``
(must equal the package version), ``forgeflare init``, ``forgeflare demo`` (templates, the demo
story and the mock server all come from package data), the stop-hook entry and its Claude
Code plugin (``stop-hook install --plugin``). Exit 0 when all
pass; otherwise the failing step and its output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

PLUGIN_FILES = (
    ".claude-plugin/plugin.json",
    "hooks/hooks.json",
    "commands/loop.md",
    "commands/cancel.md",
    "commands/status.md",
    "commands/answer.md",
)
"""The Claude Code plugin's files (package data), as ``install --plugin`` writes them."""

_PROMPT_CHECK = (
    "from forgeflare.supervisor import default_prompt; print(default_prompt('building'))"
)


def run(argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        sys.exit(
            f"wheel smoke: {' '.join(argv)} exited {done.returncode}\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def smoke(wheel: Path) -> None:
    version = re.match(r"forgeflare-([^-]+)-", wheel.name)
    if version is None:
        sys.exit(f"wheel smoke: {wheel.name} is not a forgeflare wheel")
    with tempfile.TemporaryDirectory(prefix="forgeflare-wheel-") as tmp:
        root = Path(tmp)
        # No pip inside: this interpreter's pip installs into the venv (`pip --python`), as
        # pipx's shared pip does; the venv still holds nothing but the wheel and its
        # dependencies, and skipping ensurepip saves 5 s. --no-compile: pip would compile every
        # dependency's modules (rich, pygments, pydantic: half the install's CPU); the smoke
        # commands compile what they import, as a user's first run would.
        venv.create(root / "venv", with_pip=False)
        bin_dir = root / "venv" / "bin"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FRESHER_", "ANTHROPIC_"))}
        env.pop("PYTHONPATH", None)
        env.update(XDG_CONFIG_HOME=str(root / "config"), HOME=str(root), NO_COLOR="1")
        pip = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python")]
        run([*pip, "install", "--quiet", "--no-compile", str(wheel)], root, env)
        out = run([str(bin_dir / "forgeflare"), "--version"], root, env)
        if out.strip() != f"forgeflare {version.group(1)}":
            sys.exit(
                f"wheel smoke: --version says {out.strip()!r}, the wheel is {version.group(1)}"
            )
        run([str(bin_dir / "forgeflare"), "init", "project"], root, env)
        for rel in (".forgeflare/hooks.toml", ".fresher/hooks/started", "IMPLEMENTATION_PLAN.md"):
            if not (root / "project" / rel).exists():
                sys.exit(f"wheel smoke: init wrote no {rel} (package data missing?)")
        prompt = run(
            [str(bin_dir / "python"), "-c", _PROMPT_CHECK], root, env
        )  # the default mode prompts are package data
        if "BUILDING mode" not in prompt:
            sys.exit(f"wheel smoke: no default building prompt (package data missing?)\n{prompt}")
        demo = run([str(bin_dir / "forgeflare"), "demo", "--dir", str(root / "demo")], root, env)
        if "The loop finished complete." not in demo:
            sys.exit(f"wheel smoke: the demo did not complete\n{demo}")
        for hook in (
            [str(bin_dir / "forgeflare"), "stop-hook"],
            [str(bin_dir / "forgeflare-stop-hook")],
        ):
            run(hook, root / "project", env, stdin='{"hook_event_name": "Stop"}')
        plugin = root / "plugin"
        install = ["stop-hook", "install", "--plugin", "--plugin-dir", str(plugin)]
        run([str(bin_dir / "forgeflare"), *install], root, env)
        for rel in PLUGIN_FILES:
            if not (plugin / rel).is_file():
                sys.exit(f"wheel smoke: install --plugin wrote no {rel} (package data missing?)")
        hooks = (plugin / "hooks" / "hooks.json").read_text(encoding="utf-8")
        if f'"{bin_dir / "forgeflare"} stop-hook"' not in hooks:
            sys.exit(f"wheel smoke: the plugin's Stop hook is not the absolute command\n{hooks}")
    print(f"wheel smoke: {wheel.name}: --version, init, demo, stop-hook and its plugin work")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/wheel_smoke.py WHEEL")
    smoke(Path(sys.argv[1]).resolve())
