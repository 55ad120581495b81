"""``forgeflare mock-api`` as a command: start-up, errors, signals."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from forgeflare.cli import main

CMD = [sys.executable, "-m", "forgeflare", "mock-api"]


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


Run = Callable[..., Result]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run the real console entry point in this process (a child costs a second of imports)."""

    def invoke(*args: str) -> Result:
        monkeypatch.setattr(sys, "argv", ["forgeflare", "mock-api", *args])
        code: int | str | None = 0
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        assert isinstance(code, int)
        return Result(code, out.out, out.err)

    return invoke


@pytest.mark.parametrize(
    ("text", "name", "fragment"),
    [
        ('{"responses": [{"content": [{"type": "tool_use"}]}]}', "s.json", "content[0].name"),
        ("responses = 1", "s.toml", "responses: Input should be a valid list"),
    ],
)
def test_malformed_script_is_one_line_and_exit_2(
    run: Run, tmp_path: Path, text: str, name: str, fragment: str
) -> None:
    script = tmp_path / name
    script.write_text(text)
    port_file = tmp_path / "port"
    out = run("--script", str(script), "--port-file", str(port_file))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"forgeflare: error: mock script {script}: ")
    assert fragment in lines[0]
    assert not port_file.exists()  # it failed before listening


def test_missing_script(run: Run, tmp_path: Path) -> None:
    out = run("--script", str(tmp_path / "nope.json"))
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        == f"forgeflare: error: mock script {tmp_path / 'nope.json'}: file not found"
    )


def test_help(run: Run) -> None:
    out = run("--help")
    assert out.returncode == 0
    for word in ("--script", "--host", "--port", "--record", "--port-file", "when_exhausted"):
        assert word in out.stdout
    root = subprocess.run(
        [sys.executable, "-m", "forgeflare", "--help"], capture_output=True, text=True, check=True
    )
    assert "mock-api" in root.stdout


def test_port_zero_announce_toml_and_sigint(tmp_path: Path) -> None:
    script = tmp_path / "s.toml"
    script.write_text('[[responses]]\ncontent = [{type = "text", text = "from toml"}]\n')
    port_file = tmp_path / "run" / "port"
    proc = subprocess.Popen(
        [*CMD, "--script", str(script), "--port", "0", "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the server announces itself
        port = int(port_file.read_text())
        assert port > 0
        assert line == f"listening on http://127.0.0.1:{port}\n"
        resp = httpx.post(
            f"http://127.0.0.1:{port}/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": []},
            timeout=10,
        )
        assert resp.json()["content"] == [{"type": "text", "text": "from toml"}]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert "stopped by SIGINT" in err


def test_port_in_use(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"responses": []}))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = run("--script", str(script), "--port", str(port))
    assert out.returncode == 1
    assert out.stderr.startswith(f"forgeflare: error: cannot listen on 127.0.0.1:{port}: ")
    assert len(out.stderr.strip().splitlines()) == 1


def test_unwritable_record_file(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"responses": []}))
    out = run("--script", str(script), "--record", str(tmp_path))  # a directory
    assert out.returncode == 1
    assert out.stderr.startswith(f"forgeflare: error: cannot open record file {tmp_path}: ")
