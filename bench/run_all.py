"""Run every benchmark in this folder, one after another (``make bench``).

Each benchmark prints its own figures as ratios against a baseline measured in the same run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    failed = 0
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        result = subprocess.run([sys.executable, str(script)], check=False)
        failed += result.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
