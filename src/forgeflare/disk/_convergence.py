"""``.forgeflare/convergence.json``: the agent <-> supervisor contract (hook spec R8).

The agent owns the file: it deletes it at start-up, appends PostToolUse signals to
``observations`` (the hook layer does that) and always writes ``final`` when a turn ends. The
loop supervisor reads ``final`` (with the agent's iteration report in it) after each iteration.
Every write is an atomic same-directory rename, so a supervisor never reads half a file. This
module sits on neutral ground: the agent, the hook layer and the supervisor all import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from forgeflare._errors import ForgeflareError
from forgeflare.disk._fsutil import atomic_write_text, read_json_model

__all__ = [
    "CONVERGENCE_RELPATH",
    "MAX_COUNT",
    "AgentReport",
    "ConvergenceError",
    "ConvergenceState",
    "Final",
    "Observation",
    "Tokens",
    "append_observations",
    "clear_convergence",
    "convergence_path",
    "load_for_update",
    "read_convergence",
    "write_final",
]

CONVERGENCE_RELPATH = Path(".forgeflare") / "convergence.json"


class ConvergenceError(ForgeflareError):
    """convergence.json exists but is not valid JSON of the expected shape."""


class Observation(BaseModel):
    """One PostToolUse signal."""

    model_config = ConfigDict(defer_build=True)

    signal: str
    reason: str = ""
    tool_iterations: int = 0


_MAX_TOKENS = 10**15
MAX_COUNT = 10**12
"""The largest count (tokens, turns, attempts) one API usage or stream event may carry; a
larger one is damage (the sum of many stays under the tokens' own bound)."""
_USAGE_FIELDS = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cache_read": "cache_read_input_tokens",
    "cache_write": "cache_creation_input_tokens",
}


def _count(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return 0


"""More than any run uses: a damaged record's count beyond it is refused when read."""


class Tokens(BaseModel):
    """Tokens by kind: the one shape from the agent's ``convergence.json`` to the report.

    ``input`` excludes cache reads (Codex's count includes them). :attr:`total` is the one
    meaning of a token total wherever one is printed: input + output + cache reads + cache
    writes.
    """

    model_config = ConfigDict(defer_build=True, extra="ignore")

    input: int = Field(
        default=0, ge=0, le=_MAX_TOKENS, description="Input tokens read fresh (not from the cache)."
    )
    output: int = Field(default=0, ge=0, le=_MAX_TOKENS, description="Output tokens.")
    cache_read: int = Field(
        default=0, ge=0, le=_MAX_TOKENS, description="Input tokens read from the prompt cache."
    )
    cache_write: int = Field(
        default=0, ge=0, le=_MAX_TOKENS, description="Input tokens written to the prompt cache."
    )

    @classmethod
    def from_usage(cls, usage: Mapping[str, object]) -> Tokens:
        """A Messages API ``usage`` object (a stream's JSON, or ``Usage.model_dump()``) as
        tokens by kind: the one mapping of its names. A count that is no whole number from 0
        to :data:`MAX_COUNT` counts 0 (a stream's damage never raises)."""
        return cls(**{kind: _count(usage.get(name)) for kind, name in _USAGE_FIELDS.items()})

    @property
    def total(self) -> int:
        """input + output + cache reads + cache writes."""
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )


def _unsaid(description: str) -> Any:
    """A field an agent may leave out: ``None`` until it says."""
    return Field(None, description=description)


class AgentReport(BaseModel):
    """What an agent reports of its work beside how it ended: the fields that ``final`` and the
    loop's iteration report share (one meaning, one declaration)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    cost_usd: float | None = _unsaid(
        "Cost in USD: the agent's own figure, else priced from the tokens; null when unknown."
    )
    resets_at: str | None = _unsaid(
        "For rate_limited: when the usage window resets (ISO 8601 UTC), if known."
    )
    session_id: str | None = _unsaid(
        "The agent's session (Claude Code session, Codex thread, forgeflare session folder)."
    )
    model: str | None = _unsaid("The model the agent used.")
    detail: str | None = _unsaid("A short description of an error (e.g. ``529 overloaded_error``).")
    question: str | None = _unsaid(
        "The agent's question when it parked the loop (``<loop-done>BLOCKED</loop-done>``)."
    )


class Final(AgentReport):
    """How the agent's turn ended, with its report to the loop; written once per turn.

    Beside the hook spec's fields the agent reports what a loop records of an iteration:
    tokens by kind, requests, and the :class:`AgentReport` fields (cost, model, session, for a
    usage limit its reset time, for an error its detail).
    """

    reason: str
    tool_iterations: int = 0
    total_tokens: int = 0
    timestamp: str = ""
    tokens: Tokens | None = Field(
        None,
        description="Tokens by kind: ``input`` (without cache reads), ``output``, ``cache_read``, "
        "``cache_write`` (the one :class:`Tokens` type, to the report).",
    )
    requests: int = 0
    transient: bool | None = Field(
        None,
        description="For ``api_error``: whether the failure was transient (overloaded, 5xx, "
        "connection).",
    )
    signal: str | None = Field(
        None,
        description="The completion tag of the final message "
        "(``<loop-done>COMPLETE</loop-done>``): a claim the loop judges.",
    )


class ConvergenceState(BaseModel):
    """The whole file."""

    model_config = ConfigDict(defer_build=True)

    observations: list[Observation] = Field(default_factory=list)
    final: Final | None = None


def convergence_path(project_dir: Path) -> Path:
    """Where the file lives in a project."""
    return project_dir / CONVERGENCE_RELPATH


def read_convergence(path: Path) -> ConvergenceState | None:
    """The state in ``path``, or ``None`` when there is no file.

    Raises :class:`ConvergenceError` when the file cannot be read or parsed.
    """
    return read_json_model(
        path,
        ConvergenceState,
        ConvergenceError,
        cannot_read="cannot read",
        invalid="not a valid convergence state",
    )


def clear_convergence(path: Path) -> str | None:
    """Delete a stale file. Returns a warning to log instead of raising (it is not fatal)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"could not delete stale {path}: {exc.strerror}"
    return None


def load_for_update(path: Path) -> ConvergenceState:
    """The state to update: empty when there is no file or it is corrupt."""
    try:
        return read_convergence(path) or ConvergenceState()
    except ConvergenceError:
        # A corrupt file is replaced: the agent owns it, and losing old entries beats
        # losing every new one.
        return ConvergenceState()


def write_final(path: Path, final: Final) -> None:
    """Set the ``final`` key, keeping observations. Raises ``OSError`` on failure."""
    state = load_for_update(path)
    state.final = final
    atomic_write_text(path, state.model_dump_json(indent=2) + "\n")


def append_observations(path: Path, observations: list[Observation]) -> None:
    """One read-modify-write that appends ``observations`` (the hook layer records PostToolUse
    signals with it). Raises ``OSError`` on failure."""
    state = load_for_update(path)
    state.observations.extend(observations)
    atomic_write_text(path, state.model_dump_json(indent=2) + "\n")
