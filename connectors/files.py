"""Import of the CSV files written by the collection scripts in connectors/collect/.

A DBA who cannot (or may not) let tierwise connect runs our scripts and hands over the CSV files.
Each file has one header line naming the columns of one shape (connectors/shapes.py) and any
number of samples, possibly from several servers. This module turns a file into the same
Snapshot records a live poll yields, using the live connectors' mappers, so a file and a poll of
the same server are indistinguishable downstream.

A file is accepted whole or not at all: any problem raises ImportFileError naming the file, the
line and the column, so a DBA can fix or re-collect it. The file is streamed (it can be large):
snapshots are yielded as each sample's rows end (iter_import_file); what stays in memory is, per
object, its latest reading and, per row, two hashes to spot a repeated or contradicting reading.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, BinaryIO, NoReturn, cast

from connectors.records import (
    Engine,
    ImportFileError,
    ObjectKind,
    ObjectSample,
    Snapshot,
    SourceError,
    control_character,
    escape_controls,
)
from connectors.shapes import ALL_SHAPES, ColumnType, Shape, shape_for_header

# A parsed row as the mappers take it: lower-case shape column names -> str, int, bool, tz-aware
# datetime or None. Typed loosely because each mapper declares its own parameter type.
Row = dict[str, Any]
Mapper = Callable[[Row], ObjectSample]
Progress = Callable[[int], None]

_PROGRESS_STEP = 1 << 16  # report progress at most every 64 KiB
BIGINT_MAX = 2**63 - 1  # the store's counters are BIGINT (SQL Server and Db2 counters are too)
FUTURE_SKEW = timedelta(minutes=5)  # clock difference tolerated between collector and importer
START_SKEW = timedelta(seconds=60)  # a start time converted to UTC may be rounded
MAX_OPEN_SAMPLES = 256  # samples (server, time) held open while their rows may still come
# Longest line read (bytes, or characters for UTF-16): a row our scripts write is under 4 KB. Read
# with readline(limit), so a damaged file's endless line is refused before it is held whole or
# split (a 50 MB line of commas cost 1 GB once split into fields).
MAX_LINE_BYTES = 1 << 20
_WHOLE = re.compile(r"[+-]?[0-9]+")
_TIMESTAMP = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[T ]"
    r"(?P<hm>[0-9]{2}:[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<frac>[0-9]+))?)?"
    r"\s*(?P<tz>Z|[+-][0-9]{2}(?::?[0-9]{2})?)?",
    re.IGNORECASE,
)
_DASHES = re.compile(r"-+")
_TRUE = frozenset({"1", "true", "y"})
_FALSE = frozenset({"0", "false", "n"})
# Lines a failed collection leaves in its output file (sqlcmd -o writes errors there too; the
# db2 CLP prints SQLnnnnN messages): recognised only to give a better hint.
_TOOL_MESSAGE = re.compile(
    r"\s*(Msg [0-9]+, Level [0-9]+|Sqlcmd: |HResult |SQL[0-9]{4,5}[NWC]\b|DB[0-9]{5}[EIW]\b"
    r"|Login failed|Communication link failure|TCP Provider:|Named Pipes Provider:)"
)
_LOGIN_FAILED = re.compile(r"Login failed|Communication link failure|SQL30082N|SQL1013N|SQL30081N")
_ROWS_AFFECTED = re.compile(r"\(\s*[0-9]+ rows? affected\s*\)", re.IGNORECASE)


class _BadValue(ValueError):
    """A value that does not fit its column's type; the caller adds file/line/column."""


