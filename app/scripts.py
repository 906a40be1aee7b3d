"""Scripts for approved recommendations: generated once at approval and stored, so what ops
download is exactly what was approved (app/review.py records the approval and the execution)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.mail.attachment import Attachment
from app.script_spots import file_name, object_pool, pool_spots, script_options
from app.store.models import Recommendation, ScriptRecord
from app.store.recommendations import Status
from migrations import (
    AdviceError,
    Dialect,
    Move,
    MoveFiles,
    PlanError,
    read_advised,
    render_check,
    render_pair,
    select_advised,
)
from migrations.from_advice import one_offline_per_database
from policies.model import Policy

DIALECT: dict[str, Dialect] = {"sqlserver": "tsql", "db2": "db2"}


def planned_move(rec: Recommendation, policy: Policy) -> Move:
    """The move a recommendation's scripts carry out, built by the script generators from its stored
    evidence and the tiers of its own pool (a move on array B goes to array B's paths). Raises
    PlanError (AdviceError is one) with the reason when no safe script can be written."""
    dialect = DIALECT[rec.engine]
    evidence = dict(rec.evidence or {})
    uid = f"{rec.server}|{rec.key}"
    tiers = pool_spots(policy, object_pool(evidence))
    source = f"recommendation #{rec.id}"
    selection = select_advised([read_advised(evidence, source)], source=source, tiers=tiers,
                               dialect=dialect, only=[uid])  # fmt: skip
    if not selection.moves:
        raise PlanError("; ".join(s.reason for s in selection.skipped) or "nothing to move")
    return selection.moves[0]


def ensure_scripts(
    session: Session, rec: Recommendation, policy: Policy, *, now: datetime
) -> list[ScriptRecord]:
    """The stored forward and rollback scripts of a recommendation (and for DB2 its check-only
    script, direction "check": the same checks, none of the steps), generating them if missing.
    When no safe script can be written the reason is kept on the recommendation instead."""
    existing = list(session.scalars(select(ScriptRecord).where(ScriptRecord.recommendation_id == rec.id)))
    group = offline_group(session, rec, policy)
    if len(group) > 1 or (group and existing and not _carries(existing, group)):
        return _offline_scripts(session, rec, group, policy, now=now)
    if existing:
        return existing
    try:
        move = planned_move(rec, policy)
        return _write(session, [rec], move, policy, now=now)
    except (AdviceError, PlanError) as exc:
        rec.script_error = str(exc)
        return []


def _write(
    session: Session, recs: list[Recommendation], move: Move, policy: Policy, *, now: datetime
) -> list[ScriptRecord]:
    """Render `move`'s scripts once and store them for each of `recs` (more than one: an offline
    group). Raises PlanError when no safe script can be written."""
    dialect = DIALECT[recs[0].engine]
    options = script_options(policy, move)
    forward, rollback = render_pair(move, dialect, options, now)
    check = render_check(move, dialect, options, now)
    out = []
    for rec in recs:
        for script in (forward, rollback, *([check] if check is not None else [])):
            data = script.text.encode("utf-8")
            row = ScriptRecord(
                recommendation_id=rec.id,
                direction=script.direction,
                dialect=dialect,
                filename=file_name(1, move, script.direction, dialect),
                text=script.text,
                sha256=hashlib.sha256(data).hexdigest(),
                manual_step=script.manual_step,
                restart_required=script.restart_required,
                created_at=now,
            )
            session.add(row)
            out.append(row)
        rec.script_error = None
    session.flush()
    return out


# -- one offline script per database (issue #30, N8) ---------------------------------------------


def _offline(move: Move) -> bool:
    return isinstance(move.action, MoveFiles) and move.action.mode == "offline"


def offline_together(rec: Recommendation, policy: Policy) -> str:
    """The key the change-window plan keeps rec's move together by: its database, when the move takes
    the database offline (every such move of the database runs in one offline period); else ""."""
    try:
        move = planned_move(rec, policy)
    except PlanError:
        return ""
    return f"{rec.target_id}/{rec.engine}/{rec.database}" if _offline(move) else ""


def offline_group(session: Session, rec: Recommendation, policy: Policy) -> list[tuple[Recommendation, Move]]:
    """rec and the other approved recommendations whose moves take its database offline (by id),
    each with its move: one offline script covers them all, as Microsoft's
    "Move user databases" takes a database offline once for all its files
    (migrations.from_advice.one_offline_per_database). Empty when rec's move is not an offline
    move or cannot be planned."""
    try:
        move = planned_move(rec, policy)
    except PlanError:
        return []
    if not _offline(move):
        return []
    group = [(rec, move)]
    siblings = session.scalars(
        select(Recommendation)
        .where(Recommendation.target_id == rec.target_id, Recommendation.database == rec.database,
               Recommendation.engine == rec.engine, Recommendation.status == Status.APPROVED,
               Recommendation.script_error.is_(None), Recommendation.id != rec.id)
        .order_by(Recommendation.id)
    )  # fmt: skip
    for other in siblings:
        try:
            other_move = planned_move(other, policy)
        except PlanError:
            continue
        if _offline(other_move):
            group.append((other, other_move))
    # one order whichever member asks, so every member's scripts carry the same plan checksum
    return sorted(group, key=lambda pair: pair[0].id)


def _group_move(group: list[tuple[Recommendation, Move]]) -> Move:
    (move,) = one_offline_per_database([m for _, m in group])
    return move


def _carries(rows: list[ScriptRecord], group: list[tuple[Recommendation, Move]]) -> bool:
    """Whether stored scripts are those of the group's move (its plan checksum in their headers)."""
    mark = f"Plan:       sha256 {_group_move(group).checksum()}"
    return bool(rows) and all(mark in row.text for row in rows)


def _offline_scripts(
    session: Session, rec: Recommendation, group: list[tuple[Recommendation, Move]], policy: Policy,
    *, now: datetime,
) -> list[ScriptRecord]:  # fmt: skip
    """rec's scripts, which are the whole offline group's: kept while every member's stored scripts
    carry the group's plan checksum; otherwise (a member approved, executed or reopened since)
    written again for every member, so no two scripts take the database offline separately."""
    stored = {
        r.id: list(session.scalars(select(ScriptRecord).where(ScriptRecord.recommendation_id == r.id)))
        for r, _ in group
    }
    if all(_carries(rows, group) for rows in stored.values()):
        return stored[rec.id]
    for rows in stored.values():
        for row in rows:
            session.delete(row)
    session.flush()
    try:
        written = _write(session, [r for r, _ in group], _group_move(group), policy, now=now)
    except PlanError as exc:
        rec.script_error = str(exc)
        return []
    return [row for row in written if row.recommendation_id == rec.id]


def approved_script_attachments(session: Session, recs: Sequence[Recommendation], policy: Policy,
                                *, now: datetime) -> list[Attachment]:  # fmt: skip
    out: list[Attachment] = []
    seen: set[tuple[str, str]] = set()  # an offline group's recommendations share one script: attach it once
    for rec in recs:
        for row in ensure_scripts(session, rec, policy, now=now):
            if (row.filename, row.sha256) not in seen:
                seen.add((row.filename, row.sha256))
                out.append(Attachment(row.filename, row.text.encode("utf-8")))
    return out
