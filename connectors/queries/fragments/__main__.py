"""python -m connectors.queries.fragments [--check]: rewrite (or check) the embedded SQL copies."""

from connectors.queries.fragments import main

raise SystemExit(main())
