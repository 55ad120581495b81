"""``python -m forgeflare``: the same entry as the ``forgeflare`` console script."""

from forgeflare.cli import main

__all__: list[str] = []

main()
