"""No template formats a quantity by hand: every number with a unit goes through the quantity
filters (app.textfmt, advisors.quantities), so a page, the report email and the command line
read the same figure the same way. The check names the file and line of each offence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.mail.render import _env as mail_env
from app.textfmt import filters
from app.web.templating import TEMPLATE_DIR, templates

ROOT = Path(__file__).resolve().parents[2]
MAIL_DIR = ROOT / "app" / "mail" / "templates"
TEMPLATES = sorted([*TEMPLATE_DIR.glob("*.html"), *MAIL_DIR.glob("*")])

UNITS = r"(?:ms/s|s/s|ms|GB|TB|MB|KB|%|IOPS|I/O/s|MB/s|reads/s|writes/s|I/O per s(?:econd)?|min|h)"
HAND_FORMATTING = {
    "format() on a number": re.compile(r"\bformat\("),
    'a "{:" format spec': re.compile(r"\{:"),
    "a printf-style spec": re.compile(r"%[-+ 0#]*\d*\.\d*[dfegs]|%[-+ 0#]*\d*[dfeg]\b"),
    # seconds ("{{ n }} s") only with a space: "{{ cls }}s" is a plural
    "a unit glued after a raw value": re.compile(r"\}\}(?:\s*" + UNITS + r"|\s+s)(?![\w/])"),
}


def hand_formatted(text: str, name: str) -> list[str]:
    """`name:line: what` for each line of a template that formats a quantity by hand."""
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        for what, pattern in HAND_FORMATTING.items():
            if pattern.search(line):
                found.append(f"{name}:{no}: {what}: {line.strip()[:160]}")
    return found


def test_the_check_catches_each_kind_of_hand_formatting() -> None:
    """The check itself can fail: each old form is caught and named with its line."""
    old = (
        "<p>ok</p>\n"
        '{{ "%.0f" | format(100 * share) }} %\n'
        '{{ "{:,.1f}".format(u.size_gb) }}\n'
        '{{ ("%d" % n) }}\n'
        "{{ start.saving_ms_per_s | fixed(0) }} ms/s\n"
        "{{ u.size_gb | fixed(1) }} GB\n"
        "{{ r.poll_interval_s }} s\n"
    )
    found = hand_formatted(old, "old.html")
    assert [f.split(": ")[0] for f in found] == [
        "old.html:2", "old.html:2", "old.html:2", "old.html:3", "old.html:3", "old.html:4",
        "old.html:5", "old.html:6", "old.html:7",
    ]  # fmt: skip
    assert "old.html:5: a unit glued after a raw value: {{ start.saving_ms_per_s | fixed(0) }} ms/s" in found
    new = "{{ start.saving_ms_per_s | io_wait }} of I/O wait, {{ u.size_gb | gb }}, {{ u.objects | count }} objects"
    assert hand_formatted(new, "new.html") == []


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_no_template_formats_a_quantity_by_hand(path: Path) -> None:
    found = hand_formatted(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "use the quantity filters (app/textfmt.py):\n" + "\n".join(found)


def test_pages_and_report_have_the_same_quantity_filters() -> None:
    names = {"io_wait", "io_wait_per", "latency", "gb", "bytes", "io_size", "rate", "pct", "change_pct", "count",
             "money", "figure", "duration"}  # fmt: skip
    assert names <= set(filters())
    assert names <= set(templates.env.filters) and names <= set(mail_env.filters)
    # the same definitions; only an unknown value reads differently ("–" on a page, "n/a" in plain text)
    assert templates.env.filters["io_wait"](59_099.0) == mail_env.filters["io_wait"](59_099.0) == "59.1 s/s"
    assert (templates.env.filters["gb"](None), mail_env.filters["gb"](None)) == ("–", "n/a")
    assert "num" not in templates.env.filters  # the compact chart number is for chart axes only
