"""The advisors' own texts (reasons, notes, diagnoses, verification reasons) and the impact and
change-window texts read every measured figure through advisors.quantities, so the command line,
the pages and the report say one figure one way. A figure the policy wrote and the text only
echoes (a threshold, a band's top) may keep the policy's own form: its line says `echo:`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [p for p in (ROOT / "advisors").glob("*.py") if p.name != "quantities.py"]
    + [ROOT / "migrations" / name for name in ("impact.py", "durations.py")]
)
UNITS = r"(?:ms/s|s/s|ms|GB|TB|MB|KB|%|IOPS|I/O/s|MB/s|reads/s|writes/s|min)"
# a replacement field with a format spec ({x:,.1f}, {x:g}), then a unit
HAND_FORMATTED = re.compile(r"\{[^{}]*:[^{}]*\}\s?" + UNITS + r"(?![\w])")


def hand_formatted(text: str, name: str) -> list[str]:
    """`name:line: text` for each line that formats a figure with a unit by hand."""
    return [
        f"{name}:{no}: {line.strip()[:160]}"
        for no, line in enumerate(text.splitlines(), 1)
        if HAND_FORMATTED.search(line) and "echo:" not in line
    ]


def test_the_check_catches_hand_formatting_and_passes_the_quantities() -> None:
    caught = [
        'f"read latency {ms:,.1f} ms"',
        'f"{share * 100:,.0f} % of it"',
        'f"{rate:g} MB/s"',
        'f"load {iops:,.0f} IOPS"',
        'f"{gb:,.1f}GB"',
    ]
    for line in caught:
        assert hand_formatted(line, "x.py") == [f"x.py:1: {line}"], line
    passed = [
        'f"read latency {q.latency(ms)}"',
        'f"{q.pct(share)} of it"',
        'f"older than {rule.months:g} months"',  # not a unit the quantities own
        'f"between {low:g} and {high:g} ms"  # echo: the policy band',
        'f"{n:,} objects"',
    ]
    for line in passed:
        assert hand_formatted(line, "x.py") == [], line


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_advisor_text_formats_a_figure_by_hand(path: Path) -> None:
    assert hand_formatted(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []
