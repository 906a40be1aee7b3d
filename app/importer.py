"""Import of collection-script CSV files into the store: all-or-nothing per file, idempotent."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from app.store.db import Store
from app.store.ingest import IngestResult, ingest_snapshots
from app.store.models import ImportedFile
from app.store.targets import import_target
from connectors.files import read_import_file
from connectors.records import Snapshot


@dataclass(frozen=True)
class FileImport:
    path: str
    already_imported: bool
    result: IngestResult


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def import_file(
    store: Store,
    path: str | Path,
    *,
    progress: Callable[[int], None] | None = None,
    now: datetime | None = None,
) -> FileImport:
    """Parse the whole file first (raises ImportFileError naming file/line/column), then store it
    in one transaction; the same content imported twice is stored once."""
    path = Path(path)
    digest = _sha256(path)
    with store.session() as s:
        if s.get(ImportedFile, digest) is not None:
            return FileImport(str(path), True, IngestResult())
    snapshots = read_import_file(path, progress=progress)
    by_server: dict[tuple[str, str], list[Snapshot]] = defaultdict(list)
    for snap in snapshots:
        by_server[(str(snap.engine), snap.server)].append(snap)
    total = IngestResult()
    now = now or datetime.now(UTC)
    with store.session() as s:
        for (engine, server), snaps in by_server.items():
            target = import_target(s, server=server, engine=engine, now=now)
            total.add(ingest_snapshots(s, target, snaps))
        s.add(
            ImportedFile(
                sha256=digest,
                path=str(path),
                imported_at=now,
                snapshots=total.snapshots,
                samples=total.samples,
            )
        )
    return FileImport(str(path), False, total)
