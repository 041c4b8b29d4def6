from vera.cli import main

main()
