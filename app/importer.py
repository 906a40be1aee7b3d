"""Import of collection-script CSV files into the store: all-or-nothing per file for bad input,
idempotent, safe to run twice at once, and in bounded memory.

A file is read twice. The first pass only validates (values, times against `now`, the store's
limits): a bad line stores nothing. The second pass streams snapshots into the store in chunks of
about `chunk_rows` samples, one short transaction each, so a long import never holds the store's
write lock for long. Each chunk locks the targets it writes (PostgreSQL: an advisory lock per
target; SQLite: BEGIN IMMEDIATE), so two imports of one server cannot both compute intervals from
the same stored sample. The file's checksum is recorded last, and only when every sample was
stored or already there: after a crash, or after samples were ignored, the file can be imported
again, and samples already stored are recognised by their time.

Both passes read the file as it was when the import began (its size then): a collection still
writing it cannot add rows the first pass never checked, nor a half-written last line. What
happened is said as it is: the rows appended meanwhile are left for the next import
(`FileImport.grew_to`), and an error met by the second pass after chunks were committed says how
many samples were stored (`ImportStoppedError`), never "nothing".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from sqlalchemy import BigInteger, Integer, String, Table, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.store.db import Store
from app.store.ingest import IGNORED_LISTED, IgnoredSample, IngestResult, ingest_snapshots
from app.store.models import DbObject, ImportedFile, Target
from app.store.targets import import_target, import_target_name
from connectors.files import FileSnapshot, ReadStats, StoreLimits, iter_import_file
from connectors.records import ImportFileError, ObjectRef

CHUNK_ROWS = 5000  # samples per transaction: ~0.1-0.5 s of write lock (bench/import_file.py)
# second key of pg_advisory_xact_lock(int, int): the first is this namespace, apart from other locks
IMPORT_LOCK_NAMESPACE = 0x7469_6D70  # "timp"
_TARGET_NAME_LENGTH = cast(String, cast(Table, Target.__table__).c.name.type).length or 200


@dataclass(frozen=True)
class IgnoredLine:
    """An ignored sample with the file line it came from."""

    line: int | None
    sample: IgnoredSample


@dataclass
class FileImport:
    path: str
    already_imported: bool
    result: IngestResult
    read: ReadStats = field(default_factory=ReadStats)
    ignored: list[IgnoredLine] = field(default_factory=list)  # the first few, with their lines
    recorded: bool = False  # the checksum was recorded: importing the file again does nothing
    oldest: datetime | None = None  # the file's first and last sample_time
    newest: datetime | None = None
    size: int = 0  # bytes imported: the file's size when the import began
    grew_to: int | None = None  # the file's size at the end, when it grew meanwhile (rows left over)

    @property
    def complete(self) -> bool:
        """Every sample of the file is in the store (stored now or before)."""
        return self.result.ignored_count == 0 and self.read.cut_at_line is None


class ImportStoppedError(ImportFileError):
    """A problem the second pass met after some chunks were committed (the file was changed while
    it was imported): the samples stored so far stay (an import again recognises them), and the
    message says how many, so nobody reads "nothing was stored"."""

    def __init__(self, error: ImportFileError, stored: IngestResult) -> None:
        self.stored = stored
        where = f"{stored.samples} samples ({stored.snapshots} snapshots) of this file were stored before it"
        super().__init__(
            error.path,
            error.line,
            error.column,
            f"{error.message} [the file changed while it was imported; {where}: import it again once "
            "it is complete, the samples already stored are recognised]",
        )


def _whole_lines(path: Path, size: int) -> int:
    """The end of the last whole line within the first `size` bytes (a writer may be mid-line)."""
    with path.open("rb") as fh:
        start = max(0, size - (1 << 20))
        fh.seek(start)
        tail = fh.read(size - start)
    end = tail.rfind(b"\n")
    return start + end + 1 if end >= 0 else size


def _sha256(path: Path, size: int) -> str:
    """The checksum of the file's first `size` bytes (what the import reads)."""
    h = hashlib.sha256()
    left = size
    with path.open("rb") as fh:
        while left > 0 and (chunk := fh.read(min(1 << 20, left))):
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def store_limits() -> StoreLimits:
    """The object columns' sizes (app/store/models.py), as the reader checks them."""
    table = cast(Table, DbObject.__table__)
    ref_fields = set(ObjectRef.__dataclass_fields__)
    text_limits: dict[str, int] = {}
    whole: dict[str, int] = {}
    for col in table.columns:
        if col.name not in ref_fields:
            continue
        if isinstance(col.type, String) and col.type.length:
            text_limits[col.name] = col.type.length
        elif isinstance(col.type, BigInteger):
            whole[col.name] = 2**63 - 1
        elif isinstance(col.type, Integer):
            whole[col.name] = 2**31 - 1
    # the server also names the target: "import:<engine>:<server>"
    longest_prefix = max(len(import_target_name("", e)) for e in ("sqlserver", "db2"))
    text_limits["server"] = min(text_limits.get("server", 256), _TARGET_NAME_LENGTH - longest_prefix)
    return StoreLimits(text=text_limits, whole=whole)


