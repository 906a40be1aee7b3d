"""Import of the CSV files written by the collection scripts in connectors/collect/.

A DBA who cannot (or may not) let tierwise connect runs our scripts and hands over the CSV files.
Each file has one header line naming the columns of one shape (connectors/shapes.py) and any
number of samples, possibly from several servers. This module turns a file into the same
Snapshot records a live poll yields, using the live connectors' mappers, so a file and a poll of
the same server are indistinguishable downstream.

A file is accepted whole or not at all: any problem raises ImportFileError naming the file, the
line and the column, so a DBA can fix or re-collect it. The file is streamed (it can be large);
what stays in memory is the parsed samples and, per row, the values needed to spot a repeated or
contradicting reading.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from connectors.records import Engine, ImportFileError, ObjectKind, ObjectSample, Snapshot, SourceError
from connectors.shapes import ALL_SHAPES, ColumnType, Shape, shape_for_header

# A parsed row as the mappers take it: lower-case shape column names -> str, int, bool, tz-aware
# datetime or None. Typed loosely because each mapper declares its own parameter type.
Row = dict[str, Any]
Mapper = Callable[[Row], ObjectSample]
Progress = Callable[[int], None]

_PROGRESS_STEP = 1 << 16  # report progress at most every 64 KiB
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
    r"\s*(Msg [0-9]+, Level [0-9]+|Sqlcmd: |HResult |SQL[0-9]{4,5}[NWC]\b|DB[0-9]{5}[EIW]\b)"
)


class _BadValue(ValueError):
    """A value that does not fit its column's type; the caller adds file/line/column."""


def parse_value(text: str, ctype: ColumnType) -> str | int | bool | datetime | None:
    """One CSV field as its column type says; empty -> None (the caller decides if that is allowed).

    Numbers, booleans and times are stripped of surrounding blanks (sqlcmd pads columns); text is
    kept exactly, since SQL Server and DB2 names may begin or end with spaces.
    """
    if ctype is ColumnType.TEXT:
        return text if text != "" else None
    s = text.strip()
    if s == "":
        return None
    if ctype in (ColumnType.INT, ColumnType.COUNTER, ColumnType.GAUGE):
        if not _WHOLE.fullmatch(s):
            raise _BadValue(f"expected a whole number, got {text!r}")
        n = int(s)
        if ctype in (ColumnType.COUNTER, ColumnType.GAUGE) and n < 0:
            raise _BadValue(f"negative counter {n}: cumulative counters start at 0 and only grow")
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


