"""Fixtures shared by every test folder."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from claude_code_support import require_claude_code
from mockapi_support import MockServer, start_mock_process, start_mock_server
from platform_support import LINUX_ONLY_MARKER, linux_only_skip_reason, reset_subreaper

__all__ = ["MockServer"]

# Thousands of Python processes start during the suite: let them cache forgeflare's bytecode.
# With PYTHONDONTWRITEBYTECODE set (shells and CI images set it), each process of a fresh clone
# compiled all of forgeflare from source again: 0.4 s of CPU where loading takes 0.05 s.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
# Pydantic looks for plugins (an entry-point scan, importing importlib.metadata) the first time a
# process builds a validator: about 20 ms of CPU per forgeflare start, to find none (the venv
# installs no plugin, so skipping the scan changes nothing a test checks).
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "1"
# The projects tests make are their own: trust them all, and keep trust records (and any other
# user configuration) out of the real config directory. Trust tests drop FORGEFLARE_TRUST.
os.environ["FORGEFLARE_TRUST"] = "1"
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="forgeflare-test-config-")
atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], True)
# The machine-wide usage windows (a test's rate limit must not make real loops wait).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="forgeflare-test-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)
# The price rates forgeflare keeps (``_pricing``): one folder per worker, shared by the processes
# its tests start, as a user's are, and never the real one.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="forgeflare-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)


# Property and fuzz tests: a fixed seed in CI (a failure there reproduces), a random one locally
# (each run explores new inputs). CI systems set CI; `.ci/run` sets it too. Neither profile has a
# deadline or the "slow generation" health checks: on a busy machine (both cores taken by other
# work) generation and each example take several times longer, and that is not a bug.
SLOW_MACHINE_CHECKS = (
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
)
settings.register_profile(
    "ci",
    derandomize=True,
    print_blob=True,
    deadline=None,
    suppress_health_check=SLOW_MACHINE_CHECKS,
)
settings.register_profile("dev", deadline=None, suppress_health_check=SLOW_MACHINE_CHECKS)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# The helpers of the tests that drive a real Claude Code or Codex CLI.
_REAL_CLI_SUPPORT = {"claude_code_support", "codex_support", "opencode_support", "pi_support"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", LINUX_ONLY_MARKER)
    config.addinivalue_line(
        "markers", "mock_api_process: the mock_api fixture starts the real forgeflare mock-api"
    )


def is_slow(item: pytest.Item) -> bool:
    """The slow tier: end-to-end tests, and tests that drive the real Claude Code or Codex."""
    if item.path.parent.name == "e2e" or "claude_code" in getattr(item, "fixturenames", ()):
        return True
    module = getattr(item, "module", None)
    names = vars(module).values() if module is not None else ()
    return any(getattr(value, "__module__", None) in _REAL_CLI_SUPPORT for value in names)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        # `pytest -m "not slow"` (make test-fast) runs the fast tier alone.
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        # Tests that read /proc or start bubblewrap skip elsewhere with their stated reason.
        marker = item.get_closest_marker("linux_only")
        if marker is None:
            continue
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason")
        skip = linux_only_skip_reason(sys.platform, reason)
        if skip is not None:
            item.add_marker(pytest.mark.skip(reason=skip))


@pytest.fixture(autouse=True)
def _not_left_a_subreaper() -> Iterator[None]:
    """A test that runs ``forgeflare run``/``loop`` in this process makes the worker a child
    subreaper, and a subreaper's every child cleanup ends the "adopted" children that started
    in the second before it: in later tests of the same worker, processes the test started
    itself (a fake git holding a lock) died. Each test starts as a plain process again."""
    yield
    reset_subreaper()


@pytest.fixture
def mock_api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[dict[str, Any]], MockServer]]:
    """Start mock Messages APIs: ``server = mock_api({"responses": [...]})``.

    Each call writes the script into a fresh temporary directory and serves it with
    ``--record`` semantics, returning a ``MockServer`` (``url``, ``script_path``,
    ``record_path``, ``requests()``, ``stop()``). The server is the command's own code in a
    thread of this process (a ``forgeflare mock-api`` child costs 0.4 s of CPU to start);
    tests about the command itself mark themselves ``mock_api_process`` to get the real
    child. Every server started is stopped at teardown.
    """
    start_one = (
        start_mock_process
        if request.node.get_closest_marker("mock_api_process")
        else start_mock_server
    )
    servers: list[MockServer] = []

    def start(script: dict[str, Any]) -> MockServer:
        server = start_one(script, directory=tmp_path_factory.mktemp("mockapi"))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def claude_code() -> Path:
    """The pinned Claude Code CLI (skips, or fails with FORGEFLARE_REQUIRE_CC=1, without it)."""
    return require_claude_code()
