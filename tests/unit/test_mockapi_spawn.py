"""Starting ``forgeflare mock-api`` as a child and stopping it: the port from its port file,
its own process group, a child that exits (its stderr in the one-line error), a stop that
reaps and may be repeated."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from forgeflare.mockapi import MockAPIError, start_mock_api, stop_mock_api


def test_started_listening_in_its_own_group_and_stopped(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"content": [{"type": "text", "text": "Hi"}]}]}))
    stale = tmp_path / "port"
    stale.write_text("1")  # a port file from an earlier server is never taken for this one's
    proc, port = start_mock_api(
        script,
        port_file=stale,
        stderr_path=tmp_path / "stderr.log",
        args=["--host", "127.0.0.1", "--port", "0"],
    )
    try:
        assert port != 1
        assert os.getpgid(proc.pid) == proc.pid  # Ctrl+C on the terminal does not reach it
        answer = httpx.post(
            f"http://127.0.0.1:{port}/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
            timeout=60,
        )
        assert answer.status_code == 200
        assert "Hi" in answer.text
    finally:
        stop_mock_api(proc)
    assert proc.returncode is not None
    stop_mock_api(proc)  # idempotent


def test_a_child_that_exits_is_an_error_with_its_stderr(tmp_path: Path) -> None:
    bad = tmp_path / "script.json"
    bad.write_text('{"responses": "not a list"}')
    with pytest.raises(MockAPIError) as info:
        start_mock_api(bad, port_file=tmp_path / "port", stderr_path=tmp_path / "stderr.log")
    message = str(info.value)
    assert message.startswith("forgeflare mock-api exited with status 2: ")
    assert "script.json" in message


def test_a_python_that_cannot_start_it_is_an_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'no such module' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(MockAPIError, match=r"exited with status 3: no such module"):
        start_mock_api(
            tmp_path / "script.json",
            port_file=tmp_path / "port",
            stderr_path=tmp_path / "stderr.log",
            python=str(fake),
        )
