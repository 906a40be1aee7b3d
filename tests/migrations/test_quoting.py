"""Identifier, literal, path and comment quoting: the one place names enter a script."""

from __future__ import annotations

import pytest

from migrations.quoting import (
    UnsafeNameError,
    basename,
    check_name,
    check_path,
    comment_lines,
    comment_text,
    db2_ident,
    db2_str,
    dirname,
    file_stem,
    same_path,
    tsql_ident,
    tsql_str,
)


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("Sales", "[Sales]"),
        ("a]b", "[a]]b]"),
        ("]]", "[]]]]]"),
        ("[x", "[[x]"),
        ("it's", "[it's]"),
        ("日本", "[日本]"),
    ],
)
def test_tsql_ident_doubles_closing_bracket(name: str, quoted: str) -> None:
    assert tsql_ident(name) == quoted


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("a", "N'a'"), ("it's", "N'it''s'"), ("''", "N''''''"), ("%s", "N'%s'"), ("", "N''")],
)
def test_tsql_str_doubles_quotes(text: str, quoted: str) -> None:
    assert tsql_str(text) == quoted


def test_db2_quoting() -> None:
    assert db2_ident('A"B') == '"A""B"'
    assert db2_ident("lower") == '"lower"'
    assert db2_str("it's") == "'it''s'"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a\nGO\nb", "U+000A"),
        ("a\rb", "U+000D"),
        ("tab\there", "U+0009"),
        ("nul\x00", "U+0000"),
        ("nel\x85", "U+0085"),
        ("line\u2028sep", "U+2028"),
        ("para\u2029sep", "U+2029"),
        ("rtl\u202eoverride", "U+202E"),
        ("iso\u2066late", "U+2066"),
        ("bom\ufeff", "U+FEFF"),
        ("$(evil)", "$("),
    ],
)
def test_unsafe_names_are_refused_with_the_object_named(name: str, problem: str) -> None:
    with pytest.raises(UnsafeNameError) as err:
        check_name(name, "filegroup FG1 of Sales", "tsql")
    assert "filegroup FG1 of Sales" in str(err.value)
    assert problem in str(err.value)


def test_db2_refuses_the_terminator() -> None:
    with pytest.raises(UnsafeNameError, match="terminator"):
        check_name("TS@1", "table space", "db2")
    assert check_name("TS@1", "filegroup", "tsql") == "TS@1"


def test_length_limits() -> None:
    assert check_name("x" * 128, "n", "tsql")
    with pytest.raises(UnsafeNameError, match="129 characters"):
        check_name("x" * 129, "n", "tsql")
    # astral characters are two UTF-16 code units in sysname
    with pytest.raises(UnsafeNameError, match="130 characters"):
        check_name("😀" * 65, "n", "tsql")
    assert check_name("é" * 64, "n", "db2")
    with pytest.raises(UnsafeNameError, match="130 bytes"):
        check_name("é" * 65, "n", "db2")


@pytest.mark.parametrize(
    "name", ["GO", "go", "]]", "'; DROP TABLE x; --", "/* x", "*/", "%s%d", "N'x'", "a" * 128]
)
def test_hostile_but_quotable_names_pass(name: str) -> None:
    assert check_name(name, "n", "tsql") == name


@pytest.mark.parametrize(
    "path",
    [
        r"F:\fc\x.ndf",
        r"\\filer\share\data\x.ndf",
        "/var/opt/mssql/data/x.ndf",
        r"E:\data\it's [odd]; --x.ndf",
    ],
)
def test_paths_accepted(path: str) -> None:
    assert check_path(path, "file", "tsql") == path


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("relative\\x.ndf", "not absolute"),
        (r"F:\a\..\b.ndf", "'..'"),
        (r"F:\a?b.ndf", "does not allow"),
        (r"F:\a:b.ndf", "does not allow"),
        ("F:\\a\nb.ndf", "U+000A"),
        (r"F:\$(x)\b.ndf", "$("),
        ("F:\\" + "a" * 260, "260"),
        ("", "empty"),
    ],
)
def test_paths_refused(path: str, why: str) -> None:
    with pytest.raises(UnsafeNameError, match=__import__("re").escape(why)):
        check_path(path, "file", "tsql")


def test_directories_get_a_trailing_separator() -> None:
    assert check_path(r"F:\fc", "d", "tsql", directory=True) == "F:\\fc\\"
    assert check_path("/db2/sata1", "d", "db2", directory=True) == "/db2/sata1/"


def test_path_helpers() -> None:
    assert basename(r"E:\data\x.mdf") == "x.mdf"
    assert basename("/a/b/c.ndf") == "c.ndf"
    assert dirname(r"E:\data\x.mdf") == "E:\\data\\"
    assert same_path(r"E:\Data\X.mdf", "e:/data/x.MDF")
    assert not same_path("/a/B", "/a/b")
    assert file_stem("Sales", "FG 2024]'x", "日本") == "Sales_FG_2024_x"


def test_comment_text_cannot_end_the_line_or_carry_commands() -> None:
    text = "a\nGO\n:!! del *\r$(x) /* c */ \u202e"
    out = comment_text(text, "tsql")
    assert "\n" not in out and "\r" not in out
    assert "$(" not in out and "/*" not in out and "*/" not in out and "\u202e" not in out
    assert "<U+000A>GO<U+000A>" in out
    assert comment_lines(["x", "y\nz"], "db2") == ["-- x", "-- y<U+000A>z"]
