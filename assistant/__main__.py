"""`python -m assistant` runs the same CLI as the `areal-doctor` command."""

from assistant.cli import main

raise SystemExit(main())
