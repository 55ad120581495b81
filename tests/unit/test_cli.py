import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from forgeflare import __version__, cli
from forgeflare._app import COMMANDS
from project_support import run_text

HEAVY = ("typer", "click", "pydantic", "trio", "httpx", "rich")
PARTS = ("agent", "hooks", "supervisor", "stophook", "templates", "mockapi", "report", "fleet")


def _parts(modules: set[str]) -> set[str]:
    return {m.split(".")[1] for m in modules if m.startswith("forgeflare.")} & set(PARTS)


def test_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"forgeflare {__version__}"


def test_help_runs() -> None:
    """The one real-process smoke of the root help; it lists every command."""
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "--help"], capture_output=True, text=True, check=True
    )
    assert "Usage" in out.stdout
    for name in COMMANDS:
        assert f"│ {name} " in out.stdout, name


def test_nursery_wrapped_error_is_unwrapped() -> None:
    from forgeflare._errors import ConfigError
    from forgeflare.cli import _only_forgeflare_error

    inner = ConfigError("bad value")
    assert _only_forgeflare_error(ExceptionGroup("x", [ExceptionGroup("y", [inner])])) is inner
    assert _only_forgeflare_error(ExceptionGroup("x", [inner, ValueError()])) is None
    assert _only_forgeflare_error(ExceptionGroup("x", [ValueError()])) is None


def test_unknown_command_is_a_usage_error() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "nope"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 2
    assert "nope" in out.stderr


def _modules_after(args: list[str], stdin: str = "", cwd: Path | None = None) -> set[str]:
    """The modules one real ``forgeflare ARGS`` process had imported when it exited."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        f"sys.argv = ['forgeflare', *{args!r}]\n"
        "import runpy\n"
        "runpy.run_module('forgeflare', run_name='__main__')\n"
    )
    out = run_text(
        [sys.executable, "-c", probe],
        input=stdin,
        cwd=cwd,
    )
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


def test_stop_hook_hot_path_imports_no_heavy_library(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from forgeflare.stophook import Mode, start_loop

    start_loop(tmp_path, mode=Mode.LOOP, max_iterations=3, prompt="go", now=datetime.now(UTC))
    stdin = json.dumps({"hook_event_name": "Stop", "last_assistant_message": "still working"})
    modules = _modules_after(["stop-hook"], stdin, cwd=tmp_path)
    assert "forgeflare.stophook._quick" in modules
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)
    assert _parts(modules) == {"stophook"}


def test_stop_hook_importtime_shows_no_heavy_library(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "forgeflare", "stop-hook"],
        input="{}",
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert "forgeflare.stophook._entry" in imported
    assert not {m.split(".")[0] for m in imported} & set(HEAVY)


def test_version_imports_no_heavy_library(tmp_path: Path) -> None:
    modules = _modules_after(["--version"], cwd=tmp_path)
    assert "forgeflare.cli" in modules
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)


def test_reading_the_supervisor_does_not_load_the_agent(tmp_path: Path) -> None:
    """``report``, ``trust``, ``windows`` read the supervisor's records and settings; only a
    review needs the agent (its HTTP client, tools and hooks)."""
    modules = _modules_after(["report"], cwd=tmp_path)
    assert "forgeflare.supervisor" in modules
    assert not {m for m in modules if m == "forgeflare.agent" or m.startswith("forgeflare.agent.")}
    assert "httpx" not in modules  # a URL to check loads it, not the backends' import


def test_root_help_imports_no_part() -> None:
    modules = _modules_after(["--help"])
    assert _parts(modules) == set()  # rich is imported: the root's help has the commands' layout


def test_a_commands_help_imports_only_its_part() -> None:
    modules = _modules_after(["stop-hook", "--help"])
    assert "forgeflare.stophook._cli" in modules
    assert _parts(modules) == {"stophook"}


def test_forgeflare_stop_hook_script_is_the_hook_and_the_group(tmp_path: Path) -> None:
    """``forgeflare-stop-hook`` alone is the hook; with arguments it is ``forgeflare stop-hook``."""
    entry = [sys.executable, "-c", "from forgeflare.cli import stop_hook_main; stop_hook_main()"]
    hook = subprocess.run(entry, input="{}", capture_output=True, text=True, cwd=tmp_path)
    assert (hook.returncode, hook.stdout) == (0, "")
    status = subprocess.run([*entry, "status"], capture_output=True, text=True, cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "no loop in this project" in status.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["runs", "--dir", "{long}"],
        ["report", "{long}"],
        ["init", "{long}"],
        ["trust", "--dir", "{long}"],
        ["loop", "--dir", "{long}"],
        ["stop", "--dir", "{long}"],
        ["run", "--hooks", "{long}"],
    ],
)
def test_a_path_too_long_for_the_file_system_is_one_line(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.replace("{long}", "n" * 300) for a in args]
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("forgeflare: error: " + "n" * 60 + "... (3")
    assert line.endswith(" characters): File name too long")


# The end of a forgeflare process skips the interpreter's teardown (every module and object
# freed one by one) and keeps what an exit must do: atexit handlers, flushed output, status.

EXIT_NOW = """
import atexit, sys, threading
from forgeflare.cli import _exit_now

