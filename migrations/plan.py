"""The neutral plan: what moves where, in plain frozen data. The dialect modules render it.

A `Move` is one recommended change of one object (a filegroup, a log, tempdb, a partition, a
table space); its `action` says how, in engine terms, without any SQL. Every move has an
`inverse()` — the rollback script is the rendering of the inverse move, so forward and rollback
share one implementation and one set of pre-checks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

FileMode = Literal["online", "offline", "restart"]
DEFAULT_STORAGE_GROUP = "IBMSTOGROUP"


class PlanError(ValueError):
    """The plan cannot be scripted as asked; the message names the object."""


class Unsupported(PlanError):
    """The dialect cannot express this move safely: scripted nowhere, reported as a note."""


@dataclass(frozen=True, slots=True)
class Target:
    engine: Literal["sqlserver", "db2"]
    server: str
    database: str


@dataclass(frozen=True, slots=True)
class Why:
    """The recommendation behind the move, repeated in the script header."""

    profile: str | None = None
    rule: str | None = None
    reasons: tuple[str, ...] = ()
    io_ms_per_s_now: float | None = None
    io_ms_per_s_after: float | None = None
    size_bytes: int | None = None


# ---------------------------------------------------------------------------------------------
# SQL Server actions


@dataclass(frozen=True, slots=True)
class FileMove:
    """One database file: from (logical name, path) to (logical name, path). Offline and tempdb
    moves keep the logical name; online moves add a new file and remove the old one, so the
    names differ."""

    from_name: str
    from_path: str
    to_name: str
    to_path: str
    size_bytes: int | None = None
    file_id: int | None = None

    def inverse(self) -> FileMove:
        return FileMove(self.to_name, self.to_path, self.from_name, self.from_path, self.size_bytes, None)


@dataclass(frozen=True, slots=True)
class MoveFiles:
    """Move a filegroup's files (or a log file, or tempdb's files) to another directory.

    - online: ADD FILE on the target to the same filegroup, DBCC SHRINKFILE EMPTYFILE, REMOVE FILE
      (secondary data files; the database stays online).
    - offline: SET OFFLINE, copy by hand, MODIFY FILE, SET ONLINE (the primary data file and log
      files, which can never be removed: errors 5020 / 2555).
    - restart: MODIFY FILE only; takes effect when the instance restarts (tempdb).
    """

    what: Literal["filegroup", "log", "tempdb", "data_file"]
    mode: FileMode
    files: tuple[FileMove, ...]
    filegroup: str | None = None

    def inverse(self) -> MoveFiles:
        return replace(self, files=tuple(f.inverse() for f in self.files))


@dataclass(frozen=True, slots=True)
class NewFile:
    """A data file to create (for a filegroup that tierwise creates on a tier)."""

    name: str
    path: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class MovePartition:
    """Move one partition of a partitioned table (all of its aligned indexes) to a filegroup
    on another tier: switch out, rebuild onto the target, re-map the empty range, switch back."""

    schema: str
    table: str
    partition_number: int
    scheme: str
    function: str
    source_filegroup: str
    target_filegroup: str
    create_target: NewFile | None = None  # create the filegroup (with this file) when missing
    remove_source: NewFile | None = None  # rollback: remove the filegroup tierwise created, once empty
    range_low: str | None = None
    range_high: str | None = None
    size_bytes: int | None = None

    def inverse(self) -> MovePartition:
        return replace(
            self,
            source_filegroup=self.target_filegroup,
            target_filegroup=self.source_filegroup,
            create_target=None,
            remove_source=self.create_target,
        )


@dataclass(frozen=True, slots=True)
class SetReadOnly:
    """Mark a filegroup READ_ONLY (or back to READ_WRITE)."""

    filegroup: str
    read_only: bool = True

    def inverse(self) -> SetReadOnly:
        return replace(self, read_only=not self.read_only)


# ---------------------------------------------------------------------------------------------
# DB2 actions


@dataclass(frozen=True, slots=True)
class StorageGroup:
    """A DB2 storage group; without paths it must already exist (it is never created)."""

    name: str
    paths: tuple[str, ...] = ()
    overhead_ms: float | None = None
    device_read_rate_mb_s: float | None = None
    data_tag: int | None = None


@dataclass(frozen=True, slots=True)
class MoveTablespace:
    """Re-point a table space at another storage group (ALTER TABLESPACE … USING STOGROUP: online,
    asynchronous rebalance); a DMS table space is converted to automatic storage first."""

    tablespace: str
    source: StorageGroup | None  # None: not automatic storage (DMS) today
    target: StorageGroup

    def inverse(self) -> MoveTablespace:
        # a DMS table space was in no storage group: the rollback puts it in the default group of
        # automatic-storage databases (the conversion itself is one-way)
        return replace(self, source=self.target, target=self.source or StorageGroup(DEFAULT_STORAGE_GROUP))


@dataclass(frozen=True, slots=True)
class MoveDataPartition:
    """Move one data partition: by moving its table space when the table space holds nothing
    else (checked at run time); a shared table space is refused with a review note."""

    schema: str
    table: str
    partition_id: int
    tablespace: str
    source: StorageGroup | None
    target: StorageGroup
    partition_name: str | None = None
    range_low: str | None = None
    range_high: str | None = None

    def inverse(self) -> MoveDataPartition:
        return replace(self, source=self.target, target=self.source or StorageGroup(DEFAULT_STORAGE_GROUP))


Action = MoveFiles | MovePartition | SetReadOnly | MoveTablespace | MoveDataPartition


@dataclass(frozen=True, slots=True)
class Move:
    key: str
    target: Target
    kind: str
    name: str
    from_tier: str | None
    to_tier: str
    action: Action
    why: Why = field(default_factory=Why)
    notes: tuple[str, ...] = ()

    def inverse(self) -> Move:
        return replace(
            self, from_tier=self.to_tier, to_tier=self.from_tier or "(original)", action=self.action.inverse()
        )

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d["action"] = {"type": type(self.action).__name__, **asdict(self.action)}
        return d

    def checksum(self) -> str:
        """sha256 of the plan for this move (canonical JSON), printed in both scripts' headers."""
        text = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Options:
    """Knobs baked into the scripts (so the checksum covers them)."""

    generator: str = "tierwise"
    backup_max_age_hours: float = 24.0
    backup_check: Literal["error", "warn"] = "error"
    headroom_pct: float = 10.0
    file_growth_mb: int = 1024
    min_file_mb: int = 64


@dataclass(frozen=True, slots=True)
class Script:
    direction: Literal["forward", "rollback"]
    text: str
    manual_step: bool = False  # stops half-way for an operator action, then runs again
    restart_required: bool = False
    notes: tuple[str, ...] = ()
