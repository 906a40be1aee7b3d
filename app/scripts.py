"""Scripts for approved recommendations: generated once at approval and stored, so what ops
download is exactly what was approved (app/review.py records the approval and the execution)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.mail.render import Attachment
from app.script_spots import file_name, object_pool, pool_spots, script_options
from app.store.models import Recommendation, ScriptRecord
from migrations import (
    AdviceError,
    Dialect,
    Move,
    PlanError,
    read_advised,
    render_check,
    render_pair,
    select_advised,
)
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
    if existing:
        return existing
    dialect = DIALECT[rec.engine]
    try:
        move = planned_move(rec, policy)
        options = script_options(policy, move)
        forward, rollback = render_pair(move, dialect, options, now)
        check = render_check(move, dialect, options, now)
    except (AdviceError, PlanError) as exc:
        rec.script_error = str(exc)
        return []
    out = []
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


def approved_script_attachments(session: Session, recs: Sequence[Recommendation], policy: Policy,
                                *, now: datetime) -> list[Attachment]:  # fmt: skip
    out: list[Attachment] = []
    for rec in recs:
        for row in ensure_scripts(session, rec, policy, now=now):
            out.append(Attachment(row.filename, row.text.encode("utf-8")))
    return out
