"""``FLEET.toml``: many loops, validated like every config (one line per error).

A fleet file has one ``[fleet]`` table (name, how many loops at once, one budget, the landing
gate) and a ``[[loop]]`` table per loop (name, repository, base branch, mode, task, limits,
backend). Every mistake is one :class:`FleetConfigError` naming the file, the loop and the key.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from forgeflare._errors import ConfigError
from forgeflare.disk import CONFIG_LIMIT, Loc, error_key, error_problem, read_named_text
from forgeflare.supervisor import BackendName

__all__ = [
    "FleetConfigError",
    "FleetFile",
    "FleetLoop",
    "FleetSettings",
    "fleet_problems",
    "load_fleet_file",
    "parse_fleet_text",
]

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


class FleetConfigError(ConfigError):
    """The fleet file is malformed: TOML syntax, a missing or unknown key, a bad value."""


def duration_seconds(value: str | float) -> float:
    """``90s``, ``15m``, ``2h``, ``1d`` or plain seconds."""
    if isinstance(value, int | float):
        return float(value)
    m = _DURATION.match(value.strip())
    if m is None:
        raise ValueError(f"{value!r} is not a duration (90s, 15m, 2h, 1d)")
    return float(m.group(1)) * _UNITS[m.group(2)]


class _Table(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)


def _name_like(example: str) -> AfterValidator:
    """Checks a fleet's or a loop's name; the error shows ``example``."""

    def check(value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"lower-case letters, digits and '-', at most 40, e.g. {example!r}")
        return value

    return AfterValidator(check)


_FleetName = Annotated[str, _name_like("night")]
_LoopName = Annotated[str, _name_like("parser")]


class FleetSettings(_Table):
    """``[fleet]``: settings for all loops together."""

    name: _FleetName = Field(
        description="The fleet's name: branches are ``forgeflare/<fleet>/<loop>``. Lower case, "
        "digits, -."
    )
    parallel: int = Field(default=1, ge=1, le=64, description="How many loops run at once.")
    max_cost: float | None = Field(
        default=None,
        ge=0,
        description="USD for all loops together; when spent, the remaining loops stop (finish "
        "budget).",
    )
    gate: str = Field(
        "",
        description="A command that must pass in a loop's worktree before it lands (e.g. ``make "
        "test``).",
    )
    land: Literal["merge", "pr", "none"] = Field(
        "merge",
        description="``merge``: rebase and fast-forward the base branch; ``pr``: push and open a "
        "pull request with ``gh``; ``none``: leave each loop's branch.",
    )
    image: str = Field(
        "ghcr.io/your-org/forgeflare:latest",
        description="Container image for ``fleet k8s`` (built from the generated Containerfile).",
    )
    secret: str = Field(
        "",
        description="Kubernetes Secret with the API key and git credentials (default "
        "``forgeflare-<name>``).",
    )


class FleetLoop(_Table):
    """One ``[[loop]]``: a ``forgeflare loop`` in its own worktree and branch."""

    name: _LoopName = Field(
        description="The loop's name (unique in the fleet): lower-case letters, digits and '-'."
    )
    repo: str = Field(
        ".", description="A local path (relative to the fleet file) or a git URL, which is cloned."
    )
    base: str = Field("main", description="The branch the loop starts from and lands into.")
    mode: Literal["planning", "building"] = Field("building", description="Loop mode.")
    prompt: str = Field(
        min_length=1,
        description="The task: put first in the agent's first message of every iteration.",
    )
    plan: str = Field(
        "",
        description="This loop's plan file (building mode completes when its boxes are checked). "
        "Empty: completion by convergence signal (``<loop-done>COMPLETE</loop-done>``).",
    )
    max_iterations: int = Field(
        default=10, ge=0, description="Iteration limit of this loop (0 = unlimited)."
    )
    max_runtime: str = Field(
        "4h", description="Wall-clock limit of this loop (``90s``, ``15m``, ``2h``)."
    )
    max_cost: float | None = Field(default=None, ge=0, description="USD for this loop alone.")
    backend: BackendName = Field("forgeflare", description="The agent backend.")
    model: str = Field("", description="Model for the agent (empty: the backend's default).")
    agent_command: str = Field("", description="The command for backend ``command``.")

    @field_validator("max_runtime")
    @classmethod
    def _runtime(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def runtime_seconds(self) -> float:
        return duration_seconds(self.max_runtime)


class FleetFile(_Table):
    """The whole fleet file."""

    fleet: FleetSettings
    loop: list[FleetLoop] = Field(min_length=1)

    def branch(self, loop: FleetLoop) -> str:
        """The loop's branch: ``forgeflare/<fleet>/<loop>``."""
        return f"forgeflare/{self.fleet.name}/{loop.name}"

    @property
    def secret_name(self) -> str:
        return self.fleet.secret or f"forgeflare-{self.fleet.name}"


def _loop_key(data: dict[str, Any], loc: Loc) -> str:
    """``loop[1] (name): key`` for a loop's key (the name helps find it), else the key."""
    if len(loc) > 1 and loc[0] == "loop" and isinstance(loc[1], int):
        loops = data.get("loop") or []
        name = loops[loc[1]].get("name") if loc[1] < len(loops) else None
        where = f"loop[{loc[1]}]" + (f" ({name})" if isinstance(name, str) else "")
        rest = error_key(loc[2:])
        return where + (f": {rest}" if rest else "")
    return error_key(loc)


_KNOWN: dict[str, frozenset[str]] = {
    "": frozenset(FleetFile.model_fields),
    "fleet": frozenset(FleetSettings.model_fields),
    "loop": frozenset(FleetLoop.model_fields),
}


def _did_you_mean(loc: Loc) -> str:
    """``; did you mean 'parallel'?`` for an unknown key close to a known one."""
    if not loc or not isinstance(loc[-1], str):
        return ""
    table = str(loc[0]) if len(loc) > 1 else ""
    close = difflib.get_close_matches(loc[-1], sorted(_KNOWN.get(table, ())), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def fleet_problems(data: dict[str, Any], path: Path) -> list[str]:
    """Every mistake in a fleet file's parsed TOML, one line each (empty: none)."""
    try:
        fleet = FleetFile.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            loc = tuple(error["loc"])
            hint = _did_you_mean(loc) if error["type"] == "extra_forbidden" else ""
            lines.append(f"{path}: {_loop_key(data, loc)}: {error_problem(error)}{hint}")
        return lines
    lines = []
    names = [loop.name for loop in fleet.loop]
    for dupe in sorted({n for n in names if names.count(n) > 1}):
        lines.append(f"{path}: loop name {dupe!r} is used twice")
    for index, loop in enumerate(fleet.loop):
        if loop.backend == "command" and not loop.agent_command:
            lines.append(
                f"{path}: loop[{index}] ({loop.name}): backend 'command' needs agent_command"
            )
    return lines


def parse_fleet_text(text: str, path: Path) -> FleetFile:
    """Parse and validate a fleet file's text; ``path`` names it in errors.

    Raises :class:`FleetConfigError` with every mistake, one line each.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FleetConfigError(f"{path}: not valid TOML: {exc}") from exc
    problems = fleet_problems(data, path)
    if problems:
        raise FleetConfigError("\n".join(problems))
    return FleetFile.model_validate(data)


def load_fleet_file(path: Path) -> FleetFile:
    """Read and validate ``path``."""
    if not path.exists() and not path.is_symlink():
        raise FleetConfigError(f"{path}: no such fleet file")
    text = read_named_text(path, str(path), error=FleetConfigError, limit=CONFIG_LIMIT)
    return parse_fleet_text(text, path)
