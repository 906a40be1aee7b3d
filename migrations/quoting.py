"""Every identifier, literal, path and comment text that goes into a script passes through here.

Two dialects, one set of rules:

- T-SQL identifiers in brackets with `]` doubled, literals `N'…'` with `'` doubled.
- DB2 identifiers in double quotes with `"` doubled, literals `'…'` with `'` doubled.
- Names may be any Unicode up to 128 characters (T-SQL: UTF-16 code units, like sysname; DB2:
  UTF-8 bytes), but never a character that lets text escape from the client tool's view of the
  script rather than from SQL quoting (domain.md §7):
  line breaks and other control characters (a `GO` line, a sqlcmd `:!!` command line or a CLP
  `--#SET` directive would be read by the tool even inside brackets or quotes), bidirectional
  controls (the script would read differently from what runs), sqlcmd's `$(` (substituted even
  inside literals) and, for DB2, the CLP statement terminator `@`.
  Such names are refused with `UnsafeNameError` naming the object: tierwise does not script
  them, the DBA renames the object or moves it by hand.
- Comment text (header lines, reasons) is free text: unsafe characters are shown as `<U+XXXX>`
  so a comment can never end early or carry a tool command.
"""

from __future__ import annotations

import re
import unicodedata

MAX_NAME = 128
MAX_SQLSERVER_PATH = 260

# bidirectional embedding/override/isolate controls and marks, BOM, noncharacters
_INVISIBLE = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff\ufffe\uffff"
)
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})

TERMINATOR_DB2 = "@"


class UnsafeNameError(ValueError):
    """A name or path that cannot be written into a script safely; the message names the object."""


def _unsafe_char(ch: str) -> bool:
    return ch in _INVISIBLE or unicodedata.category(ch) in _UNSAFE_CATEGORIES


