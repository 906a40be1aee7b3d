"""The test-side lexers must themselves be right, or the property tests prove nothing."""

from __future__ import annotations

import pytest

from tests.migrations.sqltokens import (
    LexError,
    db2_skeleton,
    db2_statements,
    db2_tokens,
    tool_lines,
    tsql_batches,
    tsql_skeleton,
    tsql_tokens,
)


def test_tsql_bracket_and_string_escapes() -> None:
    toks = tsql_tokens("SELECT [a]]b], N'it''s', \"q\"\"x\" FROM t")
    assert [(t.kind, t.value) for t in toks if t.kind != "code"] == [
        ("ident", "a]b"),
        ("string", "it's"),
        ("ident", 'q"x'),
    ]


def test_tsql_comments_line_and_nested_block() -> None:
    text = "A -- x [ ' /*\nB /* one /* two */ still ' [ */ C"
    assert tsql_skeleton(text) == "A\nB  C"


def test_tsql_comment_markers_inside_quotes_are_text() -> None:
    assert tsql_skeleton("PRINT N'-- /* not a comment'; SELECT [--x]") == "PRINT N'?'; SELECT [?]"


@pytest.mark.parametrize("text", ["[abc", "N'abc", "/* open", "[a]]", "N'it''"])
def test_tsql_unterminated_is_an_error(text: str) -> None:
    with pytest.raises(LexError):
        tsql_tokens(text)


def test_tsql_batches_split_on_go_lines_only() -> None:
    text = ":on error exit\nSELECT 1\nGO\nPRINT N'GO'\n  go  \nSELECT [GO]\nGO\n"
    assert tsql_batches(text) == ["\nSELECT 1", "PRINT N'GO'", "SELECT [GO]"]


def test_tool_lines() -> None:
    text = "GO\nGO 5\nGOTO x\n:setvar a b\n  !! dir\nPRINT '$(a)'\n--#SET TERMINATOR @"
    lines = tool_lines(text)
    assert lines["go"] == ["GO", "GO 5"]
    assert lines["sqlcmd"] == [":setvar a b", "  !! dir"]
    assert lines["variables"] == ["$(a)"]
    assert lines["directives"] == ["--#SET TERMINATOR @"]


def test_db2_tokens_and_recursive_execute_immediate() -> None:
    text = "EXECUTE IMMEDIATE 'ALTER TABLESPACE \"A\"\"B\" USING STOGROUP \"S\" -- x';\nVALUES 'it''s' -- c"
    assert [t.value for t in db2_tokens(text) if t.kind == "string"][1] == "it's"
    assert (
        db2_skeleton(text)
        == "EXECUTE IMMEDIATE '<<ALTER TABLESPACE \"?\" USING STOGROUP \"?\">>';\nVALUES '?'"
    )


def test_db2_statements_split_on_terminator_outside_quotes() -> None:
    text = "--#SET TERMINATOR @\nSELECT 'a@b' FROM \"X@Y\"@\n-- note @\nBEGIN\n  CALL P();\nEND@\n"
    assert db2_statements(text) == ["SELECT 'a@b' FROM \"X@Y\"", "BEGIN\n  CALL P();\nEND"]
    with pytest.raises(LexError):
        db2_statements("SELECT 1@ SELECT 2")