def parse_value(text: str, ctype: ColumnType) -> str | int | bool | datetime | None:
    """One CSV field as its column type says; empty -> None (the caller decides if that is allowed).

    Numbers, booleans and times are stripped of surrounding blanks (sqlcmd pads columns); text is
    kept exactly, since SQL Server and DB2 names may begin or end with spaces.
    """
    if ctype is ColumnType.TEXT:
        if "\x00" in text:
            raise _BadValue(
                f"contains a NUL character (U+0000, character {text.index(chr(0)) + 1}): the file is damaged, "
                "or UTF-16 read as UTF-8"
            )
        if (control := control_character(text)) is not None:
            raise _BadValue(
                f"contains a {control[1]} (character {control[0] + 1} of {escape_controls(text)[:80]!r}): "
                "names with line breaks or other control characters are refused, since they would "
                "break the lines of reports, mails and scripts. Rename the object on the server, or "
                "correct the name in the file"
            )
        if text == "NULL":
            raise _BadValue(
                "NULL: the collection scripts write an empty value for a missing one; a file with "
                "NULL comes from another query or tool (sqlcmd prints NULL for missing values)"
            )
        return text if text != "" else None
    s = text.strip()
    if s == "":
        return None
    if ctype in (ColumnType.INT, ColumnType.COUNTER, ColumnType.GAUGE):
        if not _WHOLE.fullmatch(s):
            raise _BadValue(f"expected a whole number, got {text!r}")
        if len(s.lstrip("+-0")) > 19:  # checked before int(): 2**63 has 19 digits
            raise _BadValue(
                f"{s[:40]} is too large: the store keeps whole numbers up to {BIGINT_MAX} (2^63-1)"
            )
        n = int(s)
        if ctype in (ColumnType.COUNTER, ColumnType.GAUGE) and n < 0:
            raise _BadValue(f"negative counter {n}: cumulative counters start at 0 and only grow")
        if not -BIGINT_MAX - 1 <= n <= BIGINT_MAX:
            raise _BadValue(f"{n} is too large: the store keeps whole numbers up to {BIGINT_MAX} (2^63-1)")
        return n
    if ctype is ColumnType.BOOL:
        low = s.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise _BadValue(f"expected 0/1, true/false or Y/N, got {text!r}")
    if ctype is ColumnType.TIMESTAMP:
        return _parse_timestamp(s, text)
    raise _BadValue(f"unknown column type {ctype}")  # pragma: no cover - shapes use the five types


def _parse_timestamp(s: str, original: str) -> datetime:
    """ISO-8601 date and time, UTC when no offset is given; always returned tz-aware in UTC."""
    m = _TIMESTAMP.fullmatch(s)
    if m is None:
        raise _BadValue(f"expected an ISO-8601 date and time such as 2024-05-01T13:45:00Z, got {original!r}")
    frac = (m["frac"] or "")[:6].ljust(6, "0")  # SQL Server prints 7 digits; Python keeps 6
    tz = (m["tz"] or "Z").upper()
    if tz == "Z":
        tz = "+00:00"
    elif len(tz) == 3:
        tz += ":00"
    elif ":" not in tz:
        tz = f"{tz[:3]}:{tz[3:]}"
    iso = f"{m['date']}T{m['hm']}:{m['s'] or '00'}.{frac}{tz}"
    try:
        value = datetime.fromisoformat(iso)
    except ValueError as exc:
        raise _BadValue(f"not a valid date and time: {original!r} ({exc})") from None
    return value.astimezone(UTC)


def _mapper_for(shape: Shape) -> Mapper:
    """The live connector's mapper for a shape (its HANDLERS entry); imported late, though
    neither connector module loads a driver at import time."""
    from connectors import db2, sqlserver

    handlers = sqlserver.HANDLERS if shape.engine is Engine.SQLSERVER else db2.HANDLERS
    for handled, mapper in handlers.values():
        if handled is shape:
            return mapper
    raise LookupError(f"no mapper for shape {shape.name}")  # pragma: no cover - every shape has one