def _lock_targets(session: Session, target_ids: list[int]) -> None:
    """On PostgreSQL, one writer per target until the transaction ends (ids in order: no deadlock)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for target_id in sorted(set(target_ids)):
        session.execute(
            text("SELECT pg_advisory_xact_lock(:ns, :id)"), {"ns": IMPORT_LOCK_NAMESPACE, "id": target_id}
        )


def _live_target(session: Session, engine: str, server: str) -> int | None:
    """The one polled target whose objects are on `server`, if there is exactly one: files of a
    server that is also polled belong to its series, not to a second target holding the same
    objects (the advice would count their I/O and GB twice)."""
    ids = list(
        session.scalars(
            select(Target.id)
            .where(
                Target.engine == engine,
                Target.source != "import",
                select(DbObject.id)
                .where(DbObject.target_id == Target.id, DbObject.server == server)
                .exists(),
            )
            .limit(2)
        )
    )
    return ids[0] if len(ids) == 1 else None


def _ensure_targets(
    store: Store, servers: list[tuple[str, str]], now: datetime
) -> dict[tuple[str, str], int]:
    """The target each server's samples go to: the polled target of that server when there is
    one, else its import target (insert-or-get, in name order), in a transaction of their own."""
    ids: dict[tuple[str, str], int] = {}
    with store.write_session() as s:
        for engine, server in sorted(servers, key=lambda es: import_target_name(es[1], es[0])):
            live = _live_target(s, engine, server)
            ids[(engine, server)] = (
                live if live is not None else import_target(s, server=server, engine=engine, now=now).id
            )
    return ids


def _store_chunk(
    store: Store, chunk: list[FileSnapshot], targets: dict[tuple[str, str], int]
) -> IngestResult:
    """One transaction: lock the chunk's targets, then load their latest samples and insert."""
    by_target: dict[int, list[FileSnapshot]] = {}
    for item in chunk:
        snap = item.snapshot
        by_target.setdefault(targets[(str(snap.engine), snap.server)], []).append(item)
    total = IngestResult()
    with store.write_session() as s:
        _lock_targets(s, list(by_target))
        # in id order, as collector workers lock them: no deadlock between the two
        for target_id, items in sorted(by_target.items()):
            # the row lock also serialises with a live poll of the same target (app/collect.py)
            target = s.get(Target, target_id, with_for_update=True)
            assert target is not None
            snapshots = [i.snapshot for i in items]
            total.add(ingest_snapshots(s, target, snapshots, guard_overlap=True, imported=True))
    return total


def _record(store: Store, digest: str, path: Path, now: datetime, total: IngestResult) -> None:
    row = {
        "sha256": digest,
        "path": str(path)[-2000:],
        "imported_at": now,
        "snapshots": total.snapshots,
        "samples": total.samples,
    }
    table = cast(Table, ImportedFile.__table__)
    with store.session() as s:
        insert = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
        s.execute(insert(table).values(row).on_conflict_do_nothing(index_elements=["sha256"]))


def _lines_of(ignored: list[IgnoredSample], chunk: list[FileSnapshot]) -> list[IgnoredLine]:
    """The file line of each ignored sample of a chunk."""
    where: dict[tuple[str, str, datetime], int] = {}
    wanted = {(i.server, i.key, i.sample_time) for i in ignored}
    for item in chunk:
        snap = item.snapshot
        for sample, line in zip(snap.samples, item.lines, strict=True):
            key = (snap.server, sample.ref.key, snap.sample_time)
            if key in wanted:
                where.setdefault(key, line)
    return [IgnoredLine(where.get((i.server, i.key, i.sample_time)), i) for i in ignored]


def import_file(
    store: Store,
    path: str | Path,
    *,
    progress: Callable[[int], None] | None = None,
    now: datetime | None = None,
    partial: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    committed: Callable[[int], None] | None = None,
) -> FileImport:
    """Validate the whole file (raises ImportFileError naming file/line/column; nothing stored),
    then store it in chunks; the same content imported twice is stored once.

    `progress` gets bytes done over both passes (twice the file size at the end); `committed`
    the number of snapshots stored so far after each chunk's commit. `partial` keeps the complete
    samples before a collection tool's error message at the end of the file.
    """
    path = Path(path)
    now = now or datetime.now(UTC)
    size = path.stat().st_size  # what the import reads, however the file grows meanwhile
    digest = _sha256(path, size)
    if path.stat().st_size > size:  # still being written: up to its last whole line
        size = _whole_lines(path, size)
        digest = _sha256(path, size)
    with store.session() as s:
        if s.get(ImportedFile, digest) is not None:
            return FileImport(str(path), True, IngestResult(), recorded=True, size=size)
    limits = store_limits()
    read = ReadStats()
    servers: set[tuple[str, str]] = set()
    out = FileImport(str(path), False, IngestResult(), read, size=size)
    for item in iter_import_file(
        path, now=now, partial=partial, limits=limits, progress=progress, stats=read, size=size
    ):
        snap = item.snapshot
        servers.add((str(snap.engine), snap.server))
        out.oldest = min(out.oldest or snap.sample_time, snap.sample_time)
        out.newest = max(out.newest or snap.sample_time, snap.sample_time)
    targets = _ensure_targets(store, sorted(servers), now) if servers else {}
    second = None if progress is None else (lambda done: progress(size + done))
    chunk: list[FileSnapshot] = []
    rows = 0

    def flush() -> None:
        result = _store_chunk(store, chunk, targets)
        room = IGNORED_LISTED - len(out.ignored)
        if result.ignored and room > 0:
            out.ignored.extend(_lines_of(result.ignored[:room], chunk))
        out.result.add(result)
        if committed is not None:
            committed(out.result.snapshots)

    try:
        for item in iter_import_file(
            path, now=now, partial=partial, limits=limits, progress=second, size=size
        ):
            chunk.append(item)
            rows += len(item.snapshot.samples)
            if rows >= chunk_rows:
                flush()
                chunk, rows = [], 0
    except ImportFileError as exc:  # the bytes changed since the first pass read them
        if out.result.snapshots:
            raise ImportStoppedError(exc, out.result) from None
        raise
    if chunk:
        flush()
    if out.result.ignored_count == 0:
        _record(store, digest, path, now, out.result)
        out.recorded = True
    if (grown := path.stat().st_size) > size:
        out.grew_to = grown
    return out