class _Lines:
    """Decoded lines of a binary file, with exact line numbers for bad UTF-8 and byte progress.

    Decoding line by line (b"\\n" never occurs inside a UTF-8 sequence) rather than through one
    TextIOWrapper is what lets a decoding error name its line. Keeps the raw text of the record
    being parsed so errors can quote it.
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
        for raw in self._fh:
            self.line += 1
            self.bytes_read += len(raw)
            if self.line == 1:
                raw = self._strip_bom(raw)
            try:
                text = raw.decode("utf-8", errors="strict")
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
            self.record.append(text)
            if self._progress is not None and self.bytes_read - self._reported >= _PROGRESS_STEP:
                self._reported = self.bytes_read
                self._progress(self.bytes_read)
            yield text
        if self._progress is not None and self._reported != self.bytes_read:
            self._reported = self.bytes_read
            self._progress(self.bytes_read)

    def _strip_bom(self, raw: bytes) -> bytes:
        if raw.startswith(codecs.BOM_UTF8):
            return raw[len(codecs.BOM_UTF8) :]
        if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            raise ImportFileError(
                self._path,
                1,
                None,
                "the file is UTF-16 (sqlcmd -u writes that); import needs UTF-8: re-run sqlcmd "
                "without -u and with -f o:65001, or convert the file to UTF-8",
            )
        return raw


@dataclass
class _Group:
    """The rows of one snapshot (one server at one sample_time) while the file is read."""

    instance_start: datetime | None
    first_line: int
    samples: list[ObjectSample] = field(default_factory=list)


@dataclass
class _Reader:
    """State for one file: header layout, snapshots so far, and what each object last showed."""

    path: str
    shape: Shape
    positions: dict[str, int]  # shape column name -> field index in the file
    width: int  # number of fields in the header
    header_names: list[str]
    mapper: Mapper
    groups: dict[tuple[str, datetime], _Group] = field(default_factory=dict)
    # (server, object key, sample_time) -> (line, parsed values): duplicates and contradictions
    seen: dict[tuple[str, tuple[Any, ...], datetime], tuple[int, tuple[Any, ...]]] = field(
        default_factory=dict
    )
    # (server, object key) -> latest sample_time seen and its line: time must not run backwards
    latest: dict[tuple[str, tuple[Any, ...]], tuple[datetime, int]] = field(default_factory=dict)

    def row(self, fields: list[str], line: int, raw: str) -> None:
        """Validate one data row and add its sample to its snapshot."""
        if len(fields) != self.width:
            self._wrong_width(fields, line, raw)
        parsed = self._parse(fields, line)
        server = parsed["server_name"]
        when: datetime = parsed["sample_time"]
        key = tuple(parsed[c] for c in self.shape.object_key)
        values = tuple(parsed[c.name] for c in self.shape.columns)
        seen_at = self.seen.get((server, key, when))
        if seen_at is not None:
            self._check_duplicate(seen_at, values, parsed, key, line)
            return  # an identical repeat: idempotent, counted once
        previous = self.latest.get((server, key))
        if previous is not None and when < previous[0]:
            raise ImportFileError(
                self.path,
                line,
                "sample_time",
                f"time goes backwards for {self._describe(server, key)}: {_iso(when)} here, but "
                f"{_iso(previous[0])} already on line {previous[1]}. Samples of one object must be "
                "in time order (were two files joined in the wrong order?)",
            )
        if previous is None or when > previous[0]:
            self.latest[(server, key)] = (when, line)
        self.seen[(server, key, when)] = (line, values)
        start = parsed[self.shape.start_column]
        group = self.groups.get((server, when))
        if group is None:
            group = self.groups[(server, when)] = _Group(start, line)
        elif group.instance_start != start:
            raise ImportFileError(
                self.path,
                line,
                self.shape.start_column,
                f"server {server!r} at {_iso(when)} has {self.shape.start_column} "
                f"{_iso(start)} here but {_iso(group.instance_start)} on line {group.first_line}; "
                "one sample of one server has one start time (for DB2, collect one database per file)",
            )
        try:
            sample = self.mapper(parsed)
        except (ValueError, SourceError) as exc:
            raise ImportFileError(self.path, line, None, f"the row cannot be used: {exc}") from None
        group.samples.append(sample)

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
            out[col.name] = value
        return out

    def _wrong_width(self, fields: list[str], line: int, raw: str) -> None:
        hint = ""
        if _TOOL_MESSAGE.match(raw):
            hint = (
                f" The line looks like an error message from the collection run ({raw.strip()[:120]!r}):"
                " the collection failed; fix the cause (often a missing permission) and collect again."
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

    def _check_duplicate(
        self,
        seen_at: tuple[int, tuple[Any, ...]],
        values: tuple[Any, ...],
        parsed: Row,
        key: tuple[Any, ...],
        line: int,
    ) -> None:
        first_line, first_values = seen_at
        if first_values == values:
            return
        for col, old, new in zip(self.shape.columns, first_values, values, strict=True):
            if old != new:
                raise ImportFileError(
                    self.path,
                    line,
                    col.name,
                    f"{self._describe(parsed['server_name'], key)} at {_iso(parsed['sample_time'])} "
                    f"already appeared on line {first_line} with {col.name}={_show(old)}; this line "
                    f"has {_show(new)}. One object has one reading per sample_time",
                )

    def _describe(self, server: str, key: tuple[Any, ...]) -> str:
        parts = ", ".join(f"{n}={v!r}" for n, v in zip(self.shape.object_key, key, strict=True))
        return f"{parts} on server {server!r}"

    def snapshots(self) -> list[Snapshot]:
        ordered = sorted(self.groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))
        return [
            Snapshot(
                engine=self.shape.engine,
                server=server,
                sample_time=when,
                instance_start=group.instance_start,
                samples=tuple(group.samples),
            )
            for (server, when), group in ordered
        ]


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


def _open_header(path: str, header: list[str], line: int) -> tuple[Shape, dict[str, int], list[str]]:
    """The shape a header names and where each of its columns sits; the header is checked fully."""
    names = [h.strip().lower() for h in header]
    shape = shape_for_header(names)
    if shape is None:
        raise ImportFileError(
            path,
            line,
            None,
            "the header matches no known file; each file must come from one of our collection "
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


def read_import_file(path: str | Path, *, progress: Progress | None = None) -> list[Snapshot]:
    """All snapshots in one collection-script CSV file, ordered by sample_time then server.

    Raises ImportFileError (file, line, column) on the first problem; nothing is returned unless
    the whole file is valid. `progress`, if given, is called with the bytes read so far.
    """
    name = str(path)
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; open errors are reported as ours
    except OSError as exc:
        raise ImportFileError(name, None, None, f"cannot open the file: {exc.strerror}") from None
    with fh:
        lines = _Lines(fh, name, progress)
        rows = csv.reader(lines, strict=True)
        reader: _Reader | None = None
        expect_underline = False
        end = 0  # line number where the previous record ended
        while True:
            lines.record = []
            try:
                fields = next(rows)
            except StopIteration:
                break
            except csv.Error as exc:
                raise _csv_problem(name, reader, lines, end + 1, exc) from None
            start, end = end + 1, rows.line_num
            raw = "".join(lines.record)
            if not fields:
                continue  # a blank line (sqlcmd prints one between result sets)
            if reader is None:
                shape, positions, names = _open_header(name, fields, start)
                reader = _Reader(name, shape, positions, len(fields), names, _mapper_for(shape))
                expect_underline = True
                continue
            if expect_underline:
                expect_underline = False
                if _is_underline(fields):
                    continue
            reader.row(fields, start, raw)
    if reader is None:
        raise ImportFileError(name, 1, None, "the file is empty: expected a header line naming the columns")
    return reader.snapshots()


def _csv_problem(
    path: str, reader: _Reader | None, lines: _Lines, line: int, exc: csv.Error
) -> ImportFileError:
    """A csv module error as a DBA-readable ImportFileError, naming the column when it can."""
    text = "".join(lines.record)
    column: str | None = None
    if reader is not None:
        partial = next(csv.reader([text], strict=False), [])
        if partial and len(partial) <= len(reader.header_names):
            column = reader.header_names[len(partial) - 1] or None
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
