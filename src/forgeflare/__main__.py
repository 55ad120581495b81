from forgeflare.cli import main

main()
