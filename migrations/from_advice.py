"""From the advice JSON (`tierwise advise`) to moves: selection and run order.

Plain data in (the parsed JSON and the tiers' locations), moves and notes out. Bad input raises
`AdviceError` naming the source and the object; objects that are not moves, belong to the
other engine or cannot be scripted safely come back as `Skipped` notes. Reading is in
advice_read.py, building one move in advice_build.py.

Selection:
- default: placement units (`placement_unit == key`) whose `recommended_tier` differs from a
  known `current_tier`;
- `only`: exactly the given keys (`KEY` on every server, or `SERVER|KEY`); a partition key
  selects the single-partition move (SQL Server: switch out / rebuild / switch back; DB2: its
  table space when it holds only that partition).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from advisors.document import AdvisedObject
from migrations.advice_build import Builder, why
from migrations.advice_read import ENGINE, AdviceError, Dialect, Obj, TierSpot, read_advised
from migrations.plan import Move, MoveFiles, SetReadOnly, Target, Unsupported, Why

__all__ = [
    "AdviceError",
    "Dialect",
    "Selection",
    "Skipped",
    "TierSpot",
    "read_advised",
    "select_advised",
    "select_moves",
]


@dataclass(frozen=True, slots=True)
class Skipped:
    server: str
    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class Selection:
    moves: tuple[Move, ...]
    skipped: tuple[Skipped, ...]


def _matches(o: Obj, selector: str) -> bool:
    return selector in (o.key, o.uid)


def select_moves(
    doc: object,
    *,
    source: str,
    tiers: Sequence[TierSpot],
    dialect: Dialect,
    only: Sequence[str] = (),
    read_only: Sequence[str] = (),
) -> Selection:
    """Moves for `dialect` from an advice document (the parsed JSON of `tierwise advise`)."""
    if dialect not in ENGINE:
        raise AdviceError(f"dialect must be tsql or db2, got {dialect!r}")
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        raise AdviceError(
            f"{source}: not the JSON of `tierwise advise` (expected an object with an objects list)"
        )
    return _select(
        doc["objects"], source=source, tiers=tiers, dialect=dialect, only=only, read_only=read_only
    )


def select_advised(
    objects: Sequence[AdvisedObject],
    *,
    source: str,
    tiers: Sequence[TierSpot],
    dialect: Dialect,
    only: Sequence[str] = (),
    read_only: Sequence[str] = (),
) -> Selection:
    """Moves for `dialect` from typed advised objects (e.g. a stored recommendation's evidence,
    read with `AdvisedObject.model_validate`): the same selection and checks as select_moves,
    without wrapping them in a document first."""
    if dialect not in ENGINE:
        raise AdviceError(f"dialect must be tsql or db2, got {dialect!r}")
    return _select(objects, source=source, tiers=tiers, dialect=dialect, only=only, read_only=read_only)


def _select(
    raw_objects: Sequence[object],
    *,
    source: str,
    tiers: Sequence[TierSpot],
    dialect: Dialect,
    only: Sequence[str],
    read_only: Sequence[str],
) -> Selection:
    """The selection and run order, from the advice's objects (JSON objects or AdvisedObject)."""
    b = Builder(source, tiers, dialect)
    objects = [b.obj(i, raw) for i, raw in enumerate(raw_objects, start=1)]
    engine = ENGINE[dialect]
    moves: list[Move] = []
    skipped: list[Skipped] = []

    chosen: list[Obj] = []
    for sel in [*only, *read_only]:
        hits = [o for o in objects if _matches(o, sel)]
        if not hits:
            flag = "--only" if sel in only else "--read-only"
            raise AdviceError(f"{source}: {flag} {sel}: no object has that key (use KEY or SERVER|KEY)")
    if only:
        chosen = [o for o in objects if any(_matches(o, s) for s in only)]
    else:
        for o in objects:
            if o.placement_unit != o.key or o.recommended_tier == o.current_tier:
                continue
            if o.kind == "partition":
                skipped.append(
                    Skipped(
                        o.server,
                        o.key,
                        "a partition outside any filegroup/table space in the advice: select it with --only to move it alone",
                    )
                )
                continue
            if o.current_tier is None:
                skipped.append(
                    Skipped(
                        o.server,
                        o.key,
                        "current tier unknown (its location matches no tier of the policy); select it with --only to script it anyway",
                    )
                )
                continue
            chosen.append(o)

    units = {o.uid for o in chosen if o.placement_unit == o.key and o.kind != "partition"}
    seen_partitions: set[tuple[str, str, object, object]] = set()
    for o in chosen:
        if o.engine != engine:
            skipped.append(Skipped(o.server, o.key, f"a {o.engine} object: not part of a {dialect} plan"))
            continue
        if o.recommended_tier == o.current_tier:
            skipped.append(Skipped(o.server, o.key, f"already on its recommended tier {o.recommended_tier}"))
            continue
        if o.kind == "partition":
            if f"{o.server}|{o.placement_unit}" in units:
                skipped.append(
                    Skipped(o.server, o.key, f"moves with {o.placement_unit}, which is in this plan")
                )
                continue
            pkey = (o.server, o.database, o.raw.get("table_name"), o.raw.get("partition_number"))
            if pkey in seen_partitions:
                skipped.append(
                    Skipped(
                        o.server,
                        o.key,
                        "same table partition as another selected key (all indexes move together)",
                    )
                )
                continue
            seen_partitions.add(pkey)
        try:
            moves.append(b.move(o, objects))
        except Unsupported as exc:
            skipped.append(Skipped(o.server, o.key, f"unsupported here: review: {exc}"))

    for sel in read_only:
        for o in objects:
            if not _matches(o, sel):
                continue
            where = b.where(o.index, o.raw)
            if o.engine != "sqlserver" or o.kind != "filegroup" or engine != "sqlserver":
                raise AdviceError(f"{where}: --read-only takes a SQL Server filegroup key")
            try:
                fg = b.name(where, b.req(where, o.raw, "filegroup"), "filegroup")
                b.name(where, o.database, "database")
                b.name(where, o.server, "server")
            except Unsupported as exc:
                skipped.append(Skipped(o.server, o.key, f"unsupported here: review: {exc}"))
                continue
            moves.append(
                Move(
                    key=o.key,
                    target=Target("sqlserver", o.server, o.database),
                    kind=o.kind,
                    name=o.name,
                    from_tier=o.current_tier or o.recommended_tier,
                    to_tier=o.recommended_tier,
                    action=SetReadOnly(fg, True),
                    why=why(o.raw, b.integer(where, o.raw, "size_bytes", optional=True)),
                )
            )

    moves = list(one_offline_per_database(moves))
    order = {name: i for i, name in enumerate(b.order)}

    def run_order(m: Move) -> tuple[int, int, str, str, str]:
        # moves to slower tiers first (they free space on the faster ones); read-only marks last
        # a database's offline files merged into one move may go to several tiers ("flash+fc"):
        # ranked by the fastest of them, as its own moves were
        to = min(order[t] for t in m.to_tier.split("+"))
        if isinstance(m.action, SetReadOnly):
            phase = 2
        else:
            phase = 0 if min(order.get(t, -1) for t in (m.from_tier or "").split("+")) < to else 1
        return (phase, -to, m.target.server, m.target.database, m.key)

    return Selection(tuple(sorted(moves, key=run_order)), tuple(skipped))


