"""Building one move from one advice object: the engine actions, their new names and paths.

New names: online file moves add `<logical name>_<tier>` (an earlier tier suffix is replaced,
never stacked); a partition goes to `<filegroup>_<tier>`, created with one file in the tier's
directory; DB2 table spaces go to the tier's storage group (created from the policy if missing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from migrations.advice_read import AdviceError, Obj, Reader, TierSpot
from migrations.plan import (
    Action,
    FileMove,
    Move,
    MoveDataPartition,
    MoveFiles,
    MovePartition,
    MoveTablespace,
    NewFile,
    StorageGroup,
    Target,
    Unsupported,
    Why,
)
from migrations.quoting import MAX_NAME, UnsafeNameError, basename, check_db2_alias, file_stem

SYSTEM_DATABASES = frozenset({"master", "model", "msdb", "mssqlsystemresource"})


def why(raw: Mapping[str, Any], size: int | None) -> Why:
    predicted = raw.get("predicted") if isinstance(raw.get("predicted"), dict) else {}
    assert isinstance(predicted, dict)

    def num(v: object) -> float | None:
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    reasons = raw.get("reasons")
    return Why(
        profile=raw.get("profile") if isinstance(raw.get("profile"), str) else None,
        rule=raw.get("rule") if isinstance(raw.get("rule"), str) else None,
        reasons=tuple(r for r in reasons if isinstance(r, str)) if isinstance(reasons, list) else (),
        io_ms_per_s_now=num(predicted.get("io_ms_per_s_now")),
        io_ms_per_s_after=num(predicted.get("io_ms_per_s_after")),
        size_bytes=size,
    )


def _suffixed(base: str, tier: str, tiers: Sequence[str]) -> str:
    """`base_tier` within 128 characters, dropping an earlier tier suffix first."""
    for t in sorted(tiers, key=len, reverse=True):
        if base.endswith(f"_{t}") and len(base) > len(t) + 1:
            base = base[: -(len(t) + 1)]
            break
    suffix = f"_{tier}"
    while len((base + suffix).encode("utf-16-le")) // 2 > MAX_NAME:
        base = base[:-1]
    return base + suffix


def _distinct(where: str, files: tuple[FileMove, ...]) -> None:
    """Logical names are unique in a database; the new names and paths must not collide either."""
    names = [f.from_name.casefold() for f in files]
    if len(set(names)) != len(names):
        raise AdviceError(f"{where}: two files share a logical name; the advice is inconsistent")
    new_names = [f.to_name.casefold() for f in files if f.to_name != f.from_name]
    paths = [f.to_path.casefold() for f in files]
    if len(set(paths)) != len(paths):
        raise Unsupported(
            f"{where}: two files would get the same path on the target: {', '.join(f.to_path for f in files)}"
        )
    if set(new_names) & set(names) or len(set(new_names)) != len(new_names):
        raise Unsupported(f"{where}: the new logical names would collide with the existing ones")


def _split_table(where: str, value: str) -> tuple[str, str]:
    parts = value.split(".")
    if len(parts) != 2 or not all(parts):
        raise Unsupported(
            f"{where}: table_name {value!r} cannot be split into schema and table unambiguously "
            "(a name contains '.'); move this partition by hand"
        )
    return parts[0], parts[1]


class Builder(Reader):
    def move(self, o: Obj, objects: Sequence[Obj]) -> Move:
        where = self.where(o.index, o.raw)
        to = self.tiers[o.recommended_tier]
        target = Target("sqlserver" if o.engine == "sqlserver" else "db2", o.server, o.database)
        self.name(where, o.server, "server")
        self.name(where, o.database, "database")
        if o.engine == "db2":
            try:
                check_db2_alias(o.database, f"{where}: database")
            except UnsafeNameError as exc:
                raise Unsupported(str(exc)) from exc
        action: Action
        if o.engine == "sqlserver":
            action, size = self.sqlserver_action(where, o, to, objects)
        else:
            action, size = self.db2_action(where, o, to)
        return Move(
            key=o.key,
            target=target,
            kind=o.kind,
            name=o.name,
            from_tier=o.current_tier,
            to_tier=o.recommended_tier,
            action=action,
            why=why(o.raw, size),
            notes=()
            if o.current_tier
            else ("the current tier is unknown: the policy matches no tier to its location",),
        )

    # -- SQL Server ----------------------------------------------------------------------------

    def directory(self, where: str, tier: TierSpot) -> str:
        if not tier.sqlserver_directory:
            raise AdviceError(f"{where}: tier {tier.name} has no locations.sqlserver_directory in the policy")
        return self.path(
            where, tier.sqlserver_directory, f"tier {tier.name} sqlserver_directory", directory=True
        )

    def file(
        self, where: str, raw: Mapping[str, Any], directory: str, tier: str, *, keep_name: bool
    ) -> FileMove:
        logical = self.text(where, raw, "logical_name", optional=True)
        physical = self.text(where, raw, "physical_name", optional=True)
        if logical is None or physical is None:
            raise AdviceError(f"{where}: a file has no location (logical_name and physical_name are needed)")
        self.name(where, logical, "logical file name")
        old = self.path(where, physical, f"file {logical}")
        new = self.path(where, directory + basename(old), f"file {logical} on tier {tier}")
        if new.casefold() == old.casefold():
            raise Unsupported(f"{where}: file {logical} is already at {old}")
        to_name = logical if keep_name else _suffixed(logical, tier, self.order)
        size = self.integer(where, raw, "size_bytes", optional=True)
        file_id = self.integer(where, raw, "file_id", optional=True)
        return FileMove(logical, old, to_name, new, size, file_id)

    def sqlserver_action(
        self, where: str, o: Obj, to: TierSpot, objects: Sequence[Obj]
    ) -> tuple[MoveFiles | MovePartition, int | None]:
        if o.database.lower() in SYSTEM_DATABASES:
            raise Unsupported(
                f"{where}: {o.database} is a system database; it moves with the instance, not by script"
            )
        directory = self.directory(where, to)
        size = self.integer(where, o.raw, "size_bytes", optional=True)
        if o.kind == "partition":
            return self.partition(where, o, to, directory, objects)
        if o.kind in ("filegroup", "tempdb"):
            files = o.raw.get("files")
            if not isinstance(files, list) or not files:
                raise AdviceError(
                    f"{where}: {o.kind} {o.name} has no location (its files list is missing or empty)"
                )
            raws = [f for f in files if isinstance(f, dict)]
            if len(raws) != len(files):
                raise AdviceError(f"{where}: every entry of files must be a JSON object")
            if o.kind == "tempdb" or o.database.lower() == "tempdb":
                moves = tuple(self.file(where, f, directory, to.name, keep_name=True) for f in raws)
                _distinct(where, moves)
                return MoveFiles("tempdb", "restart", moves), size
            filegroup = self.name(where, self.req(where, o.raw, "filegroup"), "filegroup")
            offline = any(f.get("file_id") == 1 for f in raws)
            moves = tuple(self.file(where, f, directory, to.name, keep_name=offline) for f in raws)
            _distinct(where, moves)
            return MoveFiles("filegroup", "offline" if offline else "online", moves, filegroup), size
        if o.kind == "log_file":
            f = self.file(where, o.raw, directory, to.name, keep_name=True)
            if o.database.lower() == "tempdb":
                return MoveFiles("tempdb", "restart", (f,)), size
            return MoveFiles("log", "offline", (f,)), size
        if o.kind == "data_file":
            if o.raw.get("file_id") != 1:
                raise Unsupported(
                    f"{where}: a data file on its own (no filegroup in the advice) is only moved when it is the primary file"
                )
            f = self.file(where, o.raw, directory, to.name, keep_name=True)
            return MoveFiles("data_file", "offline", (f,)), size
        raise Unsupported(f"{where}: kind {o.kind!r} has no SQL Server move")

    def partition(
        self, where: str, o: Obj, to: TierSpot, directory: str, objects: Sequence[Obj]
    ) -> tuple[MovePartition, int | None]:
        table_name = self.req(where, o.raw, "table_name")
        schema, table = _split_table(where, table_name)
        number = self.integer(where, o.raw, "partition_number")
        assert number is not None
        if number < 1:
            raise AdviceError(f"{where}: partition_number must be >= 1 for SQL Server, got {number}")
        source_fg = self.name(where, self.req(where, o.raw, "filegroup"), "filegroup")
        target_fg = _suffixed(source_fg, to.name, self.order)
        size = 0
        known = False
        for other in objects:
            same = (
                other.kind == "partition"
                and other.server == o.server
                and other.database == o.database
                and other.raw.get("table_name") == table_name
                and other.raw.get("partition_number") == number
            )
            if same and isinstance(other.raw.get("size_bytes"), int):
                size += int(other.raw["size_bytes"])
                known = True
        new_file = NewFile(
            name=self.name(where, _suffixed(target_fg, "1", []), "new file name"),
            path=self.path(where, directory + file_stem(o.database, target_fg) + ".ndf", "new file"),
            size_bytes=size,
        )
        action = MovePartition(
            schema=self.name(where, schema, "schema"),
            table=self.name(where, table, "table"),
            partition_number=number,
            scheme=self.name(where, self.req(where, o.raw, "partition_scheme"), "partition scheme"),
            function=self.name(where, self.req(where, o.raw, "partition_function"), "partition function"),
            source_filegroup=source_fg,
            target_filegroup=self.name(where, target_fg, "target filegroup"),
            create_target=new_file,
            range_low=self.text(where, o.raw, "range_low", optional=True),
            range_high=self.text(where, o.raw, "range_high", optional=True),
            size_bytes=size if known else None,
        )
        return action, (size if known else None)

    # -- DB2 -----------------------------------------------------------------------------------

    def group(self, where: str, tier: TierSpot) -> StorageGroup:
        if not tier.db2_storage_group:
            raise AdviceError(f"{where}: tier {tier.name} has no locations.db2_storage_group in the policy")
        return StorageGroup(
            name=self.name(where, tier.db2_storage_group, f"tier {tier.name} storage group"),
            paths=tuple(self.path(where, p, f"tier {tier.name} storage path") for p in tier.db2_paths),
            overhead_ms=tier.db2_overhead_ms,
            device_read_rate_mb_s=tier.db2_device_read_rate_mb_s,
            data_tag=tier.db2_data_tag,
        )

    def db2_action(
        self, where: str, o: Obj, to: TierSpot
    ) -> tuple[MoveTablespace | MoveDataPartition, int | None]:
        size = self.integer(where, o.raw, "size_bytes", optional=True)
        if o.kind == "tempdb":
            raise Unsupported(
                f"{where}: {o.name} is a temporary table space; DB2 cannot re-point those at another storage "
                "group (drop and recreate it on the target group by hand)"
            )
        if o.kind == "log_file":
            raise Unsupported(
                f"{where}: the DB2 transaction log moves with `UPDATE DB CFG ... USING NEWLOGPATH` and a "
                "reactivation; the policy has no log path per tier, so it is not scripted"
            )
        target = self.group(where, to)
        sg = self.text(where, o.raw, "storage_group", optional=True)
        source = StorageGroup(self.name(where, sg, "storage group")) if sg else None
        tablespace = self.name(
            where, self.text(where, o.raw, "tablespace", optional=True) or o.name, "table space"
        )
        if source is not None and source.name == target.name:
            raise Unsupported(f"{where}: {tablespace} is already in storage group {target.name}")
        if o.kind == "tablespace":
            return MoveTablespace(tablespace, source, target), size
        if o.kind == "partition":
            table_name = self.req(where, o.raw, "table_name")
            schema, table = _split_table(where, table_name)
            number = self.integer(where, o.raw, "partition_number")
            assert number is not None
            label = o.name[len(table_name) + 1 :] if o.name.startswith(table_name + " ") else None
            return (
                MoveDataPartition(
                    schema=self.name(where, schema, "schema"),
                    table=self.name(where, table, "table"),
                    partition_id=number,
                    tablespace=tablespace,
                    source=source,
                    target=target,
                    partition_name=self.name(where, label, "partition name") if label else None,
                    range_low=self.text(where, o.raw, "range_low", optional=True),
                    range_high=self.text(where, o.raw, "range_high", optional=True),
                ),
                size,
            )
        raise Unsupported(f"{where}: kind {o.kind!r} has no DB2 move")
