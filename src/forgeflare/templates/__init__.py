"""``forgeflare init`` and ``forgeflare demo``: project templates and the offline demo."""
