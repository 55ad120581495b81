"""What a ``forgeflare`` start pays for: the suite and the loop start thousands of them.

Each test runs a real process and looks at what it imported or built; no timing
(``bench/bench_start.py`` measures the CPU).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from project_support import run_text

_PARTS = (
    "forgeflare.agent",
    "forgeflare.hooks",
    "forgeflare.supervisor",
    "forgeflare.supervisor.run._cli",
    "forgeflare.stophook",
    "forgeflare.mockapi",
    "forgeflare.report._cli",
    "forgeflare.fleet._cli",
    "forgeflare._review",
)


def test_version_prints_what_the_app_prints(tmp_path: Path) -> None:
    """The short way and typer's own ``--version`` (beside another option) say the same."""
    short = run_text([sys.executable, "-m", "forgeflare", "--version"], cwd=tmp_path)
    from typer.testing import CliRunner

    from forgeflare._app import app

    typer_way = CliRunner().invoke(app, ["--version", "--help"])
    assert short.stdout == typer_way.output
    assert short.stdout.startswith("forgeflare ")


def test_no_model_schema_is_built_at_import() -> None:
    """Every pydantic model builds its schema on first use (``defer_build``), not when a start
    imports it; and each one still builds, validates and describes itself then."""
    probe = (
        "import importlib, json, pydantic\n"
        f"for name in {list(_PARTS)!r}: importlib.import_module(name)\n"
        "def walk(c):\n"
        "    for s in c.__subclasses__():\n"
        "        yield s\n"
        "        yield from walk(s)\n"
        "ours = [m for m in walk(pydantic.BaseModel) if m.__module__.startswith('forgeflare')]\n"
        "built = [m.__qualname__ for m in ours if m.__pydantic_complete__]\n"
        "for m in ours: m.model_json_schema()\n"
        "print(json.dumps({'models': len(ours), 'built': built,"
        " 'after': sum(m.__pydantic_complete__ for m in ours)}))\n"
    )
    out = run_text([sys.executable, "-c", probe])
    seen = json.loads(out.stdout)
    assert seen["models"] > 40
    assert seen["built"] == []
    assert seen["after"] == seen["models"]


def test_no_model_reads_its_own_source_at_import() -> None:
    """Field descriptions are ``Field(description=...)``: pydantic's attribute docstrings
    (``use_attribute_docstrings``) walk the import's frames and parse the class's source at
    every class creation, 4-5% of a ``run`` or ``loop`` start. The settings, the tools' inputs
    and the hook and fleet files still describe every field."""
    probe = (
        "import importlib, json, pydantic\n"
        f"for name in {list(_PARTS)!r}: importlib.import_module(name)\n"
        "from forgeflare.supervisor.config._config import LoopConfig\n"
        "from forgeflare.agent.tools import _inputs\n"
        "from forgeflare.hooks._config import HookConfig, HooksFile\n"
        "from forgeflare.fleet._config import FleetLoop, FleetSettings\n"
        "def walk(c):\n"
        "    for s in c.__subclasses__():\n"
        "        yield s\n"
        "        yield from walk(s)\n"
        "ours = [m for m in walk(pydantic.BaseModel) if m.__module__.startswith('forgeflare')]\n"
        "reading = sorted(m.__qualname__ for m in ours\n"
        "                 if m.model_config.get('use_attribute_docstrings'))\n"
        "described = [f.annotation for f in LoopConfig.model_fields.values()]\n"
        "described += [_inputs.ReadInput, _inputs.GlobInput, _inputs.BashInput,\n"
        "              _inputs.EditInput, _inputs.GrepInput, HookConfig, HooksFile,\n"
        "              FleetLoop, FleetSettings]\n"
        "bare = [f'{m.__name__}.{k}' for m in described\n"
        "        for k, f in m.model_fields.items() if not f.description]\n"
        "print(json.dumps({'reading': reading, 'bare': bare, 'described': len(described)}))\n"
    )
    seen = json.loads(run_text([sys.executable, "-c", probe]).stdout)
    assert seen["reading"] == []
    assert seen["described"] > 15
    assert seen["bare"] == []
