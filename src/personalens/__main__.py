from personalens.cli.app import main

main()