class Torn:
    def __del__(self):
        sys.stderr.write("torn down\\n")

kept = Torn()  # freed by the interpreter's teardown, never by an exit that skips it
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("x" * (200_000 if sys.argv[1] != "small" else 100))  # partly in the buffer
if sys.argv[1] == "thread":
    gate = threading.Event()
    threading.Thread(target=lambda: (gate.wait(), print("thread done"))).start()
    threading.Timer(0.05, gate.set).start()
try:
    sys.exit(int(sys.argv[2]))
except SystemExit as done:
    _exit_now(done)
    raise
"""


@pytest.mark.parametrize("code", [0, 3])
def test_an_exit_runs_atexit_flushes_output_and_keeps_its_status(code: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXIT_NOW, "plain", str(code)], capture_output=True, text=True
    )
    assert done.returncode == code
    assert done.stdout == "x" * 200_000 + "atexit ran\n"
    assert done.stderr == ""  # the teardown was skipped


def test_an_exit_with_a_thread_still_running_waits_for_it_as_python_does() -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXIT_NOW, "thread", "4"], capture_output=True, text=True
    )
    assert done.returncode == 4
    assert done.stdout.endswith("thread done\natexit ran\n")
    assert done.stderr == "torn down\n"  # the ordinary exit ran


def test_a_closed_stdout_is_the_ordinary_exits_to_report() -> None:
    # `forgeflare --help | head -1`: the flush fails, and the status and message are Python's.
    def closed_stdout(script: str) -> subprocess.CompletedProcess[bytes]:
        reader, writer = os.pipe()
        os.close(reader)
        try:
            argv = [sys.executable, "-c", script, "small", "0"]
            return subprocess.run(argv, stdout=writer, stderr=subprocess.PIPE)
        finally:
            os.close(writer)

    ours = closed_stdout(EXIT_NOW)
    pythons = closed_stdout(EXIT_NOW.replace("_exit_now(done)", "pass"))
    assert ours.returncode == pythons.returncode != 0
    assert b"BrokenPipeError" in ours.stderr


def test_python_m_forgeflare_ends_without_the_teardown() -> None:
    script = (
        "import runpy, sys\n"
        "class Torn:\n"
        "    def __del__(self): sys.stderr.write('torn down\\n')\n"
        "kept = Torn()\n"
        "sys.argv = ['forgeflare', '--version']\n"
        "runpy.run_module('forgeflare', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"forgeflare {__version__}\n", "")


def test_the_console_scripts_end_as_python_m_does() -> None:
    scripts = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert scripts["project"]["scripts"] == {
        "forgeflare": "forgeflare.cli:console_main",
        "forgeflare-stop-hook": "forgeflare.cli:stop_hook_console_main",
    }
