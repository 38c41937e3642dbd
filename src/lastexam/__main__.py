from lastexam.cli import main

main()
