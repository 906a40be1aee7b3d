"""The connectors' SQL text, one .sql file per question, looked up by engine and name.

Queries live in files (not Python strings) so that a DBA can read exactly what tierwise runs, and
so that tests can parse them. A feature variant directory (e.g. ``sqlserver/pre2014``) holds only
the queries that differ; anything not there falls back to ``default``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

QUERY_ROOT = Path(__file__).resolve().parent
DEFAULT = "default"
_NAME = re.compile(r"^[a-z0-9_]+$")


def query_path(engine: str, name: str, variants: Sequence[str] = ()) -> Path:
    """The file that answers `name` for `engine`: first variant that has it, else default."""
    for part in (engine, name, *variants):
        if not _NAME.match(part):
            raise ValueError(f"invalid query path component {part!r}")
    for directory in (*variants, DEFAULT):
        path = QUERY_ROOT / engine / directory / f"{name}.sql"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no query {engine}/{name}.sql (looked in {', '.join((*variants, DEFAULT))})")


def load(engine: str, name: str, variants: Sequence[str] = ()) -> str:
    """The SQL text of one query (UTF-8)."""
    return query_path(engine, name, variants).read_text(encoding="utf-8")


def names(engine: str, directory: str = DEFAULT) -> list[str]:
    """The query names in one directory, sorted (used by tests and docs)."""
    return sorted(p.stem for p in (QUERY_ROOT / engine / directory).glob("*.sql"))
