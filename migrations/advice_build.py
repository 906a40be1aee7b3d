"""Building one move from one advice object: the engine actions, their new names and paths.

New names: online file moves add `<logical name>_<tier>` (an earlier tier suffix is replaced,
never stacked); a partition goes to `<filegroup>_<tier>`, created with one file in the tier's
directory; DB2 table spaces go to the tier's storage group (created from the policy if missing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from migrations.advice_read import AdviceError, Obj, Reader, TierSpot
from migrations.plan import (
    Action,
    FileMove,
    Move,
    MoveDataPartition,
    MoveDb2Log,
    MoveFiles,
    MovePartition,
    MoveTablespace,
    MoveTempTablespace,
    NewFile,
    StorageGroup,
    Target,
    Unsupported,
    Why,
)
from migrations.quoting import MAX_NAME, UnsafeNameError, basename, check_db2_alias, file_stem, path_separator

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


def _db2_suffixed(base: str, tier: str, tiers: Sequence[str]) -> str:
    """`base_TIER` within DB2's 128 bytes (UTF-8), the tier in upper case: DB2 folds ordinary
    identifiers to upper case, so a manual command naming the new table space works unquoted
    (`TS_ORDERS_FC`, not `"TS_ORDERS_fc"`). An earlier tier suffix is dropped in either case."""
    for t in sorted(tiers, key=len, reverse=True):
        if base.upper().endswith(f"_{t.upper()}") and len(base) > len(t) + 1:
            base = base[: -(len(t) + 1)]
            break
    suffix = f"_{tier.upper()}"
    while len((base + suffix).encode("utf-8")) > MAX_NAME:
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


def _schema_table(where: str, raw: Mapping[str, Any]) -> tuple[str, str]:
    """The advice's `schema` and `table` fields (tierwise advise writes them), else `schema_name`
    (the collected schema, a prefix of `table_name`); advice files from before those fields fall
    back to splitting `table_name` when that is unambiguous."""
    if "schema" in raw or "table" in raw:
        schema, table = raw.get("schema"), raw.get("table")
        if isinstance(schema, str) and schema and isinstance(table, str) and table:
            return schema, table
        raise Unsupported(
            f"{where}: the advice has no separate schema and table for {raw.get('table_name')!r} "
            "(a name contains '.'); move this partition by hand"
        )
    name, schema = raw.get("table_name"), raw.get("schema_name")
    if isinstance(name, str) and isinstance(schema, str) and schema and name.startswith(schema + "."):
        table = name[len(schema) + 1 :]
        if table:
            return schema, table
    return _split_table(where, str(name))


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
            action, size = self.db2_action(where, o, to, objects)
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

    def tempdb_directory(self, where: str, directory: str, server: str) -> str:
        """tempdb's directory on a tier: `<tier directory><instance>/tempdb/`, the instance named as a
        file stem (`HOST\\INST` -> `HOST_INST`). A tier's directory is often one root shared by the
        instances of an array or a cluster; tempdb files of two instances in one directory collide
        (the same temp2.ndf), and at a restart one instance takes over or fails on the other's file.
        The scripts check the directory exists and that no foreign file is at the target."""
        sep = path_separator(directory)
        return self.path(
            where, f"{directory}{file_stem(server)}{sep}tempdb{sep}", "tempdb directory", directory=True
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
                tempdb_dir = self.tempdb_directory(where, directory, o.server)
                moves = tuple(self.file(where, f, tempdb_dir, to.name, keep_name=True) for f in raws)
                _distinct(where, moves)
                return MoveFiles("tempdb", "restart", moves), size
            filegroup = self.name(where, self.req(where, o.raw, "filegroup"), "filegroup")
            offline = any(f.get("file_id") == 1 for f in raws)
            moves = tuple(self.file(where, f, directory, to.name, keep_name=offline) for f in raws)
            _distinct(where, moves)
            return MoveFiles("filegroup", "offline" if offline else "online", moves, filegroup), size
        if o.kind == "log_file":
            if o.database.lower() == "tempdb":
                tempdb_dir = self.tempdb_directory(where, directory, o.server)
                return MoveFiles(
                    "tempdb", "restart", (self.file(where, o.raw, tempdb_dir, to.name, keep_name=True),)
                ), size
            f = self.file(where, o.raw, directory, to.name, keep_name=True)
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
        schema, table = _schema_table(where, o.raw)
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
        self, where: str, o: Obj, to: TierSpot, objects: Sequence[Obj] = ()
    ) -> tuple[MoveTablespace | MoveDataPartition | MoveTempTablespace | MoveDb2Log, int | None]:
        size = self.integer(where, o.raw, "size_bytes", optional=True)
        if o.kind == "tempdb":
            ts = self.name(
                where, self.text(where, o.raw, "tablespace", optional=True) or o.name, "table space"
            )
            sg = self.text(where, o.raw, "storage_group", optional=True)
            target = self.group(where, to)
            if sg == target.name:
                raise Unsupported(f"{where}: {ts} is already in storage group {target.name}")
            return (
                MoveTempTablespace(
                    tablespace=ts,
                    new_tablespace=self.name(
                        where, _db2_suffixed(ts, to.name, self.order), "new table space"
                    ),
                    source=StorageGroup(self.name(where, sg, "storage group")) if sg else None,
                    target=target,
                ),
                size,
            )
        if o.kind == "log_file":
            if not to.db2_log_path:
                raise Unsupported(
                    f"{where}: the DB2 transaction log moves with `UPDATE DB CFG ... USING NEWLOGPATH` and a "
                    f"reactivation; no log path is given for tier {to.name} (locations.db2_log_path in the policy, "
                    f"or tierwise script --db2-log-path {to.name}=/path)"
                )
            old = self.text(where, o.raw, "physical_name", optional=True)
            if old is None:
                raise Unsupported(
                    f"{where}: the advice has no current log path; the rollback could not go back"
                )
            new = self.path(where, to.db2_log_path, f"tier {to.name} log path", directory=True)
            # DB2 appends NODEnnnn/ (and LOGSTREAMnnnn/ from 10.5) to NEWLOGPATH: go back to the base
            current = self.path(
                where,
                re.sub(r"NODE\d{4}[\\/](?:LOGSTREAM\d{4}[\\/])?$", "", old),
                "current log path",
                directory=True,
            )
            if '"' in new or '"' in current:
                raise Unsupported(f"{where}: a log path containing '\"' cannot be passed to UPDATE DB CFG")
            if new.startswith(current) or current.startswith(new):
                raise Unsupported(f"{where}: the log is already under {new}")
            return MoveDb2Log(current, new), size
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
            schema, table = _schema_table(where, o.raw)
            number = self.integer(where, o.raw, "partition_number")
            assert number is not None
            label = o.name[len(table_name) + 1 :] if o.name.startswith(table_name + " ") else None
            shared = any(
                other.kind == "partition"
                and other.server == o.server
                and other.database == o.database
                and other.raw.get("tablespace") == tablespace
                and (other.raw.get("table_name"), other.raw.get("partition_number")) != (table_name, number)
                for other in objects
            )
            action = MoveDataPartition(
                schema=self.name(where, schema, "schema"),
                table=self.name(where, table, "table"),
                partition_id=number,
                tablespace=tablespace,
                source=source,
                target=target,
                partition_name=self.name(where, label, "partition name") if label else None,
                range_low=self.text(where, o.raw, "range_low", optional=True),
                range_high=self.text(where, o.raw, "range_high", optional=True),
            )
            if shared:
                action = self.detach_route(where, o, action, to)
            return action, size
        raise Unsupported(f"{where}: kind {o.kind!r} has no DB2 move")

    def detach_route(self, where: str, o: Obj, a: MoveDataPartition, to: TierSpot) -> MoveDataPartition:
        """A partition whose table space other partitions share moves by detach / copy / attach
        into `<table space>_<tier>` on the target storage group."""
        if a.partition_name is None:
            raise Unsupported(f"{where}: the advice does not name the data partition; ATTACH needs its name")
        if a.source is None:
            raise Unsupported(
                f"{where}: table space {a.tablespace} is not in a storage group (DMS): the rollback could not "
                "find its way back; move this partition by hand"
            )
        flags = []
        for field, bound in (("low_inclusive", a.range_low), ("high_inclusive", a.range_high)):
            value = o.raw.get(field)
            if bound is not None and not isinstance(value, bool):
                raise Unsupported(
                    f"{where}: {field} is missing from the advice (re-run `tierwise advise`); the "
                    "re-attached range would be a guess"
                )
            flags.append(value if isinstance(value, bool) else None)
        for bound in (a.range_low, a.range_high):
            if bound is not None:
                self.name(where, bound, "partition range value")
        return replace(
            a,
            route="detach_attach",
            target_tablespace=self.name(
                where, _db2_suffixed(a.tablespace, to.name, self.order), "target table space"
            ),
            low_inclusive=flags[0],
            high_inclusive=flags[1],
        )
