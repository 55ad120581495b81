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
