"""ILM scripts: the partition moves of an ILM plan (`tierwise ilm`), month by month.

Pure: the advice JSON (`report_json`) and the ILM plan JSON (`app.ilm.plan_json`) in, moves per
month out; the same generators as `tierwise script` render them. Each month's moves are built
from the advice objects with the partition's location as the earlier months leave it (a partition
moved to `FG_x_fc` in May moves on from `FG_x_fc` in September), so every script's pre-checks
expect the state the earlier scripts produce.

The leading edge (partitions the plan creates ahead of time) becomes an AddPartition (SQL
Server: NEXT USED + SPLIT RANGE) or AddDataPartition (DB2: ADD PARTITION … IN a table space on
the hot storage group). Later moves of partitions that do not exist yet are left to the next
`tierwise ilm` run (noted), since their names and locations are not known until they exist.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from migrations.advice_build import Builder, _db2_suffixed, _schema_table, _suffixed
from migrations.advice_read import ENGINE, AdviceError, Dialect, TierSpot
from migrations.from_advice import Skipped, select_moves
from migrations.plan import (
    AddDataPartition,
    AddPartition,
    Move,
    MoveDataPartition,
    MovePartition,
    NewFile,
    Options,
    Script,
    SetReadOnly,
    StorageGroup,
    Target,
    Unsupported,
    Why,
)
from migrations.quoting import comment_lines, file_stem
from migrations.render import render_check, render_pair
from migrations.tsql_frame import part_guard

PKey = tuple[str, str, str, int]  # server, database, table_name, partition number


@dataclass(frozen=True, slots=True)
class IlmMonth:
    month: str  # YYYY-MM
    moves: tuple[Move, ...]


@dataclass(frozen=True, slots=True)
class IlmSelection:
    months: tuple[IlmMonth, ...]
    skipped: tuple[Skipped, ...]


def format_like(sample: str | None, d: date) -> str:
    """A date written the way the table's existing boundaries are: yyyymm / yyyymmdd integers
    stay integers, anything else is an ISO date."""
    s = (sample or "").strip().strip("'")
    if re.fullmatch(r"\d{6}", s):
        return f"{d.year:04d}{d.month:02d}"
    if re.fullmatch(r"\d{8}", s):
        return f"{d.year:04d}{d.month:02d}{d.day:02d}"
    return d.isoformat()


def _pkey(o: Mapping[str, Any]) -> PKey:
    number = o.get("partition_number")
    return (
        str(o.get("server")),
        str(o.get("database")),
        str(o.get("table_name")),
        number if isinstance(number, int) else -1,
    )


def _location_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {k: raw.get(k) for k in ("filegroup", "tablespace", "storage_group", "current_tier")}


def ilm_moves(
    advice: object, plan: object, *, source: str, tiers: Sequence[TierSpot], dialect: Dialect
) -> IlmSelection:
    """The moves of each month of `plan` for `dialect`; other-engine tables and what cannot be
    scripted come back as notes."""
    if not isinstance(advice, dict) or not isinstance(advice.get("objects"), list):
        raise AdviceError(f"{source}: not the JSON of `tierwise advise`")
    if not isinstance(plan, dict) or not isinstance(plan.get("tables"), list):
        raise AdviceError(f"{source}: not an ILM plan (expected a tables list)")
    engine = ENGINE[dialect]
    objects: list[dict[str, Any]] = [o for o in advice["objects"] if isinstance(o, dict)]
    by_key = {(o.get("server"), o.get("key")): o for o in objects}
    parts: dict[PKey, list[dict[str, Any]]] = {}
    for o in objects:
        if o.get("kind") == "partition" and isinstance(o.get("partition_number"), int):
            parts.setdefault(_pkey(o), []).append(o)
    state: dict[PKey, dict[str, Any]] = {pk: _location_fields(objs[0]) for pk, objs in parts.items()}
    skipped: list[Skipped] = []
    events: dict[str, list[tuple[str, Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]]] = {}
    for t in plan["tables"]:
        if t.get("engine") != engine:
            skipped.append(
                Skipped(
                    t.get("server", "?"),
                    str(t.get("table")),
                    f"a {t.get('engine')} table: not part of a {dialect} plan",
                )
            )
            continue
        for p in t.get("partitions", []):
            moves = p.get("moves") or []
            if p.get("new"):
                if moves:
                    events.setdefault(moves[0]["date"][:7], []).append(("new", t, p, moves[0]))
                if len(moves) > 1:
                    skipped.append(
                        Skipped(t["server"], p["key"], "later moves of a partition that does not exist yet: planned "
                                "again by the next `tierwise ilm` run once it exists")
                    )  # fmt: skip
                continue
            for m in moves:
                events.setdefault(m["date"][:7], []).append(("move", t, p, m))
    builder = Builder(source, tiers, dialect)
    months: list[IlmMonth] = []
    # partitions the leading edge creates: never moved here, but they share table spaces, so a
    # later month must not re-point a table space that now holds one of them too
    created: list[dict[str, Any]] = []
    for month in sorted(events):
        month_moves: list[Move] = []
        doc = {"objects": copy.deepcopy(objects) + copy.deepcopy(created)}
        for o in doc["objects"]:
            if o.get("kind") == "partition" and _pkey(o) in state:
                o.update(state[_pkey(o)])
        wanted: dict[str, str] = {}
        frozen: dict[str, str] = {}  # the moves whose plan entry says read_only -> the plan's reason
        for kind, t, p, m in events[month]:
            if kind != "move":
                continue
            raw = by_key.get((t["server"], p["key"]))
            if raw is None:
                skipped.append(
                    Skipped(t["server"], p["key"], f"{month}: not in the advice; cannot script its move")
                )
                continue
            pk = _pkey(raw)
            for o in doc["objects"]:
                if o.get("kind") == "partition" and _pkey(o) == pk:
                    o["recommended_tier"] = m["to_tier"]
            wanted[f"{raw['server']}|{raw['key']}"] = m["to_tier"]
            if m.get("read_only"):
                frozen[f"{raw['server']}|{raw['key']}"] = str(m.get("reason") or "read-only by the ILM plan")
        if wanted:
            sel = select_moves(doc, source=source, tiers=tiers, dialect=dialect, only=list(wanted))
            skipped.extend(replace(s, reason=f"{month}: {s.reason}") for s in sel.skipped)
            for mv in sel.moves:
                if f"{mv.target.server}|{mv.key}" in frozen and isinstance(mv.action, MoveDataPartition):
                    mv = replace(mv, notes=(*mv.notes, DB2_READ_ONLY_NOTE))
                    skipped.append(Skipped(mv.target.server, mv.key, f"{month}: {DB2_READ_ONLY_NOTE}"))
                month_moves.append(mv)
                raw = by_key[(mv.target.server, mv.key)]
                st = state[_pkey(raw)]
                st["current_tier"] = mv.to_tier
                a = mv.action
                if isinstance(a, MovePartition):
                    st["filegroup"] = a.target_filegroup
                elif isinstance(a, MoveDataPartition):
                    st["storage_group"] = a.target.name
                    st["tablespace"] = a.target_tablespace or a.tablespace
            marks, notes = _read_only_marks(
                month, [mv for mv in sel.moves if f"{mv.target.server}|{mv.key}" in frozen], frozen,
                state, by_key, events, created, builder.order,
            )  # fmt: skip
            month_moves.extend(marks)
            skipped.extend(notes)
        for kind, t, p, m in events[month]:
            if kind != "new":
                continue
            try:
                edge = _leading_edge(builder, t, p, m, parts, state, engine)
                month_moves.append(edge)
                created.append(_occupant(edge, t["table"], -len(created) - 1))
            except Unsupported as exc:
                skipped.append(Skipped(t["server"], p["key"], f"{month}: unsupported here: review: {exc}"))
        if month_moves:
            months.append(IlmMonth(month, tuple(month_moves)))
    return IlmSelection(tuple(months), tuple(skipped))


DB2_READ_ONLY_NOTE = (
    "the ILM plan marks this partition read-only; Db2 has no read-only table space, so nothing is "
    "scripted for it (the move itself is): revoke INSERT/UPDATE/DELETE on the table or guard the range "
    "by hand if writes must be refused"
)


def _read_only_marks(
    month: str,
    moves: Sequence[Move],
    reasons: Mapping[str, str],
    state: Mapping[PKey, Mapping[str, Any]],
    by_key: Mapping[tuple[Any, Any], Mapping[str, Any]],
    events: Mapping[str, Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]]],
    created: Sequence[Mapping[str, Any]],
    order: Sequence[str],
) -> tuple[list[Move], list[Skipped]]:
    """SQL Server: READ_ONLY for the filegroups that this month's read-only moves fill, when the
    filegroup then holds only those partitions (as far as the advice and the plan show) and no
    later month moves anything into or out of it; otherwise a note. The script checks the
    filegroup's contents again at run time (SetReadOnly.partitions)."""
    groups: dict[tuple[str, str, str], list[Move]] = {}
    for mv in moves:
        if isinstance(mv.action, MovePartition):
            groups.setdefault((mv.target.server, mv.target.database, mv.action.target_filegroup), []).append(
                mv
            )
    marks: list[Move] = []
    notes: list[Skipped] = []
    for (server, database, fg), group in groups.items():
        mine = {_pkey(by_key[(server, mv.key)]) for mv in group}
        why_not = None
        occupants = {
            pk for pk, st in state.items() if pk[:2] == (server, database) and st.get("filegroup") == fg
        }
        if occupants - mine:
            why_not = "other partitions in the advice are in it too"
        elif any(
            o.get("server") == server and o.get("database") == database and o.get("filegroup") == fg
            for o in created
        ):
            why_not = "a partition the plan creates is in it"
        else:
            for later in sorted(m for m in events if m > month):
                for kind, t, p, m in events[later]:
                    raw = by_key.get((t["server"], p["key"]))
                    if (
                        kind != "move"
                        or raw is None
                        or (raw.get("server"), raw.get("database")) != (server, database)
                    ):
                        continue
                    pk = _pkey(raw)
                    if pk in mine:
                        why_not = f"its partitions move on in {later}"
                    elif (
                        pk in state and _suffixed(str(state[pk].get("filegroup")), m["to_tier"], order) == fg
                    ):
                        why_not = f"another partition moves into it in {later}"
                if why_not:
                    break
        first = group[0]
        if why_not is not None:
            for mv in group:
                notes.append(
                    Skipped(server, mv.key, f"{month}: read-only not scripted: filegroup {fg}: {why_not}; mark it "
                            "later by hand (tierwise script --read-only)")
                )  # fmt: skip
            continue
        parts = tuple(
            sorted({(mv.action.schema, mv.action.table, mv.action.partition_number)
                    for mv in group if isinstance(mv.action, MovePartition)})
        )  # fmt: skip
        marks.append(
            Move(
                key=f"{database}/filegroup/{fg}",
                target=first.target,
                kind="filegroup",
                name=fg,
                from_tier=first.to_tier,
                to_tier=first.to_tier,
                action=SetReadOnly(fg, True, parts),
                why=Why(
                    profile="ilm",
                    rule="read-only",
                    reasons=tuple(dict.fromkeys(reasons[f"{server}|{mv.key}"] for mv in group)),
                    size_bytes=sum(mv.why.size_bytes or 0 for mv in group) or None,
                ),
                notes=(
                    "ILM: the plan freezes these partitions after their move; READ_ONLY needs exclusive "
                    "access to the database (the script stops while other sessions use it)",
                ),
            )
        )
    return marks, notes


