"""Loops run the own agent's Bash commands under bubblewrap by default, where it works.

A scripted (mock API) iteration tries a write to ``~`` (refused), a ``pip install`` into the
project's venv and a write to ``~/.cache`` (both work). ``--no-sandbox`` turns it off; where
bubblewrap is missing the start banner says commands run unconfined and how to install it.
``HOME`` is a scratch folder in ``/var/tmp`` (outside the sandbox's private ``/tmp``, so the
read-only view of it is what is tried); nothing outside the test's folders is written.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_support import text_response, tool_response, tool_results, with_one_call
from mockapi_support import MockAPI, MockServer
from nobody_support import shared_scratch
from supervisor_agents.project import Project, base_env

BWRAP = shutil.which("bwrap")
needs_bwrap = [
    pytest.mark.linux_only("bubblewrap is Linux software"),
    pytest.mark.skipif(
        BWRAP is None, reason="needs bubblewrap (Debian: bubblewrap, installed by .ci/run)"
    ),
]


@pytest.fixture
def home() -> Iterator[Path]:
    """A scratch HOME with a ``~/.cache``, outside /tmp."""
    with shared_scratch("forgeflare-home-") as root:
        (root / ".cache" / "pip").mkdir(parents=True)
        yield root


def _wheel(folder: Path) -> Path:
    """A tiny pure-Python wheel, so that ``pip install`` needs no network."""
    files = {
        "tinypkg/__init__.py": b"VALUE = 42\n",
        "tinypkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg-0.1.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tinypkg-0.1.dist-info/RECORD,,")
    path = folder / "tinypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr("tinypkg-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def _script(wheel: Path) -> dict[str, Any]:
    install = (
        "python3 -m venv --without-pip --system-site-packages .venv && "
        f".venv/bin/python -m pip install -q --no-index --no-deps {wheel} && "
        ".venv/bin/python -c 'import tinypkg; print(tinypkg.VALUE)'"
    )
    return {
        "responses": [
            tool_response(("Bash", {"command": "touch ~/outside"})),
            tool_response(("Bash", {"command": "echo cached > ~/.cache/pip/probe.txt"})),
            tool_response(("Bash", {"command": install})),
            text_response("done"),
        ]
    }


def _env(server: MockServer, home: Path, **extra: str) -> dict[str, str]:
    env = base_env(
        ANTHROPIC_API_URL=server.url,
        ANTHROPIC_API_KEY="test",
        HOME=str(home),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        **extra,
    )
    for name in ("ANTHROPIC_BASE_URL", "XDG_CACHE_HOME", "PIP_CACHE_DIR", "TMPDIR"):
        env.pop(name, None)
    return env


@needs_bwrap[0]
@needs_bwrap[1]
async def test_a_loop_is_sandboxed_by_default(
    tmp_path: Path, home: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    wheel = _wheel(home / ".cache" / "pip")  # the rest of ~ is hidden in the box
    server = mock_api(_script(wheel))
    done = await project.arun("--max-iterations", "1", env=_env(server, home))
    said = done.stdout + done.stderr
    assert "sandbox: bubblewrap" in said, said
    results = [tool_results(r)[0] for r in server.requests()[1:]]
    touch, cache, install = results
    assert not touch["is_error"], touch["content"]  # ~ is a tmpfs in the box: dropped after
    assert not (home / "outside").exists()
    assert not cache["is_error"], cache["content"]
    assert (home / ".cache" / "pip" / "probe.txt").read_text() == "cached\n"
    assert not install["is_error"], install["content"]
    assert "42" in str(install["content"])
    assert list((project.dir / ".venv").glob("lib/python*/site-packages/tinypkg/__init__.py"))


@needs_bwrap[0]
@needs_bwrap[1]
def test_no_sandbox_turns_it_off(tmp_path: Path, home: Path, mock_api: MockAPI) -> None:
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    server = mock_api(with_one_call("Bash", {"command": "touch ~/outside"}))
    done = project.run("--max-iterations", "1", "--no-sandbox", env=_env(server, home))
    assert "sandbox: off" in done.stdout + done.stderr, done.stdout + done.stderr
    (touch,) = tool_results(server.requests()[1])
    assert not touch["is_error"], touch["content"]
    assert (home / "outside").exists()  # a scratch HOME: unconfined, the write got out


async def test_without_bubblewrap_the_banner_says_so(
    tmp_path: Path, home: Path, mock_api: MockAPI
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "git", "env"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    server = mock_api({"responses": [text_response("done")]})
    done = await project.arun("--max-iterations", "1", env=_env(server, home, PATH=str(bin_dir)))
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "sandbox:" in line]
    assert len(lines) == 1, done.stdout + done.stderr
    assert "run unconfined" in lines[0]
    assert "apt-get install bubblewrap" in lines[0]
    assert done.code != 2


async def test_an_exported_sandbox_variable_does_not_override_off(
    tmp_path: Path, home: Path, mock_api: MockAPI
) -> None:
    project = Project(tmp_path / "p")
    project.dir.mkdir()
    server = mock_api(
        with_one_call("Bash", {"command": "echo $FORGEFLARE_SANDBOX; touch ~/outside"})
    )
    env = _env(server, home, FORGEFLARE_SANDBOX="1", FRESHER_SECURITY_SANDBOX="off")
    await project.arun("--max-iterations", "1", env=env)
    (touch,) = tool_results(server.requests()[1])
    assert not touch["is_error"], touch["content"]
    assert (home / "outside").exists()  # a scratch HOME: off means off
