"""The rule-code vocabulary (TWnnn) is the same in the code and in the docs (issue #18).

A DBA looks a code up in docs/reading-advice.md: every code the advisors can emit must be
documented there (a binding reason's code in the row of its stage), and every code any guide
cites must exist, except the retired codes, listed as retired, which the code must not emit.
"""

from __future__ import annotations

import re
from pathlib import Path

from advisors.binding import CODES
from advisors.classify import NOTE_CODES, PROFILES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
READING = DOCS / "reading-advice.md"
SOURCES = ("advisors", "app", "policies", "migrations")
CODE = re.compile(r"\bTW(\d{3})\b")
RANGE = re.compile(r"\bTW(\d{3})\s*[–-]\s*TW(\d{3})\b")


def cited(text: str) -> set[str]:
    """The codes a text names, a range "TW701–TW704" standing for each code in it."""
    codes = {f"TW{n}" for n in CODE.findall(text)}
    for low, high in RANGE.findall(text):
        codes |= {f"TW{n}" for n in range(int(low), int(high) + 1)}
    return codes


def section(text: str, title: str) -> str:
    """The body of the `## title` section of a Markdown text ("" if there is none)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    return match[1] if match else ""


def emitted() -> set[str]:
    return set(CODES.values()) | set(NOTE_CODES)


def retired() -> set[str]:
    """The codes in the first column of the retired-rules table."""
    rows = section(READING.read_text(encoding="utf-8"), "Retired rules").splitlines()
    return set().union(*(cited(row.split("|")[1]) for row in rows if row.startswith("| TW")))


def test_the_vocabulary_is_one_code_per_meaning() -> None:
    assert len(set(CODES.values())) == len(CODES)
    assert not set(NOTE_CODES) & set(CODES.values())
    assert len(emitted()) == len(CODES) + len(NOTE_CODES)


def test_every_code_in_the_source_is_in_the_vocabulary() -> None:
    """A code written as a literal (in a message, a template, a docstring) is one of the vocabulary's."""
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in {".py", ".html", ".yaml", ".txt"} and path.is_file():
                for code in cited(path.read_text(encoding="utf-8")):
                    found.setdefault(code, set()).add(str(path.relative_to(ROOT)))
    unknown = {code: where for code, where in found.items() if code not in emitted()}
    assert unknown == {}


def test_every_emitted_code_is_documented_in_reading_advice() -> None:
    text = READING.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    for stage, code in CODES.items():
        assert any(f"`{stage}`" in row and cited(row) == {code} for row in rows), (stage, code)
    for code in NOTE_CODES:
        assert any(row.startswith(f"| {code} |") for row in rows), code


def test_every_code_the_docs_cite_exists_or_is_listed_as_retired() -> None:
    gone = retired()
    assert gone, "docs/reading-advice.md has no '## Retired rules' section"
    assert not gone & emitted(), "a retired code is still emitted"
    reading_live = READING.read_text(encoding="utf-8").replace(
        section(READING.read_text(encoding="utf-8"), "Retired rules"), ""
    )
    for path in sorted(DOCS.rglob("*.md")):
        text = reading_live if path == READING else path.read_text(encoding="utf-8")
        unknown = cited(text) - emitted()
        assert not unknown, f"{path.relative_to(ROOT)} cites {sorted(unknown)}, which the code does not emit"


def test_tw104_is_not_cited() -> None:
    """Issue #18 found TW104 cited without a rule behind it; it is in no guide and not emitted."""
    assert "TW104" not in emitted()
    assert all("TW104" not in p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))


def test_every_profile_is_documented() -> None:
    text = READING.read_text(encoding="utf-8")
    assert [p for p in PROFILES if f"`{p}`" not in text] == []