def _occupant(move: Move, table_name: str, number: int) -> dict[str, Any]:
    """A stand-in advice object for a partition the leading edge creates (never selected)."""
    a = move.action
    where: dict[str, Any] = {}
    if isinstance(a, AddDataPartition):
        where = {"tablespace": a.tablespace, "storage_group": a.target.name}
    elif isinstance(a, AddPartition):
        where = {"filegroup": a.filegroup}
    return {
        "engine": move.target.engine,
        "server": move.target.server,
        "database": move.target.database,
        "kind": "partition",
        "name": move.name,
        "key": move.key,
        "current_tier": move.to_tier,
        "recommended_tier": move.to_tier,
        "placement_unit": move.key,
        "table_name": table_name,
        "partition_number": number,
        **where,
    }


def _leading_edge(
    b: Builder,
    t: Mapping[str, Any],
    p: Mapping[str, Any],
    m: Mapping[str, Any],
    parts: Mapping[PKey, list[dict[str, Any]]],
    state: Mapping[PKey, dict[str, Any]],
    engine: str,
) -> Move:
    """The partition the plan creates ahead of time, next to the table's newest one."""
    where = f"{b.source}: {t['server']}|{t['database']}/{t['table']} new partition {p.get('range_start')}"
    mine = [
        (pk, objs)
        for pk, objs in parts.items()
        if pk[0] == t["server"] and pk[1] == t["database"] and pk[2] == t["table"]
    ]
    if not mine or not p.get("range_start"):
        raise Unsupported(f"{where}: the table's partitions are not in the advice")
    newest_pk, newest_objs = max(mine, key=lambda x: x[0][3])
    newest = newest_objs[0]
    st = state[newest_pk]
    start = date.fromisoformat(p["range_start"])
    tier = b.tier(where, m["to_tier"], "to_tier")
    to = b.tiers[tier]
    schema, table = _schema_table(where, newest)
    b.name(where, t["server"], "server")
    b.name(where, t["database"], "database")
    key = f"{t['database']}/partition/{t['table']}/new/{start.isoformat()}"
    why = Why(profile="ilm", rule="leading edge", reasons=(str(m.get("reason", "")),))
    if engine == "sqlserver":
        if newest.get("range_right") is False:
            raise Unsupported(
                "RANGE LEFT function: the split would move the current period's rows; add the boundary by hand"
            )
        fg = b.name(where, str(st.get("filegroup") or ""), "filegroup")
        create = None
        if st.get("current_tier") != tier:
            fg = b.name(where, _suffixed(fg, tier, b.order), "hot filegroup")
            directory = b.directory(where, to)
            create = NewFile(
                name=b.name(where, _suffixed(fg, "1", []), "new file name"),
                path=b.path(where, directory + file_stem(t["database"], fg) + ".ndf", "new file"),
                size_bytes=0,
            )
        action: AddPartition | AddDataPartition = AddPartition(
            schema=b.name(where, schema, "schema"),
            table=b.name(where, table, "table"),
            scheme=b.name(where, b.req(where, newest, "partition_scheme"), "partition scheme"),
            function=b.name(where, b.req(where, newest, "partition_function"), "partition function"),
            boundary=b.name(
                where, format_like(newest.get("range_low") or newest.get("range_high"), start), "boundary"
            ),
            filegroup=fg,
            create_filegroup=create,
        )
        target = Target("sqlserver", t["server"], t["database"])
    else:
        if newest.get("range_high") is None:
            raise Unsupported("the newest partition ends at MAXVALUE: a new range cannot be added after it")
        end = date.fromisoformat(p["range_end"]) if p.get("range_end") else None
        if end is None:
            raise Unsupported("the new partition has no end in the plan")
        ts = b.name(where, str(st.get("tablespace") or ""), "table space")
        like = ts
        group = b.group(where, to)
        if st.get("current_tier") != tier:
            ts = b.name(where, _db2_suffixed(ts, tier, b.order), "hot table space")
        elif st.get("storage_group"):
            # the newest partition's table space is on the hot tier already: the new one joins it
            group = StorageGroup(b.name(where, str(st["storage_group"]), "storage group"))
        sample = newest.get("range_low") or newest.get("range_high")
        action = AddDataPartition(
            schema=b.name(where, schema, "schema"),
            table=b.name(where, table, "table"),
            partition_name=f"P{start.year:04d}{start.month:02d}{start.day:02d}",
            range_low=format_like(sample, start),
            range_high=format_like(sample, end),
            low_inclusive=newest.get("low_inclusive")
            if isinstance(newest.get("low_inclusive"), bool)
            else True,
            high_inclusive=newest.get("high_inclusive")
            if isinstance(newest.get("high_inclusive"), bool)
            else False,
            tablespace=ts,
            like_tablespace=like,
            target=group,
        )
        target = Target("db2", t["server"], t["database"])
    return Move(
        key=key,
        target=target,
        kind="partition",
        name=f"{t['table']} new partition from {start.isoformat()}",
        from_tier=None,
        to_tier=tier,
        action=action,
        why=why,
        notes=("the ILM leading edge: the next period's partition, created empty on the hot tier",),
    )


