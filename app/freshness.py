"""How fresh and how long a target's data is, said once for the pages, the API, the CLI and the report.

Two warnings a DBA must see next to every figure:
- the data ends long ago (files collected weeks before the import): the advice was judged on the
  window ending at the newest sample; app.evaluate.DataEnd writes that note into the target's advice
  snapshot and `data_end_note` finds it again;
- there is less than a day of history: `hours_of_history` and `short_history_note` ("1 hour of
  data: figures are a sample").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.anchor import newest_samples
from app.store.db import Store
from app.store.models import AdviceSnapshot, DbObject, HourlyRollup, IoInterval, Target

# Below this much history the figures are a sample of the workload, not its picture.
SHORT_HISTORY_HOURS = 24.0
DATA_END_PREFIX = "data up to "  # how app.evaluate.DataEnd.note begins


def hours_of_history(first: datetime | None, last: datetime | None) -> float | None:
    """Hours between the start of the oldest interval and the end of the newest: what the figures
    cover. None when there is no data."""
    if first is None or last is None:
        return None
    return max((last - first).total_seconds() / 3600, 0.0)


def _duration(hours: float) -> str:
    if hours < 1:
        minutes = max(round(hours * 60), 1)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    whole = round(hours)
    return f"{whole} hour{'s' if whole != 1 else ''}"


def short_history_note(hours: float | None) -> str | None:
    """ "1 hour of data: figures are a sample" when there is less than a day of history, else None."""
    if hours is None or hours >= SHORT_HISTORY_HOURS:
        return None
    return f"{_duration(hours)} of data: figures are a sample"


def data_end_note(notes: Iterable[str] | None) -> str | None:
    """The data-end note among an advice snapshot's notes, if the target was judged on an older window."""
    return next((n for n in notes or () if n.startswith(DATA_END_PREFIX)), None)


def _as_utc(raw: object) -> datetime | None:
    if raw is None:
        return None
    t = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
    assert isinstance(t, datetime)
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def _per_object(agg: Any, model: Any, column: Any) -> Any:
    """agg(column) of each object's own rows: one index lookup per object, not a scan."""
    return select(agg(column)).where(model.object_id == DbObject.id).correlate(DbObject).scalar_subquery()


def history_span(session: Session, target_id: int) -> tuple[datetime | None, datetime | None]:
    """The start of the target's oldest interval and the end of its newest, raw or rolled up (raw
    intervals may be past retention; a roll-up hour holds the intervals that ended in it)."""
    first_end, last_end, first_hour, last_hour = (
        _as_utc(v)
        for v in session.execute(
            select(
                func.min(_per_object(func.min, IoInterval, IoInterval.end_time)),
                func.max(_per_object(func.max, IoInterval, IoInterval.end_time)),
                func.min(_per_object(func.min, HourlyRollup, HourlyRollup.hour)),
                func.max(_per_object(func.max, HourlyRollup, HourlyRollup.hour)),
            ).where(DbObject.target_id == target_id)
        ).one()
    )
    first = first_hour
    if first_end is not None:
        # the oldest raw interval began `seconds` before it ended
        seconds = session.scalar(
            select(func.max(IoInterval.seconds))
            .join(DbObject, DbObject.id == IoInterval.object_id)
            .where(DbObject.target_id == target_id, IoInterval.end_time == first_end)
        )
        raw_start = first_end - timedelta(seconds=seconds or 0)
        # a roll-up hour is labelled by the hour its intervals ended in: it goes further back than
        # the raw intervals only when those older intervals are past retention
        if first is None or first > raw_start - timedelta(hours=1):
            first = raw_start
    lasts = [t for t in (last_end, last_hour) if t is not None]  # a roll-up as its hour: app/store/anchor
    return first, max(lasts, default=None)


@dataclass(frozen=True)
class Freshness:
    """What a target's figures rest on: the newest sample, the data-end note of the current advice
    (None when it was judged on the last days) and, where asked, the hours of history."""

    data_end: datetime | None
    data_note: str | None
    hours: float | None = None

    @property
    def history_note(self) -> str | None:
        return short_history_note(self.hours)


def snapshot_notes(session: Session, target_ids: Iterable[int] | None = None) -> dict[int, str]:
    """Target id -> the data-end note of its current advice, for targets judged on an older window."""
    query = select(AdviceSnapshot.target_id, AdviceSnapshot.notes)
    if target_ids is not None:
        query = query.where(AdviceSnapshot.target_id.in_(list(target_ids)))
    out: dict[int, str] = {}
    for tid, notes in session.execute(query):
        note = data_end_note(notes)
        if note is not None:
            out[tid] = note
    return out


def freshness(session: Session, target_ids: Iterable[int] | None = None) -> dict[int, Freshness]:
    """Freshness per target (every target with data when target_ids is None); no history hours
    (see target_freshness for one target)."""
    newest = newest_samples(session)
    notes = snapshot_notes(session, target_ids)
    ids = set(newest) | set(notes) if target_ids is None else set(target_ids)
    return {tid: Freshness(newest.get(tid), notes.get(tid)) for tid in ids}


def target_freshness(session: Session, target_id: int) -> Freshness:
    """One target's freshness with its hours of history (the target page), from its own objects."""
    first, last = history_span(session, target_id)
    return Freshness(last, snapshot_notes(session, [target_id]).get(target_id), hours_of_history(first, last))


def stale_notes(store: Store) -> list[tuple[str, str]]:
    """(target names, note) for the enabled targets whose current advice was judged on an older
    window, targets with the same note together ("a, b and c: data up to …"): the banner every page
    shows. Reads only the snapshots' notes."""
    with store.session() as s:
        rows = s.execute(
            select(Target.name, AdviceSnapshot.notes)
            .join(AdviceSnapshot, AdviceSnapshot.target_id == Target.id)
            .where(Target.enabled.is_(True))
            .order_by(Target.name)
        ).all()
    by_note: dict[str, list[str]] = {}
    for name, notes in rows:
        note = data_end_note(notes)
        if note is not None:
            by_note.setdefault(note, []).append(name)
    return [(", ".join(names), note) for note, names in by_note.items()]
