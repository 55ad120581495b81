import subprocess
import sys

from forgeflare import __version__


def test_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"forgeflare {__version__}"


def test_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "forgeflare", "--help"], capture_output=True, text=True, check=True
    )
    assert "Usage" in out.stdout


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


def test_every_command_has_help() -> None:
    from forgeflare.cli import _COMMANDS

    for name in _COMMANDS:
        out = subprocess.run(
            [sys.executable, "-m", "forgeflare", name, "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode == 0, (name, out.stderr)
        assert "Usage" in out.stdout