class _Head(io.RawIOBase):
    """The first `size` bytes of a file, as a file: an import reads the file as it was when the
    import began, however much a collection still running appends meanwhile."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        super().__init__()
        self._fh = fh
        self._size = size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        room = self._size - self._fh.tell()
        if room <= 0:
            return 0
        data = self._fh.read(min(len(buffer), room))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._fh.seek(offset, whence)

    def tell(self) -> int:
        return self._fh.tell()


def _looks_utf16(head: bytes) -> bool:
    """NUL bytes in every other position of the first bytes: UTF-16 text (mostly ASCII) that came
    without a byte-order mark, which UTF-8 decoding would take for NUL-laden Latin text."""
    if len(head) < 8:
        return False
    even, odd = head[0::2], head[1::2]
    for zeros, others in ((odd, even), (even, odd)):
        if zeros.count(0) >= 0.75 * len(zeros) and others.count(0) <= 0.1 * len(others):
            return True
    return False


class _Lines:
    """Decoded lines of a binary file, with exact line numbers for bad UTF-8 and byte progress.

    Decoding line by line (b"\\n" never occurs inside a UTF-8 sequence) rather than through one
    TextIOWrapper is what lets a decoding error name its line. A file starting with a UTF-16
    byte-order mark (sqlcmd -u, PowerShell 5.1 `>` and Out-File) is decoded as UTF-16 instead;
    UTF-16 without one is refused with a message saying so. No line longer than MAX_LINE_BYTES is
    read whole. Keeps the raw text of the record being parsed so errors can quote it.
    """

    def __init__(self, fh: BinaryIO, path: str, progress: Progress | None) -> None:
        self._fh = fh
        self._path = path
        self._progress = progress
        self.line = 0
        self.bytes_read = 0
        self._reported = 0
        self.record: list[str] = []

    def __iter__(self) -> Iterator[str]:
        head = self._fh.read(64)
        self._fh.seek(0)
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            texts = self._utf16()
        elif _looks_utf16(head):
            raise ImportFileError(
                self._path,
                1,
                None,
                "save as UTF-8 (this file looks like UTF-16 without a byte-order mark: every other "
                "byte is 0). Run sqlcmd with -f o:65001, or in PowerShell write it with "
                "Out-File -Encoding utf8",
            )
        else:
            texts = self._utf8()
        for text in texts:
            self.record.append(text)
            if self._progress is not None and self.bytes_read - self._reported >= _PROGRESS_STEP:
                self._reported = self.bytes_read
                self._progress(self.bytes_read)
            yield text
        if self._progress is not None and self._reported != self.bytes_read:
            self._reported = self.bytes_read
            self._progress(self.bytes_read)

    def _too_long(self) -> ImportFileError:
        return ImportFileError(
            self._path,
            self.line,
            None,
            f"the line is longer than {MAX_LINE_BYTES:,} bytes; no line the collection scripts write is "
            "near that long (a damaged file, or not a collection file). It was refused before being read whole",
        )

    def _utf8(self) -> Iterator[str]:
        while raw := self._fh.readline(MAX_LINE_BYTES + 1):
            self.line += 1
            self.bytes_read += len(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise self._too_long()
            if self.line == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            try:
                yield raw.decode("utf-8", errors="strict")
            except UnicodeDecodeError as exc:
                good = raw[: exc.start].decode("utf-8")
                raise ImportFileError(
                    self._path,
                    self.line,
                    None,
                    f"not valid UTF-8: byte 0x{raw[exc.start]:02x} after {good[-20:]!r} (character "
                    f"{len(good) + 1} of the line). Save the file as UTF-8: run sqlcmd with "
                    "-f o:65001, or EXPORT with MODIFIED BY CODEPAGE=1208",
                ) from None

    def _utf16(self) -> Iterator[str]:
        text = io.TextIOWrapper(cast(IO[bytes], self._fh), encoding="utf-16", errors="strict", newline="")
        try:
            while line := text.readline(MAX_LINE_BYTES + 1):
                self.line += 1
                if len(line) > MAX_LINE_BYTES and not line.endswith("\n"):
                    raise self._too_long()
                self.bytes_read = self._fh.tell()
                yield line.removeprefix("\ufeff") if self.line == 1 else line
        except UnicodeDecodeError as exc:
            raise ImportFileError(
                self._path,
                self.line + 1,
                None,
                f"not valid UTF-16 ({exc.reason}): the file starts with a UTF-16 byte-order mark but "
                "is cut or mixes encodings; collect it again",
            ) from None
        finally:
            text.detach()


@dataclass
class _Group:
    """The rows of one snapshot (one server at one sample_time) while the file is read."""

    engine: Engine
    server: str
    sample_time: datetime
    instance_start: datetime | None
    samples: list[ObjectSample] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class FileSnapshot:
    """A snapshot read from a file and the line of each of its samples (to name ignored ones)."""

    snapshot: Snapshot
    lines: tuple[int, ...]


@dataclass(frozen=True)
class StoreLimits:
    """What the store can hold, checked while reading so a file is refused with its line and
    column instead of failing (or, on SQLite, passing silently) when it is written.
    `text`: ObjectRef field -> most characters; `whole`: ObjectRef int field -> largest value."""

    text: Mapping[str, int] = field(default_factory=dict)
    whole: Mapping[str, int] = field(default_factory=dict)


@dataclass
class ReadStats:
    """What reading a file skipped or cut, for the import report."""

    rows: int = 0
    duplicates: int = 0
    skipped_lines: int = 0  # blank or dashed headings, "(N rows affected)", repeated headers
    cut_at_line: int | None = None  # --partial: where the failed collection's output begins
    cut_reason: str = ""
    dropped_samples: int = 0  # --partial: rows of the samples open at the cut, not kept


@dataclass
class _Reader:
    """State for one file: header layout and what each object last showed.

    Memory stays bounded by the number of objects and samples, not rows: per row only a hash of
    (server, object, sample_time) and of its values is kept (about 100 bytes), enough to accept an
    identical repeat (a file appended to itself) and refuse a contradicting one.
    """

    path: str
    shape: Shape
    positions: dict[str, int]  # shape column name -> field index in the file
    width: int  # number of fields in the header
    header_names: list[str]
    mapper: Mapper
    now: datetime | None
    limits: StoreLimits | None
    # (server, sample_time) -> (instance start, first line): one sample has one start time
    starts: dict[tuple[str, datetime], tuple[datetime | None, int]] = field(default_factory=dict)
    # hash(server, object key, sample_time) -> hash of the values << 32 | line
    seen: dict[int, int] = field(default_factory=dict)
    # (server, object key) -> latest sample_time, its line and values: time must not run backwards
    latest: dict[tuple[str, tuple[Any, ...]], tuple[datetime, int, tuple[Any, ...]]] = field(
        default_factory=dict
    )

    def row(
        self, fields: list[str], line: int, raw: str
    ) -> tuple[str, datetime, datetime | None, ObjectSample] | None:
        """Validate one data row: its server, sample time, start time and sample, or None for an
        identical repeat of an earlier row."""
        if len(fields) != self.width:
            self.wrong_width(fields, line, raw, partial_hint=False)
        parsed = self._parse(fields, line)
        server = parsed["server_name"]
        when: datetime = parsed["sample_time"]
        start = parsed[self.shape.start_column]
        key = tuple(parsed[c] for c in self.shape.object_key)
        values = tuple(parsed[c.name] for c in self.shape.columns)
        ident = hash((server, key, when))
        digest = hash(values) & 0x7FFFFFFF
        seen_at = self.seen.get(ident)
        previous = self.latest.get((server, key))
        if seen_at is not None:
            if seen_at >> 32 == digest:
                return None  # an identical repeat: idempotent, counted once
            self._contradiction(seen_at & 0xFFFFFFFF, previous, values, parsed, key, line)
        if previous is not None and when < previous[0]:
            raise ImportFileError(
                self.path,
                line,
                "sample_time",
                f"time goes backwards for {self._describe(server, key)}: {_iso(when)} here, but "
                f"{_iso(previous[0])} already on line {previous[1]}. Samples of one object must be "
                "in time order (were two files joined in the wrong order?)",
            )
        self._check_times(when, start, fields, line)
        self.latest[(server, key)] = (when, line, values)
        self.seen[ident] = digest << 32 | (line & 0xFFFFFFFF)
        first = self.starts.get((server, when))
        if first is None:
            self.starts[(server, when)] = (start, line)
        elif first[0] != start:
            raise ImportFileError(
                self.path,
                line,
                self.shape.start_column,
                f"server {server!r} at {_iso(when)} has {self.shape.start_column} "
                f"{_iso(start)} here but {_iso(first[0])} on line {first[1]}; "
                "one sample of one server has one start time (for DB2, collect one database per file)",
            )
        try:
            sample = self.mapper(parsed)
        except (ValueError, SourceError) as exc:
            raise ImportFileError(self.path, line, None, f"the row cannot be used: {exc}") from None
        if self.limits is not None:
            self._check_limits(sample, parsed, fields, line)
        return server, when, start, sample

    def _check_times(self, when: datetime, start: datetime | None, fields: list[str], line: int) -> None:
        """A sample from the future would make every later, correct sample of its objects look
        old; a start after the sample is impossible. Both come from a wrong clock or time zone."""
        if self.now is not None and when > self.now + FUTURE_SKEW:
            raise ImportFileError(
                self.path,
                _line_of(fields, self.positions["sample_time"], line),
                "sample_time",
                f"{_iso(when)} is in the future (it is now {_iso(self.now)}); the collecting "
                "server's clock or time zone is wrong. Times without an offset are read as UTC",
            )
        if start is not None and start > when + START_SKEW:
            column = self.shape.start_column
            raise ImportFileError(
                self.path,
                _line_of(fields, self.positions[column], line),
                column,
                f"{_iso(start)} is after the sample_time {_iso(when)}: the server cannot have "
                "started after it was sampled (a start time in local time rather than UTC?)",
            )

    def _check_limits(self, sample: ObjectSample, parsed: Row, fields: list[str], line: int) -> None:
        assert self.limits is not None
        ref = sample.ref
        for name, most in self.limits.text.items():
            value = getattr(ref, name, None)
            if isinstance(value, str) and len(value) > most:
                column = self._source_column(value, parsed)
                raise ImportFileError(
                    self.path,
                    line if column is None else _line_of(fields, self.positions[column], line),
                    column,
                    f"too long: the object's {name} would be {len(value)} characters, the store keeps "
                    f"at most {most}. No SQL Server or Db2 name is that long; the file is damaged",
                )
        for name, largest in self.limits.whole.items():
            value = getattr(ref, name, None)
            if isinstance(value, int) and not -largest - 1 <= value <= largest:
                raise ImportFileError(
                    self.path,
                    line,
                    name if name in self.positions else None,
                    f"{value} is out of range for the object's {name} (the store keeps "
                    f"-{largest + 1}..{largest})",
                )

    def _source_column(self, value: str, parsed: Row) -> str | None:
        """The file column a too-long object field came from: the longest text value within it."""
        best: tuple[int, str] | None = None
        for col in self.shape.columns:
            v = parsed.get(col.name)
            found = col.type is ColumnType.TEXT and isinstance(v, str) and v in value
            if found and col.name in self.positions and (best is None or len(str(v)) > best[0]):
                best = (len(str(v)), col.name)
        return None if best is None else best[1]

    def _parse(self, fields: list[str], line: int) -> Row:
        out: Row = {}
        for col in self.shape.columns:
            pos = self.positions.get(col.name)
            if pos is None:
                out[col.name] = None  # an optional column the file does not have
                continue
            try:
                value = parse_value(fields[pos], col.type)
            except _BadValue as exc:
                raise ImportFileError(self.path, _line_of(fields, pos, line), col.name, str(exc)) from None
            if value is None and not col.nullable:
                raise ImportFileError(
                    self.path, _line_of(fields, pos, line), col.name, "empty value; this column must have one"
                )
            if col.name == "server_name" and isinstance(value, str) and not value.strip():
                raise ImportFileError(
                    self.path, _line_of(fields, pos, line), col.name, "blank server name; it names the target"
                )
            out[col.name] = value
        return out

    def wrong_width(self, fields: list[str], line: int, raw: str, *, partial_hint: bool) -> NoReturn:
        hint = ""
        if _TOOL_MESSAGE.match(raw):
            hint = (
                f" The line looks like an error message from the collection run ({raw.strip()[:120]!r}):"
                " the collection failed; fix the cause (often a missing permission) and collect again,"
                " or import the complete samples before it with `tierwise import --partial`."
            )
        elif partial_hint:
            hint = (
                " With --partial only a cut-off last line, followed by the tool's error message, is dropped."
            )
        elif len(fields) < self.width:
            hint = (
                " If the collection was interrupted there, `tierwise import --partial` keeps the "
                "complete samples before this line."
            )
        if len(fields) < self.width:
            missing = self.header_names[len(fields)]
            raise ImportFileError(
                self.path,
                line,
                missing or None,
                f"the line has {len(fields)} fields but the header has {self.width}; it ends before "
                f"this column (a truncated file, or a collection that stopped mid-line).{hint}",
            )
        raise ImportFileError(
            self.path,
            line,
            None,
            f"the line has {len(fields)} fields but the header has {self.width}: extra field(s) from "
            f"field {self.width + 1} on (an unquoted comma in a value?).{hint}",
        )

    def _contradiction(
        self,
        first_line: int,
        previous: tuple[datetime, int, tuple[Any, ...]] | None,
        values: tuple[Any, ...],
        parsed: Row,
        key: tuple[Any, ...],
        line: int,
    ) -> NoReturn:
        where = f"{self._describe(parsed['server_name'], key)} at {_iso(parsed['sample_time'])}"
        if previous is not None and previous[0] == parsed["sample_time"]:
            for col, old, new in zip(self.shape.columns, previous[2], values, strict=True):
                if old != new:
                    raise ImportFileError(
                        self.path,
                        line,
                        col.name,
                        f"{where} already appeared on line {previous[1]} with {col.name}={_show(old)}; "
                        f"this line has {_show(new)}. One object has one reading per sample_time",
                    )
        raise ImportFileError(
            self.path,
            line,
            None,
            f"{where} already appeared on line {first_line} with other values. One object has one "
            "reading per sample_time",
        )

    def _describe(self, server: str, key: tuple[Any, ...]) -> str:
        parts = ", ".join(f"{n}={v!r}" for n, v in zip(self.shape.object_key, key, strict=True))
        return f"{parts} on server {server!r}"


def _line_of(fields: list[str], pos: int, first_line: int) -> int:
    """The physical line a field starts on: quoted values before it may span lines."""
    return first_line + sum(f.count("\n") for f in fields[:pos])


def _iso(value: datetime | None) -> str:
    return "none" if value is None else value.isoformat()


def _show(value: Any) -> str:
    return _iso(value) if isinstance(value, datetime) else repr(value)


def _describe_shapes() -> str:
    return "; ".join(f"{s.name} ({', '.join(sorted(s.signature))})" for s in ALL_SHAPES)


def _is_underline(fields: list[str]) -> bool:
    """The dashed row sqlcmd prints under column headings."""
    cells = [f.strip() for f in fields]
    return bool(cells) and all(_DASHES.fullmatch(c) for c in cells)


def _is_noise(fields: list[str], raw: str) -> bool:
    """Lines real tools add around the data: blank lines, sqlcmd's blank padded heading and its
    dashed underline (run without -h -1) and `(N rows affected)` (run without SET NOCOUNT ON)."""
    if not fields or (len(fields) == 1 and not fields[0].strip()):
        return True
    return _is_underline(fields) or _ROWS_AFFECTED.fullmatch(raw.strip()) is not None


def _header_hint(names: list[str], raw: str) -> str:
    """Why line 1 is not a header, when the cause is recognisable."""
    text = raw.strip()
    if _TOOL_MESSAGE.match(text) or _LOGIN_FAILED.search(text):
        return (
            f"line 1 is an error message from the collection run ({text[:160]!r}), not a header: "
            "the collection failed before writing any data; fix the cause (login, permission, "
            "network) and collect again"
        )
    if len(names) == 1 and ";" in text:
        split = [n.strip().strip('"').lower() for n in text.split(";")]
        if shape_for_header(split) is not None:
            return (
                "the fields are separated by ';', not ',' (Excel in a language with decimal commas "
                "saves CSV that way): save as 'CSV UTF-8 (Comma delimited)' or, better, import the "
                "file the collection script wrote, unopened"
            )
    if names and _TIMESTAMP.fullmatch(names[0].strip().strip('"')) is not None:
        widths = [s for s in ALL_SHAPES if len(s.columns) == len(names)]
        headers = " or ".join(",".join(c.name for c in s.columns) for s in widths)
        return (
            "line 1 is data, not a header (Db2 `EXPORT ... OF DEL` writes no header; db2_collect.sh "
            "adds one). Put the header line of the file's kind first"
            + (f", for example: {headers}" if headers else "")
        )
    return ""


def _open_header(
    path: str, header: list[str], line: int, raw: str
) -> tuple[Shape, dict[str, int], list[str]]:
    """The shape a header names and where each of its columns sits; the header is checked fully."""
    names = [h.strip().lower() for h in header]
    shape = shape_for_header(names)
    if shape is None:
        hint = _header_hint(names, raw)
        raise ImportFileError(
            path,
            line,
            None,
            (f"{hint}. " if hint else "")
            + "The header matches no known file; each file must come from one of our collection "
            f"scripts. Known files and the columns that identify them: {_describe_shapes()}",
        )
    known = {c.name for c in shape.columns}
    positions: dict[str, int] = {}
    for index, name in enumerate(names):
        if name not in known:
            continue  # extra columns are ignored, even repeated ones
        if name in positions:
            raise ImportFileError(
                path,
                line,
                name,
                f"the column appears twice in the header (fields {positions[name] + 1} and {index + 1})",
            )
        positions[name] = index
    missing = [c.name for c in shape.columns if c.required and c.name not in positions]
    if missing:
        raise ImportFileError(
            path,
            line,
            missing[0],
            f"required column(s) missing from the header of this {shape.name} file: {', '.join(missing)}",
        )
    return shape, positions, names


def iter_import_file(
    path: str | Path,
    *,
    now: datetime | None = None,
    partial: bool = False,
    limits: StoreLimits | None = None,
    progress: Progress | None = None,
    stats: ReadStats | None = None,
    size: int | None = None,
) -> Iterator[FileSnapshot]:
    """The snapshots of one collection-script CSV file, streamed: each is yielded once its server
    moves on to a later sample_time (the collection scripts write one sample's rows together),
    the rest at the end. Raises ImportFileError (file, line, column) at the first problem, so a
    caller wanting all-or-nothing reads the file through once before using what it yields.

    Rows of one sample that are not together are still right: at most MAX_OPEN_SAMPLES samples
    are held open, and a sample closed too early continues as a second snapshot with the same
    time (each object still has one reading per time). `now` refuses samples dated in the future;
    `partial` stops, without error, at a collection tool's error message (and a cut-off line just
    before it), dropping the samples still open there; `limits` checks values against the store;
    `size` reads only the file's first `size` bytes (what it held when an import began).
    """
    name = str(path)
    stats = stats if stats is not None else ReadStats()
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; open errors are reported as ours
    except OSError as exc:
        raise ImportFileError(name, None, None, f"cannot open the file: {exc.strerror}") from None
    with fh:
        source: BinaryIO = fh if size is None else cast(BinaryIO, io.BufferedReader(_Head(fh, size)))
        lines = _Lines(source, name, progress)
        rows = csv.reader(lines, strict=True)
        reader: _Reader | None = None
        open_groups: dict[tuple[str, datetime], _Group] = {}
        newest: dict[str, datetime] = {}  # server -> its latest sample_time so far
        cut: tuple[int, list[str], str] | None = None  # --partial: a short line, if the end follows
        end = 0  # line number where the previous record ended
        while True:
            lines.record = []
            try:
                fields = next(rows)
            except StopIteration:
                break
            except csv.Error as exc:
                if partial and reader is not None and "end of data" in str(exc):
                    _cut(stats, end + 1, "a quoted value cut off at the end of the file")
                    break
                raise _csv_problem(name, reader, lines, end + 1, exc) from None
            start, end = end + 1, rows.line_num
            raw = "".join(lines.record)
            if _is_noise(fields, raw):
                stats.skipped_lines += 1
                continue
            if reader is None:
                shape, positions, names = _open_header(name, fields, start, raw)
                reader = _Reader(name, shape, positions, len(fields), names, _mapper_for(shape), now, limits)
                continue
            if [f.strip().lower() for f in fields] == reader.header_names:
                stats.skipped_lines += 1  # the header again: a file appended to itself
                continue
            if partial and _TOOL_MESSAGE.match(raw):
                _cut(stats, cut[0] if cut else start, raw.strip()[:200])
                break
            if cut is not None:
                reader.wrong_width(cut[1], cut[0], cut[2], partial_hint=True)
            if partial and len(fields) < reader.width:
                cut = (start, fields, raw)  # dropped if only the tool's message or the end follows
                continue
            got = reader.row(fields, start, raw)
            stats.rows += 1
            if got is None:
                stats.duplicates += 1
                continue
            server, when, instance_start, sample = got
            before = newest.get(server)
            if before is None or when > before:
                if before is not None:  # the server moved on: its earlier samples are complete
                    yield from _close(open_groups, [k for k in open_groups if k[0] == server and k[1] < when])
                newest[server] = when
            group = open_groups.get((server, when))
            if group is None:
                if len(open_groups) >= MAX_OPEN_SAMPLES:
                    yield from _close(open_groups, [next(iter(open_groups))])
                group = open_groups[(server, when)] = _Group(
                    reader.shape.engine, server, when, instance_start
                )
            group.samples.append(sample)
            group.lines.append(start)
        if reader is None:
            raise ImportFileError(
                name, 1, None, "the file is empty: expected a header line naming the columns"
            )
        if cut is not None and stats.cut_at_line is None:
            _cut(stats, cut[0], "a cut-off last line")
        if stats.cut_at_line is not None:
            stats.dropped_samples = sum(len(g.samples) for g in open_groups.values())
            return
        yield from _close(open_groups, list(open_groups))


def _cut(stats: ReadStats, line: int, reason: str) -> None:
    stats.cut_at_line, stats.cut_reason = line, reason


def _close(
    open_groups: dict[tuple[str, datetime], _Group], keys: list[tuple[str, datetime]]
) -> Iterator[FileSnapshot]:
    """Remove the given open samples and yield them as snapshots, oldest first."""
    for key in sorted(keys, key=lambda k: (k[1], k[0])):
        group = open_groups.pop(key)
        yield FileSnapshot(
            Snapshot(
                engine=group.engine,
                server=group.server,
                sample_time=group.sample_time,
                instance_start=group.instance_start,
                samples=tuple(group.samples),
            ),
            tuple(group.lines),
        )


def read_import_file(
    path: str | Path,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
    partial: bool = False,
    limits: StoreLimits | None = None,
) -> list[Snapshot]:
    """All snapshots in one collection-script CSV file, ordered by sample_time then server (the
    rows of one server and time merged into one snapshot, wherever they are in the file).

    Raises ImportFileError (file, line, column) on the first problem; nothing is returned unless
    the whole file is valid. `progress`, if given, is called with the bytes read so far. Holds
    the whole file's samples: `tierwise import` streams with iter_import_file instead.
    """
    merged: dict[tuple[str, datetime], Snapshot] = {}
    for item in iter_import_file(path, progress=progress, now=now, partial=partial, limits=limits):
        snap = item.snapshot
        key = (snap.server, snap.sample_time)
        before = merged.get(key)
        merged[key] = snap if before is None else replace(before, samples=before.samples + snap.samples)
    return [merged[k] for k in sorted(merged, key=lambda k: (k[1], k[0]))]


def _csv_problem(
    path: str, reader: _Reader | None, lines: _Lines, line: int, exc: csv.Error
) -> ImportFileError:
    """A csv module error as a DBA-readable ImportFileError, naming the column when it can."""
    text = "".join(lines.record)
    column: str | None = None
    if reader is not None:
        try:
            partial = next(csv.reader([text], strict=False), [])
        except csv.Error:  # the same problem again (a field over the limit): no column then
            partial = []
        if partial and len(partial) <= len(reader.header_names):
            column = reader.header_names[len(partial) - 1] or None
    if "field larger than field limit" in str(exc):
        return ImportFileError(
            path,
            line,
            column,
            f"a value longer than {csv.field_size_limit()} characters: no value our scripts write is "
            "near that long (a stray double quote that swallowed the rest of the file, or a damaged file)",
        )
    if "end of data" in str(exc):
        return ImportFileError(
            path,
            line,
            column,
            "a quoted value starts here and is never closed before the end of the file "
            "(a truncated file, or a stray double quote)",
        )
    return ImportFileError(
        path,
        line,
        column,
        f"malformed CSV ({exc}): inside a quoted value a double quote must be doubled, and a "
        "closing quote must be followed by a comma or the end of the line",
    )


def join_container_locations(
    snapshots: Iterable[Snapshot], *, within: timedelta = timedelta(minutes=15)
) -> list[Snapshot]:
    """Snapshots read from several files, with DB2 table spaces completed from the containers file.

    A live poll reads table spaces and containers together and fills each table space's `paths`
    and volume fields at once (connectors.db2.with_container_locations). Import reads one file at
    a time, so table spaces from tablespaces.csv lack them; given the snapshots of both files,
    this applies the same rule using, per table-space snapshot, the containers snapshot of the
    same server nearest in time (db2_collect.sh writes both in the same sample, seconds apart),
    if one lies `within` of it. Order and every other snapshot, including any that has containers
    of its own (a live poll, already completed), are kept as they are.
    """
    from connectors import db2

    snaps = list(snapshots)
    containers: dict[str, list[Snapshot]] = {}
    has_own: set[int] = set()
    for i, snap in enumerate(snaps):
        if snap.engine is Engine.DB2 and any(s.ref.kind is ObjectKind.CONTAINER for s in snap.samples):
            containers.setdefault(snap.server, []).append(snap)
            has_own.add(i)
    out: list[Snapshot] = []
    for i, snap in enumerate(snaps):
        candidates = containers.get(snap.server, [])
        if snap.engine is not Engine.DB2 or i in has_own or not candidates:
            out.append(snap)  # a snapshot with containers of its own (a live poll) keeps them
            continue
        nearest = min(candidates, key=lambda c: abs(c.sample_time - snap.sample_time))
        if abs(nearest.sample_time - snap.sample_time) > within:
            out.append(snap)
            continue
        out.append(replace(snap, samples=db2.with_container_locations(snap.samples, nearest.samples)))
    return out