OFFLINE_TOGETHER = (
    'one offline period for every offline file of the database (Microsoft Learn, "Move user databases": take '
    "the database offline once, move all its files, bring it online once)"
)


def one_offline_per_database(moves: Sequence[Move]) -> tuple[Move, ...]:
    """The offline file moves (SET OFFLINE, copy, MODIFY FILE, SET ONLINE) of one database as one
    move, so a plan takes a database offline once for all of them, as Microsoft's procedure moves
    every file of a database in one offline period ("Move user databases", planned relocation:
    SET OFFLINE, move the files, MODIFY FILE for each, SET ONLINE), instead of once per file or
    filegroup. The merged move keeps each file's own target (its tier's directory); its key,
    name and reasons join those of the moves it covers, in their order. Other moves pass as they
    are; the merged move takes the place of the first one it covers."""
    groups: dict[tuple[str, str], list[Move]] = {}
    for m in moves:
        if isinstance(m.action, MoveFiles) and m.action.mode == "offline":
            groups.setdefault((m.target.server, m.target.database), []).append(m)
    out: list[Move] = []
    for m in moves:
        if not (isinstance(m.action, MoveFiles) and m.action.mode == "offline"):
            out.append(m)
            continue
        group = groups[(m.target.server, m.target.database)]
        if len(group) == 1:
            out.append(m)
        elif m is group[0]:
            out.append(_merged(group))
    return tuple(out)


def _one(values: Sequence[str | None]) -> str | None:
    distinct = list(dict.fromkeys(v for v in values if v))
    return "+".join(distinct) if distinct else None


def _merged(group: Sequence[Move]) -> Move:
    files = tuple(f for m in group for f in m.action.files)  # type: ignore[union-attr]
    whys = [m.why for m in group]
    sizes = [w.size_bytes for w in whys]

    def total(values: Sequence[float | None]) -> float | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    first = group[0]
    return replace(
        first,
        key=" + ".join(m.key for m in group),
        kind="offline files",
        name=", ".join(m.name for m in group),
        from_tier=_one([m.from_tier for m in group]),
        to_tier=_one([m.to_tier for m in group]) or first.to_tier,
        action=MoveFiles("database", "offline", files),
        why=Why(
            profile=_one([w.profile for w in whys]),
            rule=_one([w.rule for w in whys]),
            reasons=tuple(r for m in group for r in (f"{m.key}: {x}" for x in m.why.reasons)),
            io_ms_per_s_now=total([w.io_ms_per_s_now for w in whys]),
            io_ms_per_s_after=total([w.io_ms_per_s_after for w in whys]),
            size_bytes=None if any(x is None for x in sizes) else sum(x for x in sizes if x is not None),
        ),
        notes=(*dict.fromkeys(n for m in group for n in m.notes), OFFLINE_TOGETHER),
    )
