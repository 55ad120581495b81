"""The five tools' inputs as pydantic models, and the tool schemas the API gets from them.

Field names are the Rust original's (``file_path``, ``old_str``...), so prompts written for
it carry over. Each model's docstring is the tool's description and each field's
``description`` its own: :func:`tool_schema` turns a model into the Messages API's tool
definition, so what the model is told and what is checked cannot drift apart.

:func:`parse_input` checks a ``tool_use`` input and answers a bad one with a ``ToolError``
written for the model ("Read: missing required field 'file_path'"). It is strict (a number
is not a path), except that booleans may come as the strings "true"/"false" (models send
them so; accepting them costs nothing), and an empty optional string counts as absent.
"""

from __future__ import annotations

from types import NoneType
from typing import Any, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from forgeflare.agent.tools._types import ToolError

__all__ = [
    "BashInput",
    "EditInput",
    "GlobInput",
    "GrepInput",
    "ReadInput",
    "ToolInput",
    "parse_input",
    "tool_schema",
]

_Model = TypeVar("_Model", bound="ToolInput")


class ToolInput(BaseModel):
    """Base of the tool inputs: strict types, unknown keys ignored, docstrings described."""

    model_config = ConfigDict(defer_build=True, strict=True, extra="ignore")

    @field_validator("*", mode="before")
    @classmethod
    def _lenient(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields[info.field_name or ""]
        word = value.strip().lower() if isinstance(value, str) else None
        if field.annotation in (bool, bool | None) and word in ("true", "false"):
            return word == "true"
        if not field.is_required() and value == "":
            return None
        return value


class ReadInput(ToolInput):
    """Read a UTF-8 text file and return its contents verbatim. Limit: 1 MB; binary files
    and directories are refused (use Glob to list a directory)."""

    file_path: str = Field(
        description="Path of the file, absolute or relative to the working directory."
    )


class GlobInput(ToolInput):
    """Find files by name pattern, e.g. '**/*.py' or 'src/*.rs' ('**' spans directories).
    Returns matching paths sorted, one per line, directories ending in '/'; at most 1000
    entries. Hidden files match only when the pattern names the leading dot."""

    pattern: str = Field(description="Glob pattern, relative to path.")
    path: str | None = Field(
        None, description="Directory to search in (default: the working directory)."
    )


class BashInput(ToolInput):
    """Run a command with bash in the working directory; stdout and stderr are merged.
    Timeout: 120 s (the process group is then killed and partial output returned). Output
    over 100 KB is cut in the middle. No stdin; background processes are stopped when the
    command finishes. Destructive commands (rm -rf /, mkfs, dd to a device, force pushes,
    ...) are refused."""

    command: str = Field(description="The bash command to run.")
    description: str | None = Field(None, description="A few words saying what the command is for.")


class EditInput(ToolInput):
    """Edit a text file by exact replacement: old_str must occur exactly once (whitespace
    included) unless replace_all is true. An empty old_str creates a missing file (with
    parent directories) or appends new_str to an existing one. Limits: old_str and new_str
    100 KB each; the file 1 MB."""

    file_path: str = Field(
        description="Path of the file, absolute or relative to the working directory."
    )
    old_str: str = Field(description="Exact text to replace; empty to create or append.")
    new_str: str = Field(description="Replacement text.")
    replace_all: bool = Field(
        False, description="Replace every occurrence of old_str (default false)."
    )


class GrepInput(ToolInput):
    """Search file contents with a regular expression (ripgrep; .gitignore and hidden files
    are skipped). Returns 'path:line:text' lines sorted by path, at most 50 matches."""

    pattern: str = Field(description="Regular expression to search for.")
    path: str | None = Field(
        None, description="File or directory to search (default: the working directory)."
    )
    file_type: str | None = Field(
        None, description="Only search this file type, e.g. 'py', 'rust', 'js', 'md'."
    )
    case_sensitive: bool | None = Field(
        None,
        description="true or false to force it; omitted: smart case (insensitive unless the "
        "pattern has a capital letter).",
    )


def _words(text: str | None) -> str:
    return " ".join((text or "").split())


_JSON_TYPES: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _json_type(annotation: Any) -> str:
    """A field's JSON type: ``str | None`` is a plain string left out of ``required``."""
    kinds = [kind for kind in get_args(annotation) or (annotation,) if kind is not NoneType]
    return _JSON_TYPES[kinds[0]]


def tool_schema(name: str, model: type[ToolInput]) -> dict[str, Any]:
    """The Messages API tool definition: ``name``, ``description``, ``input_schema``.

    Optional fields are plain typed properties left out of ``required`` (the API has no use
    for pydantic's ``anyOf ... null``, titles or defaults). Read from the fields, not from
    pydantic's JSON schema, which would build every model's validator at every agent start.
    """
    properties = {
        key: {"type": _json_type(field.annotation), "description": _words(field.description)}
        for key, field in model.model_fields.items()
    }
    required = [key for key, field in model.model_fields.items() if field.is_required()]
    return {
        "name": name,
        "description": _words(model.__doc__),
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


def parse_input(model: type[_Model], tool: str, data: dict[str, Any]) -> _Model:
    """``data`` checked as ``model``; a ``ToolError`` naming the tool and the first bad field."""
    # A null counts as absent: a required field is then missing, an optional one default.
    present = {key: value for key, value in data.items() if value is not None}
    try:
        return model.model_validate(present)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else "?"
        if error["type"] == "missing":
            raise ToolError(f"{tool}: missing required field '{key}'") from None
        value = error["input"]
        if model.model_fields[key].annotation in (bool, bool | None):
            raise ToolError(f"{tool}: '{key}' must be true or false, got {value!r}") from None
        raise ToolError(f"{tool}: '{key}' must be a string, got {type(value).__name__}") from None
