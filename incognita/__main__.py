"""`python -m incognita` runs the same click group as the `incognita` command."""

from incognita.cli import main

main()
