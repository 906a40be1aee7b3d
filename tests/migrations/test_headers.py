"""Every generated script's header answers what the on-call DBA asks before running it."""

from __future__ import annotations

import pytest

from tests.migrations.golden_cases import CASES, Case, render_case

FIELDS = ("Duration:", "Log volume:", "Blocking:", "Backups:", "To abort:", "To recover:")


def _header(text: str) -> list[str]:
    """The leading comment block, without the comment markers."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("--#SET"):
            continue
        if not line.startswith("--"):
            break
        out.append(line[2:].strip())
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_header_has_a_complete_operations_block(case: Case) -> None:
    for name, text in render_case(case).items():
        header = _header(text)
        assert "Operations:" in header, f"{name}: no Operations block in the header"
        block = header[header.index("Operations:") + 1 : header.index("Operations:") + 1 + len(FIELDS)]
        for field, line in zip(FIELDS, block, strict=True):
            assert line.startswith(field), f"{name}: expected {field!r}, found {line!r}"
            assert len(line) > len(field) + 10, f"{name}: {field} says nothing: {line!r}"
