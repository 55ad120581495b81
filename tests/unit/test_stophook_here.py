"""``stop_hook_here``: ``forgeflare stop-hook`` through its real entry in the test process, which
it leaves as it found it, and whose tracebacks still fail the test."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from pathlib import Path

import pytest

import forgeflare.stophook._entry as entry
from stophook_support import reason_of, stop_hook_here, write_state


def _process() -> tuple[object, ...]:
    root = logging.getLogger()
    handlers = tuple(signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    return (
        dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, list(sys.argv),
        handlers, root.level, list(root.handlers),
    )  # fmt: skip


def test_the_real_hook_sees_exactly_the_given_environment_and_folder(tmp_path: Path) -> None:
    before = _process()
    env = {"PATH": os.environ["PATH"], "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    write_state(tmp_path, updated_at="2099-01-01T00:00:00Z")  # fresh whatever the clock
    stop = {"hook_event_name": "Stop", "last_assistant_message": "Not yet."}
    out = stop_hook_here(cwd=tmp_path, env=env, input=json.dumps(stop))
    assert "[ITERATION 2/5]" in reason_of(out)
    assert out.args[1:] == ["stop-hook"]
    assert _process() == before
    # This process's own environment, given as it is (not a copy), is the hook's too: it
    # finds the loop where XDG_STATE_HOME says.
    again = stop_hook_here(cwd=tmp_path, env=os.environ, input=json.dumps(stop))
    assert "[ITERATION 3/5]" in reason_of(again)
    assert _process() == before


def test_status_exit_and_streams_come_back_as_a_process_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def fake(settings_for: object = None) -> int:
        seen["env"], seen["cwd"] = dict(os.environ), os.getcwd()
        seen["stdin"] = sys.stdin.buffer.read()
        print("out\r\nline")
        print("err", file=sys.stderr)
        logging.getLogger("httpx").warning("as a fresh process logs it")
        signal.signal(signal.SIGTERM, lambda *_: None)
        logging.basicConfig(level=logging.DEBUG)
        sys.exit(3)

    monkeypatch.setattr(entry, "run_stop_hook_process", fake)
    before = _process()
    out = stop_hook_here(cwd=tmp_path, env={"ONLY": "this"}, input="é")
    assert (out.returncode, out.stdout, out.stderr) == (
        3,
        "out\nline\n",
        "err\nas a fresh process logs it\n",
    )
    assert seen == {"env": {"ONLY": "this"}, "cwd": str(tmp_path), "stdin": "é".encode()}
    assert _process() == before


def test_a_traceback_propagates_and_the_process_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(settings_for: object = None) -> int:
        os.environ["LEAK"] = "1"
        print("half a line", file=sys.stderr)
        raise RuntimeError("a bug")

    monkeypatch.setattr(entry, "run_stop_hook_process", broken)
    before = _process()
    with pytest.raises(RuntimeError, match="a bug") as caught:
        stop_hook_here(cwd=tmp_path, env={})
    assert "half a line" in "".join(caught.value.__notes__)
    assert _process() == before
    assert "LEAK" not in os.environ
