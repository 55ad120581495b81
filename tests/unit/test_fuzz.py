"""The fuzzer: damaged input to every reader a model, a hook, a crash or a user can feed.

Each target gets bytes that are mostly right (a valid file with a few bytes changed, cut
short, a surrogate escape, a non-UTF-8 byte, a value of the wrong type) and must answer with
its own one-line error, never anything else: any other exception is a traceback a user would
see, and fails the test. Run records and the trust store have their own fuzz tests.

Examples per target: ``FORGEFLARE_FUZZ_EXAMPLES`` (default 100, a few seconds each); with
``CI`` set, the hypothesis profile is derandomized (a fixed seed), else random each run.
``--hypothesis-show-statistics`` prints how many inputs each target saw.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import string
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SLOW_MACHINE_CHECKS
from forgeflare import cli
from forgeflare._errors import ConfigError, ForgeflareError
from forgeflare.agent import APIError, MessageAccumulator
from forgeflare.disk import json_objects
from forgeflare.disk._convergence import ConvergenceError, load_for_update, read_convergence
from forgeflare.hooks import (
    HookConfigError,
    ProcessOutcome,
    interpret_guard,
    interpret_post,
    load_hooks_file,
)
from forgeflare.mockapi import MockScriptError, encode_sse, load_script, render_events
from forgeflare.stophook import run_stop_hook, state_path
from forgeflare.supervisor.config import load_config

EXAMPLES = int(os.environ.get("FORGEFLARE_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[*SLOW_MACHINE_CHECKS],
)

# -- damaged bytes: a valid document, then a few edits ------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "a\udfffb", "end_turn", "PreToolUse", "Bash", "-1", ""])
)
_JSON = st.recursive(
    _SCALARS,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=5),
    max_leaves=20,
)


def _edits(doc: bytes) -> st.SearchStrategy[bytes]:
    """``doc`` with a few bytes replaced, inserted or cut: damage as a crash or a model makes."""

    @st.composite
    def damaged(draw: st.DrawFn) -> bytes:
        out = bytearray(doc)
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["replace", "insert", "cut", "truncate"]))
            at = draw(st.integers(0, len(out))) if out else 0
            junk = draw(
                st.sampled_from(
                    [b"\xff", b"\xc3", b"\\ud800", b'"', b"{", b"]", b"\x00", b"1e999999", b"-"]
                )
                | st.binary(min_size=1, max_size=3)
            )
            if kind == "replace" and out:
                out[at : at + len(junk)] = junk
            elif kind == "insert":
                out[at:at] = junk
            elif kind == "cut" and out:
                del out[at : at + draw(st.integers(1, 8))]
            else:
                del out[at:]
        return bytes(out)

    return damaged()


def _json_docs(valid: list[Any]) -> st.SearchStrategy[bytes]:
    """Valid examples damaged, random JSON of any shape, or random bytes."""
    encoded = [json.dumps(v).encode() for v in valid]
    return (
        st.sampled_from(encoded).flatmap(_edits)
        | _JSON.map(lambda v: json.dumps(v).encode())
        | st.binary(max_size=200)
    )


def _toml_docs(valid: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    encoded = [tomli_w.dumps(v).encode() for v in valid]
    tables = st.dictionaries(st.text(string.ascii_letters, max_size=8), _TOML_VALUES, max_size=4)
    return (
        st.sampled_from(encoded).flatmap(_edits)
        | tables.map(lambda d: tomli_w.dumps(d).encode())
        | st.binary(max_size=200)
    )


_TOML_VALUES = st.recursive(
    st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10) | st.floats(),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=10,
)


_BASE = tempfile.mkdtemp(prefix="forgeflare-fuzz-")
atexit.register(shutil.rmtree, _BASE, True)


def _scratch() -> Path:
    """A fresh directory for one example (all removed when the test process ends)."""
    return Path(tempfile.mkdtemp(dir=_BASE))


_T = TypeVar("_T")


def _read_or_refused(
    read: Callable[[Path], _T], name: str, data: bytes, refusal: type[Exception]
) -> _T | None:
    """``data`` written to a fresh file ``name`` and read: what it held, or ``None`` when the
    reader refused it with its own error (whose message must encode); anything else raises."""
    path = _scratch() / name
    path.write_bytes(data)
    try:
        return read(path)
    except refusal as exc:
        _encodes(str(exc))
        return None


def _one_line(text: str) -> None:
    assert "\n" not in text.strip(), text
    text.encode("utf-8")


def _encodes(*texts: str) -> None:
    """Every text forgeflare would print or write can be encoded (no lone surrogate)."""
    for text in texts:
        text.encode("utf-8")


# -- the targets ----------------------------------------------------------------------------

CONVERGENCE = [
    {"observations": [{"signal": "tests_pass", "reason": "ok", "tool_iterations": 3}]},
    {
        "observations": [],
        "final": {"reason": "end_turn", "total_tokens": 100, "tokens": {"input": 1}},
    },
]


@FUZZ
@given(_json_docs(CONVERGENCE))
def test_convergence_json(data: bytes) -> None:
    path = _scratch() / "convergence.json"
    path.write_bytes(data)
    try:
        state = read_convergence(path)
    except ConvergenceError as exc:
        _one_line(str(exc))
    else:
        assert state is not None
        _encodes(state.model_dump_json())
    _encodes(load_for_update(path).model_dump_json())


HOOKS = [
    {"hooks": [{"event": "PreToolUse", "match_tool": "Bash", "command": "g.sh", "timeout_ms": 5}]},
    {"hooks": [{"event": "Stop", "phase": "observe", "command": "x"}]},
]


@FUZZ
@given(_toml_docs(HOOKS))
def test_hooks_toml(data: bytes) -> None:
    hooks = _read_or_refused(
        lambda path: load_hooks_file(path, tools=["Bash", "Read"]),
        "hooks.toml",
        data,
        HookConfigError,
    )
    if hooks is not None:
        _encodes(hooks.model_dump_json())


CONFIGS = [
    {"limits": {"max_iterations": 3, "gate": "make test"}, "agent": {"backend": "forgeflare"}},
    {"hooks": {"timeout": 5}, "security": {"sandbox": "off"}, "finish": {"reviewer": "m"}},
]


@FUZZ
@given(_toml_docs(CONFIGS))
def test_config_toml(data: bytes) -> None:
    project = _scratch()
    (project / ".fresher").mkdir()
    (project / ".fresher" / "config.toml").write_bytes(data)
    try:
        load_config(project, env={})
    except ConfigError as exc:
        _encodes(str(exc))


SCRIPTS = [
    {
        "responses": [
            {
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 2},
            },
            {"error": {"status": 529, "type": "overloaded_error", "headers": {"retry-after": "0"}}},
            {"stream_error": {"type": "overloaded_error", "after_events": 3}},
        ],
        "when_exhausted": "end_turn",
    },
    {"conversations": [{"match": "x", "responses": [{"content": [], "delay_ms": 1}]}]},
]


@FUZZ
@given(_json_docs(SCRIPTS))
def test_mock_script(data: bytes) -> None:
    script = _read_or_refused(load_script, "script.json", data, MockScriptError)
    if script is None:
        return
    # The first request must be answerable: the rendered stream encodes.
    for response in getattr(script, "responses", [])[:1]:
        if getattr(response, "content", None) is not None:
            encode_sse(render_events(response, model="m"))


@FUZZ
@given(
    st.sampled_from(
        [
            json.dumps(
                {"hook_event_name": "Stop", "session_id": "s", "cwd": ".", "transcript_path": "t"}
            ),
            json.dumps({"last_assistant_message": "<loop-done>COMPLETE</loop-done>"}),
        ]
    )
    .map(str.encode)
    .flatmap(_edits)
    | _JSON.map(lambda v: json.dumps(v).encode())
)
def test_stop_hook_input(data: bytes) -> None:
    project = _scratch()
    (project / ".forgeflare").mkdir()
    state = state_path(project)
    state.parent.mkdir(parents=True, exist_ok=True)  # no earlier test may have made it
    state.write_text('{"frames": []}')
    outcome = run_stop_hook(
        data.decode("utf-8", "replace"), environ={}, cwd=project, now=datetime.now(UTC)
    )
    _encodes(outcome.stdout, outcome.stderr)


@FUZZ
@given(
    _json_docs(
        [
            {"action": "block", "reason": "no"},
            {"action": "signal", "signal": "tests_pass", "reason": "r"},
            {"action": "allow"},
        ]
    )
)
def test_hook_output(data: bytes) -> None:
    for interpret in (interpret_guard, interpret_post):
        verdict = interpret(ProcessOutcome("exited", 0, data))
        _encodes(repr(verdict))


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["message_start", "content_block_start", "content_block_delta", "message_delta",
                 "content_block_stop", "message_stop", "error", "ping"]
            ),
            _json_docs(
                [
                    {"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": "a"}},
                    {"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}},
                    {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
                ]
            ),
        ),
        max_size=6,
    )
)  # fmt: skip
def test_sse_events(events: list[tuple[str, bytes]]) -> None:
    seen: list[str] = []
    acc = MessageAccumulator(on_text=seen.append)
    try:
        for name, data in events:
            acc.feed(name, data.decode("utf-8", "replace"))
        acc.result()
    except APIError as exc:
        _encodes(str(exc))
    _encodes(*seen)


@FUZZ
@given(st.lists(_json_docs([{"ts": "t", "event": "iteration_started", "number": 1}]), max_size=5))
def test_events_jsonl(lines: list[bytes]) -> None:
    for row in json_objects(b"\n".join(lines)):
        _encodes(json.dumps(row, ensure_ascii=False))


# -- the command line -------------------------------------------------------------------------

# Commands that read what they are given and start nothing long-running.
_COMMANDS = [
    ["runs"],
    ["report"],
    ["hooks", "validate"],
    ["stop"],
    ["schema"],
    ["init"],
    ["mock-api", "--script"],
    ["stop-hook", "status"],
]
_ARGS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
) | st.sampled_from(
    ["n" * 300, "a/" * 3000, "--json", "--help", "-x", "--", "\udcff", "caf\udce9", "."]
)


@FUZZ
@given(st.sampled_from(_COMMANDS), st.lists(_ARGS, max_size=3))
def test_cli_arguments(command: list[str], args: list[str]) -> None:
    """Exit with a status and at most a line or a usage message, never a traceback."""
    # As Python sets them up on a UTF-8 POSIX locale: argv bytes that are not UTF-8 come back.
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    cwd = os.getcwd()
    os.chdir(_scratch())
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            cli.main([*command, *args])
    except SystemExit:
        pass
    except ForgeflareError:
        raise AssertionError("a ForgeflareError escaped main()") from None
    finally:
        os.chdir(cwd)
