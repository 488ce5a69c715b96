"""``python -m zarrc``: the command line (:mod:`zarrc.cli.main`)."""

from zarrc.cli.main import main

raise SystemExit(main())
