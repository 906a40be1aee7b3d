"""SQL written once and embedded wherever it is needed: the live queries and the collection scripts.

A DBA reads each .sql file on its own, so a shared expression cannot be an include: it is copied
in, between two marker comments, and this module keeps every copy equal to its one definition
(``fragments/<name>.sql``, leading ``--`` comment lines left out):

    CROSS JOIN (
        -- begin fragment server_start_utc (generated from connectors/queries/fragments/...)
        SELECT ...
        -- end fragment server_start_utc
    ) AS si

Edit the definition, then run ``python -m connectors.queries.fragments`` to rewrite the copies
(``--check`` only reports); tests/connectors/test_query_fragments.py fails while any copy differs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

FRAGMENT_DIR = Path(__file__).resolve().parent
QUERY_ROOT = FRAGMENT_DIR.parent
COLLECT_DIR = QUERY_ROOT.parent / "collect"

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)-- begin fragment (?P<name>[a-z0-9_]+)\b.*$")
_END = "-- end fragment "


class FragmentError(ValueError):
    """A marker without its pair, or naming a fragment that does not exist."""


def body(name: str) -> list[str]:
    """The definition's SQL lines, without its leading comment block and trailing blank lines."""
    path = FRAGMENT_DIR / f"{name}.sql"
    if not path.is_file():
        raise FragmentError(f"no fragment {name!r} ({path.name} not in {FRAGMENT_DIR})")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if not line.startswith("--")), len(lines))
    out = lines[start:]
    while out and not out[-1].strip():
        out.pop()
    return out


def expand(text: str, where: str = "<text>") -> str:
    """`text` with every marked block replaced by its definition, indented like its begin marker."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        match = _BEGIN.match(line.rstrip("\r\n"))
        if not match:
            continue
        indent, name = match["indent"], match["name"]
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == f"{_END}{name}"), None)
        if end is None:
            raise FragmentError(f"{where}: 'begin fragment {name}' has no '{_END}{name}'")
        newline = "\r\n" if line.endswith("\r\n") else "\n"
        out += [f"{indent}{sql}".rstrip() + newline for sql in body(name)]
        i = end
    return "".join(out)


def uses(text: str) -> list[str]:
    """The fragment names a text embeds, in order."""
    return [m["name"] for line in text.splitlines() if (m := _BEGIN.match(line))]


def files() -> list[Path]:
    """Every .sql file that may embed a fragment: the live queries and the collection scripts."""
    found = [p for p in QUERY_ROOT.rglob("*.sql") if FRAGMENT_DIR not in p.parents]
    return sorted([*found, *COLLECT_DIR.glob("*.sql")])


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # line endings as they are


def stale(paths: Iterable[Path]) -> list[Path]:
    """The files whose embedded copies differ from the definitions."""
    out = []
    for path in paths:
        text = _read(path)
        if expand(text, str(path)) != text:
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    """Rewrite stale copies in place (or, with --check, list them and exit 1)."""
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    outdated = stale(files())
    for path in outdated:
        if not check:
            path.write_bytes(expand(_read(path), str(path)).encode("utf-8"))
        print(f"{'stale' if check else 'rewrote'}: {path}")
    return 1 if check and outdated else 0