def describe_char(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def _problem(value: str, dialect: str) -> str | None:
    for ch in value:
        if _unsafe_char(ch):
            return (
                f"contains {describe_char(ch)}, a control, line-break or bidirectional character "
                "that a client tool could read as the end of a line or that would make the script "
                "read differently from what runs"
            )
    if "$(" in value:
        return "contains '$(', which sqlcmd and SSMS (SQLCMD mode) substitute as a scripting variable even inside quotes"
    if dialect == "db2" and TERMINATOR_DB2 in value:
        return f"contains '{TERMINATOR_DB2}', the statement terminator of the generated DB2 CLP scripts"
    return None


def check_name(value: object, what: str, dialect: str) -> str:
    """A name that can be quoted safely in `dialect` ("tsql" or "db2"); raises with `what` named."""
    if not isinstance(value, str) or value == "":
        raise UnsafeNameError(f"{what}: the name is empty or not text")
    problem = _problem(value, dialect)
    if problem:
        raise UnsafeNameError(f"{what}: the name {value!r} {problem}; rename it or move it by hand")
    if dialect == "tsql":
        units = len(value.encode("utf-16-le")) // 2
        if units > MAX_NAME:
            raise UnsafeNameError(
                f"{what}: the name is {units} characters long; SQL Server allows {MAX_NAME}"
            )
    else:
        size = len(value.encode("utf-8"))
        if size > MAX_NAME:
            raise UnsafeNameError(f"{what}: the name is {size} bytes long; DB2 allows {MAX_NAME}")
    return value


_WINDOWS_ABS = re.compile(r"^(?:[A-Za-z]:\\|\\\\[^\\/]+\\[^\\/]+\\)")
_WINDOWS_BAD = frozenset('<>"|?*')


def _is_windows(path: str) -> bool:
    return bool(_WINDOWS_ABS.match(path))


def check_path(value: object, what: str, dialect: str, *, directory: bool = False) -> str:
    """An absolute path (Windows drive or UNC, or POSIX) with no traversal and nothing a client
    tool would read; directories come back with a trailing separator."""
    if not isinstance(value, str) or not value.strip():
        raise UnsafeNameError(f"{what}: the path is empty or not text")
    problem = _problem(value, dialect)
    if problem:
        raise UnsafeNameError(f"{what}: the path {value!r} {problem}")
    windows = _is_windows(value)
    if not windows and not value.startswith("/"):
        raise UnsafeNameError(
            f"{what}: the path {value!r} is not absolute (expected e.g. F:\\data\\, \\\\server\\share\\ or /db2/data)"
        )
    sep = "\\" if windows else "/"
    body = value[3:] if windows and value[1] == ":" else value
    if windows and any(ch in _WINDOWS_BAD or ch == ":" for ch in body):
        raise UnsafeNameError(
            f"{what}: the path {value!r} contains a character Windows does not allow in paths"
        )
    parts = [p for p in re.split(r"[\\/]", value) if p]
    if any(p in (".", "..") for p in parts):
        raise UnsafeNameError(f"{what}: the path {value!r} contains '.' or '..' segments")
    if dialect == "tsql" and len(value) > MAX_SQLSERVER_PATH:
        raise UnsafeNameError(
            f"{what}: the path is {len(value)} characters long; SQL Server allows {MAX_SQLSERVER_PATH}"
        )
    if directory and not value.endswith(("\\", "/")):
        value += sep
    return value


def path_separator(path: str) -> str:
    return "\\" if _is_windows(path) else "/"


def basename(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("\\/"))[-1]


def dirname(path: str) -> str:
    """The directory of a file path, with its trailing separator."""
    cut = max(path.rfind("\\"), path.rfind("/"))
    return path[: cut + 1]


def same_path(a: str, b: str) -> bool:
    """Windows paths compare case-insensitively (the engines' catalogs keep the typed case)."""
    if _is_windows(a) or _is_windows(b):
        return a.replace("/", "\\").casefold() == b.replace("/", "\\").casefold()
    return a == b


_FILE_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def file_stem(*parts: str, limit: int = 80) -> str:
    """An ASCII file-name stem from names (for new data files and script file names)."""
    text = "_".join(_FILE_SAFE.sub("_", p).strip("_") for p in parts if p)
    text = re.sub(r"_+", "_", text).strip("_") or "x"
    return text[:limit].rstrip("_")


# ---------------------------------------------------------------------------------------------
# T-SQL


def tsql_ident(name: str) -> str:
    """[name] with `]` doubled (QUOTENAME rules); `name` must have passed check_name."""
    return "[" + name.replace("]", "]]") + "]"


def tsql_str(text: str) -> str:
    """N'text' with `'` doubled."""
    return "N'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------------
# DB2


DB2_ALIAS = re.compile(r"^[A-Za-z#$][A-Za-z0-9#$_]{0,7}$")


def check_db2_alias(value: str, what: str) -> str:
    """A database name usable in the CLP's CONNECT TO (an alias: 1-8 letters, digits, #, $, _)."""
    if not DB2_ALIAS.match(value):
        raise UnsafeNameError(
            f"{what}: {value!r} is not usable as a database alias in CONNECT TO (1-8 letters, digits, #, $, _)"
        )
    return value


def db2_ident(name: str) -> str:
    """ "NAME" with `"` doubled: delimited, so case and any character are kept exactly."""
    return '"' + name.replace('"', '""') + '"'


def db2_str(text: str) -> str:
    """'text' with `'` doubled."""
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------------
# Comments


def comment_text(text: str, dialect: str) -> str:
    """Free text for a `--` comment line: one line, nothing a client tool or parser could act on.

    Comments stand between statements, never inside one, so a DB2 terminator in a comment could
    at worst end an empty statement (an error that stops the script), not splice one: `@` is
    kept so the header can show `db2 -td@`."""
    out: list[str] = []
    for ch in text:
        if _unsafe_char(ch):
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    s = "".join(out)
    # sqlcmd variables, block-comment openers/closers (some batch splitters track them even
    # inside line comments)
    s = s.replace("$(", "$<U+0028>").replace("/*", "/<U+002A>").replace("*/", "<U+002A>/")
    return s


def comment_lines(lines: list[str], dialect: str) -> list[str]:
    return [("-- " + comment_text(line, dialect)).rstrip() for line in lines]
