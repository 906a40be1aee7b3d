"""The server-start-to-UTC conversion (and Db2's poll context) is written once: every live query and
collection script embeds the definition in connectors/queries/fragments/ verbatim (issue #18).

Regenerate after editing a definition: python -m connectors.queries.fragments
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connectors.queries import fragments

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ROOT / "connectors" / "queries"
COLLECT = ROOT / "connectors" / "collect"

# Every file that reports a server start / activation time, and the fragment it must embed.
START_TIME_USERS = {
    "queries/sqlserver/default/file_stats.sql": ["server_start_utc"],
    "queries/sqlserver/default/partitions.sql": ["server_start_utc"],
    "queries/sqlserver/default/buffer_manager.sql": ["server_start_utc"],
    "queries/sqlserver/pre2014/file_stats.sql": ["server_start_utc"],
    "collect/sqlserver_file_stats.sql": ["server_start_utc"],
    "collect/sqlserver_partitions.sql": ["server_start_utc"],
    "collect/sqlserver_buffer_manager.sql": ["server_start_utc"],
    "queries/db2/default/tablespaces.sql": ["db2_context"],
    "queries/db2/default/table_partitions.sql": ["db2_context"],
    "queries/db2/default/transaction_log.sql": ["db2_context"],
    "queries/db2/default/bufferpools.sql": ["db2_context"],
    "queries/db2/default/containers.sql": ["db2_context"],
    "collect/db2_collect.sql": ["db2_context"] * 5,
}


def rel(path: Path) -> str:
    return path.relative_to(ROOT / "connectors").as_posix()


def code(text: str) -> list[str]:
    """SQL lines without comments (/* */ blanked, line numbers kept, then --), so prose that
    mentions an expression is not taken for a second definition."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m[0].count("\n"), text, flags=re.DOTALL)
    return [line.partition("--")[0] for line in text.splitlines()]


def test_checked_in_files_equal_the_generated_ones() -> None:
    assert fragments.stale(fragments.files()) == []
    assert fragments.main(["--check"]) == 0


@pytest.mark.parametrize("name", sorted(START_TIME_USERS))
def test_every_start_time_is_the_shared_definition(name: str) -> None:
    assert fragments.uses((ROOT / "connectors" / name).read_text(encoding="utf-8")) == START_TIME_USERS[name]


def test_no_copy_outside_the_markers() -> None:
    """The expressions that define the conversion appear nowhere but inside a marked block."""
    signatures = {
        "server_start_utc": re.compile(r"ms_ticks|/\s*900\.0", re.IGNORECASE),
        "db2_context": re.compile(
            r"db_conn_time\s*\)?\s*-\s*CURRENT\s+TIMEZONE|conn_time\s*-", re.IGNORECASE
        ),
    }
    for path in fragments.files():
        text = path.read_text(encoding="utf-8")
        inside = False
        for number, (line, sql) in enumerate(zip(text.splitlines(), code(text), strict=True), 1):
            if "-- begin fragment" in line:
                inside = True
            elif "-- end fragment" in line:
                inside = False
            elif not inside:
                for name, pattern in signatures.items():
                    assert not pattern.search(sql), f"{rel(path)}:{number} copies {name}: {line!r}"


def test_which_files_use_a_fragment_is_listed_here() -> None:
    using = {rel(p) for p in fragments.files() if fragments.uses(p.read_text(encoding="utf-8"))}
    assert using == set(START_TIME_USERS)


def test_a_changed_copy_is_found_and_rewritten(tmp_path: Path) -> None:
    original = (QUERIES / "sqlserver" / "default" / "file_stats.sql").read_text(encoding="utf-8")
    tampered = original.replace("/ 900.0", "/ 3600.0")
    assert tampered != original
    target = tmp_path / "file_stats.sql"
    target.write_text(tampered, encoding="utf-8")
    assert fragments.stale([target]) == [target]
    assert fragments.expand(tampered) == original


def test_an_unclosed_marker_is_an_error() -> None:
    with pytest.raises(fragments.FragmentError):
        fragments.expand("SELECT 1\n-- begin fragment server_start_utc\nFROM x\n")
    with pytest.raises(fragments.FragmentError):
        fragments.expand("-- begin fragment no_such_thing\n-- end fragment no_such_thing\n")
