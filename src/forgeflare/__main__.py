"""``python -m forgeflare``: the same entry as the ``forgeflare`` console script."""

from forgeflare.cli import console_main

__all__: list[str] = []

console_main()