# ---------------------------------------------------------------------------------------------
# one file per month


def _join(month: str, dialect: Dialect, texts: list[str], title: str, keys: list[str]) -> str:
    """A month's parts as one file, in run order, under a header that lists them."""
    head = comment_lines(
        [
            "=" * 96,
            f"tierwise ILM {title} for {month}: {len(texts)} part(s), run as one file, in this order:",
            *[f"  {i}. {k}" for i, k in enumerate(keys, start=1)],
            "Each part below is a complete script with its own header, checks and rollback notes.",
            "A part that stops stops the whole file; fix the cause and run the file again (done parts say 'already done').",
            "=" * 96,
        ],
        dialect,
    )
    first = ["--#SET TERMINATOR @"] if dialect == "db2" else []
    out = ["\n".join([*first, *head]) + "\n"]
    for i, text in enumerate(texts):
        if dialect == "tsql" and i > 0:
            out.append("\n".join([*part_guard(), "GO"]) + "\n")
        out.append(text)
    return "".join(out)


def month_pair(
    month: IlmMonth, dialect: Dialect, options: Options, now: datetime
) -> tuple[Script, Script, list[Move], list[Skipped]]:
    """The month's forward script (its moves in run order, each a complete script with its own
    header and checks) and its rollback (the rollbacks in reverse order). A part that stops
    stops the file: DB2 CLP ends at the first error; T-SQL parts after the first start with a
    guard batch that stops when an earlier part stopped."""
    parts: list[tuple[Move, str, str]] = []
    skipped: list[Skipped] = []
    restart = manual = False
    for move in month.moves:
        try:
            fwd, back = render_pair(move, dialect, options, now)
        except Unsupported as exc:
            skipped.append(
                Skipped(move.target.server, move.key, f"{month.month}: unsupported here: review: {exc}")
            )
            continue
        parts.append((move, fwd.text, back.text))
        restart = restart or fwd.restart_required
        manual = manual or fwd.manual_step

    keys = [f"{m.target.server}|{m.key} -> {m.to_tier}" for m, _, _ in parts]
    forward = Script(
        "forward",
        _join(month.month, dialect, [f for _, f, _ in parts], "forward script", keys),
        manual,
        restart,
    )
    back_keys = [f"undo {m.target.server}|{m.key}" for m, _, _ in reversed(parts)]
    rollback = Script(
        "rollback",
        _join(month.month, dialect, [b for _, _, b in reversed(parts)], "rollback script", back_keys),
        manual,
        restart,
    )
    return forward, rollback, [m for m, _, _ in parts], skipped


def month_check(month: IlmMonth, dialect: Dialect, options: Options, now: datetime) -> Script | None:
    """DB2: the month's check-only file (each part's check-only script, in run order; issue #30):
    run it days before the month's window. A later part's checks see the server as it is now, so
    a check on what an earlier part of the month builds (a storage group, a table space) says
    that it did not run. None for T-SQL (its scripts take TW_CHECK_ONLY themselves) or when no
    part can be scripted."""
    parts: list[tuple[Move, str]] = []
    for move in month.moves:
        try:
            check = render_check(move, dialect, options, now)
        except Unsupported:
            continue  # month_pair reports it
        if check is not None:
            parts.append((move, check.text))
    if not parts:
        return None
    keys = [f"check {m.target.server}|{m.key} -> {m.to_tier}" for m, _ in parts]
    return Script("check", _join(month.month, dialect, [c for _, c in parts], "check-only script", keys))
