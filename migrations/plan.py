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

from migrations.durations import DEFAULT_COPY_RATE_MB_S

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

    what: Literal["filegroup", "log", "tempdb", "data_file", "database"]  # database: every offline file of it
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
    """Mark a filegroup READ_ONLY (or back to READ_WRITE).

    `partitions` (schema, table, partition number), when given, is everything the filegroup may
    hold: the script checks it at run time and refuses to freeze a filegroup that holds anything
    else (ILM read-only marks; `tierwise script --read-only` leaves it empty)."""

    filegroup: str
    read_only: bool = True
    partitions: tuple[tuple[str, str, int], ...] = ()

    def inverse(self) -> SetReadOnly:
        return replace(self, read_only=not self.read_only)


@dataclass(frozen=True, slots=True)
class AddPartition:
    """ILM leading edge (domain.md §3.4 "Sliding-window ILM"): `NEXT USED [filegroup]` on the
    scheme and `SPLIT RANGE (boundary)` of the function, so the next period's partition is
    created, empty, on the hot filegroup. RANGE RIGHT only (the new partition is the one above
    the boundary; on RANGE LEFT the split would give the current period's rows the new
    filegroup). Rollback (`remove`): `MERGE RANGE (boundary)` while the new partition is empty."""

    schema: str
    table: str
    scheme: str
    function: str
    boundary: str  # text, converted at run time to the function's parameter type
    filegroup: str
    create_filegroup: NewFile | None = None
    remove: bool = False

    def inverse(self) -> AddPartition:
        return replace(self, remove=not self.remove, create_filegroup=None)


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
    """Move one data partition to another storage group.

    - route "tablespace": the table space holds nothing but this partition (checked at run
      time): re-point the table space (ALTER TABLESPACE … USING STOGROUP).
    - route "detach_attach": the table space is shared with other partitions: detach the
      partition into a table, copy it into a table in `target_tablespace` (on the target storage
      group; created like the source table space when missing), attach that table back with the
      same range, SET INTEGRITY. The range literals (`range_low`/`range_high`, None = MINVALUE /
      MAXVALUE) and inclusive flags are checked against the catalog before anything changes."""

    schema: str
    table: str
    partition_id: int
    tablespace: str
    source: StorageGroup | None
    target: StorageGroup
    partition_name: str | None = None
    range_low: str | None = None
    range_high: str | None = None
    route: Literal["tablespace", "detach_attach"] = "tablespace"
    target_tablespace: str | None = None
    low_inclusive: bool | None = None
    high_inclusive: bool | None = None

    def inverse(self) -> MoveDataPartition:
        back = self.source or StorageGroup(DEFAULT_STORAGE_GROUP)
        if self.route == "detach_attach" and self.target_tablespace is not None:
            return replace(
                self, source=self.target, target=back, tablespace=self.target_tablespace,
                target_tablespace=self.tablespace,
            )  # fmt: skip
        return replace(self, source=self.target, target=back)


@dataclass(frozen=True, slots=True)
class MoveTempTablespace:
    """A DB2 system or user temporary table space (which one is read from the catalog at run
    time) to another storage group. Automatic storage temporary
    table spaces cannot change their storage group (IBM Db2 docs, "Temporary table spaces":
    a rebalance returns SQL0109N), so: create `new_tablespace` on the target group like the old
    one (page size, extent size, buffer pool), then drop the old one. Rollback: the same back,
    recreating the old name."""

    tablespace: str
    new_tablespace: str
    source: StorageGroup | None  # None: not automatic storage today
    target: StorageGroup

    def inverse(self) -> MoveTempTablespace:
        return replace(
            self, tablespace=self.new_tablespace, new_tablespace=self.tablespace,
            source=self.target, target=self.source or StorageGroup(DEFAULT_STORAGE_GROUP),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class MoveDb2Log:
    """The active log path of a DB2 database: `UPDATE DB CFG USING NEWLOGPATH` (through
    SYSPROC.ADMIN_CMD). It only records the new path; DB2 moves the active log there when the
    database is next activated (all applications disconnected, then ACTIVATE DATABASE or the
    first connection) — like tempdb on SQL Server."""

    from_path: str
    to_path: str

    def inverse(self) -> MoveDb2Log:
        return replace(self, from_path=self.to_path, to_path=self.from_path)


@dataclass(frozen=True, slots=True)
class AddDataPartition:
    """ILM leading edge on DB2: `ALTER TABLE … ADD PARTITION name STARTING … ENDING … IN ts`, with
    `ts` on the hot storage group (created when missing like `like_tablespace`: same page size,
    extent size, type). Rollback (`remove`): DETACH the partition into a table that is kept."""

    schema: str
    table: str
    partition_name: str
    range_low: str | None
    range_high: str | None
    low_inclusive: bool | None
    high_inclusive: bool | None
    tablespace: str
    like_tablespace: str
    target: StorageGroup
    remove: bool = False

    def inverse(self) -> AddDataPartition:
        return replace(self, remove=not self.remove)


Action = (
    MoveFiles
    | MovePartition
    | SetReadOnly
    | MoveTablespace
    | MoveDataPartition
    | AddPartition
    | AddDataPartition
    | MoveTempTablespace
    | MoveDb2Log
)


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
        if isinstance(self.action, SetReadOnly) and not self.action.partitions:
            del d["action"]["partitions"]  # plans from before the field keep their checksum
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
    # an offline copy's planning rate (the policy's change_windows copy rate for the move): the script's
    # downtime estimate and the one a recommendation shows before approval (migrations/impact.py)
    copy_rate_mb_s: float = DEFAULT_COPY_RATE_MB_S


# The order ops runs a move's scripts in, and the order pages list them: the check-only run days
# before the window, the move in it, the rollback only if needed.
RUN_ORDER = ("check", "forward", "rollback")


def run_order(direction: str) -> int:
    """A script's place in RUN_ORDER (an unknown direction last)."""
    return RUN_ORDER.index(direction) if direction in RUN_ORDER else len(RUN_ORDER)


@dataclass(frozen=True, slots=True)
class Script:
    direction: Literal["forward", "rollback", "check"]  # check: a DB2 check-only run (.check.db2)
    text: str
    manual_step: bool = False  # stops half-way for an operator action, then runs again
    restart_required: bool = False
    notes: tuple[str, ...] = ()
