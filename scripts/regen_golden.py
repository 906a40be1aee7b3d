"""Regenerate the golden migration scripts in tests/migrations/golden/.

    .venv/bin/python scripts/regen_golden.py          # rewrite them (review the diff!)
    .venv/bin/python scripts/regen_golden.py --check  # exit 1 when any differs or is missing

The cases (one per action and dialect, forward and rollback) live in
tests/migrations/golden_cases.py; tests/migrations/test_golden.py compares against these files.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.migrations.golden_cases import GOLDEN, all_golden  # noqa: E402


def main(argv: list[str]) -> int:
    check = "--check" in argv
    wanted = all_golden()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    stale = sorted(p.name for p in GOLDEN.iterdir() if p.is_file() and p.name not in wanted)
    changed = []
    for name, text in sorted(wanted.items()):
        path = GOLDEN / name
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            changed.append(name)
            if not check:
                path.write_text(text, encoding="utf-8", newline="\n")
    if not check:
        for name in stale:
            (GOLDEN / name).unlink()
    for name in changed:
        print(f"{'differs' if check else 'wrote'}: {GOLDEN / name}")
    for name in stale:
        print(f"{'stale' if check else 'removed'}: {GOLDEN / name}")
    if not changed and not stale:
        print(f"golden files up to date ({len(wanted)} in {GOLDEN})")
    return 1 if check and (changed or stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
