"""The one time anchor of every figure: a target's windows end at its newest sample.

The advice, the pages, their JSON twins, the charts, the heat map and the report all read a
target's I/O over whole hours that end with the hour of its newest sample, never counted back from
the wall clock. Files collected three weeks before they were imported read as they did the day the
collection ended; a polled target's newest sample is minutes old, so its window ends now. The
clock only caps the end (a collector whose clock runs ahead) and says how old the data is.

Targets of different ages have different windows: `Anchors.groups` puts the targets whose windows
start at the same hour together, so a fleet of live targets is read in one statement and each old
collection in one more.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import DbObject, HourlyRollup, IoInterval, Target

# Data whose newest sample is older than this is "old": every figure of it says how old (the
# DataEnd note of the advice, the banner of every page). A polled target is minutes old.
OLD_AFTER = timedelta(hours=24)


def hour_of(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def window_start(end: datetime, hours: int) -> datetime:
    """The start of the `hours` whole hours ending with the hour that holds `end`."""
    return hour_of(end) - timedelta(hours=hours - 1)


def age(newest: datetime, now: datetime) -> str:
    """How old data is, in the words every note uses: "21 days old", "5 hours old"."""
    seconds = (now - newest).total_seconds()
    days = seconds / 86400
    return f"{days:.0f} days old" if days >= 2 else f"{seconds / 3600:.0f} hours old"


def window_end(newest: datetime | None, now: datetime) -> datetime:
    """Where a target's windows end: its newest sample, never after `now`; `now` without data."""
    return now if newest is None else min(newest, now)


def aware(raw: object) -> datetime:
    """A stored instant as an aware UTC datetime (SQLite may hand back text or naive values)."""
    t = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
    assert isinstance(t, datetime)
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def newest_samples(
    session: Session, targets: Iterable[int] | None = None, *, enabled_only: bool = True
) -> dict[int, datetime]:
    """Each enabled target's (every target's, for the pages: `enabled_only=False`) newest interval end, from the raw intervals and the hourly roll-ups
    (raw intervals may be past retention), one index lookup per object. A roll-up counts as its
    hour's label: the intervals in it ended within that hour, so a window anchored there holds the
    same whole hours as one anchored at the true end. Only `targets` when given."""
    out: dict[int, datetime] = {}
    wanted = None if targets is None else sorted(set(targets))
    for src, at in ((IoInterval, IoInterval.end_time), (HourlyRollup, HourlyRollup.hour)):
        latest = (
            select(func.max(at)).where(src.object_id == DbObject.id).correlate(DbObject).scalar_subquery()
        )
        q = select(DbObject.target_id, func.max(latest)).group_by(DbObject.target_id)
        if enabled_only:
            q = q.join(Target, Target.id == DbObject.target_id).where(Target.enabled.is_(True))
        if wanted is not None:
            q = q.where(DbObject.target_id.in_(wanted))
        for tid, raw in session.execute(q):
            if raw is not None:
                t = aware(raw)
                out[tid] = max(out.get(tid, t), t)
    return out


@dataclass(frozen=True)
class Window:
    """Whole hours [since, until] that the targets in `target_ids` are read over together."""

    since: datetime
    until: datetime
    target_ids: tuple[int, ...]


@dataclass(frozen=True)
class Anchors:
    """Each target's newest sample and the clock that judges how old it is."""

    now: datetime
    newest: Mapping[int, datetime]

    def end(self, target_id: int) -> datetime:
        return window_end(self.newest.get(target_id), self.now)

    def old(self) -> dict[int, datetime]:
        """Targets whose newest sample is more than OLD_AFTER before now: target id -> newest."""
        return {tid: t for tid, t in sorted(self.newest.items()) if t < self.now - OLD_AFTER}

    def groups(self, hours: int, target_ids: Iterable[int] | None = None) -> list[Window]:
        """The `hours`-long windows of `target_ids` (every target with data when None), targets
        whose windows start at the same hour together, oldest first. A group is read up to its
        newest target's end: the others have no data after their own."""
        ids = sorted(self.newest if target_ids is None else set(target_ids))
        by_start: dict[datetime, list[int]] = defaultdict(list)
        for tid in ids:
            by_start[window_start(self.end(tid), hours)].append(tid)
        return [
            Window(since, max(self.end(t) for t in tids), tuple(tids))
            for since, tids in sorted(by_start.items())
        ]


def anchors(
    session: Session, now: datetime, targets: Iterable[int] | None = None, *, enabled_only: bool = True
) -> Anchors:
    """The anchors of every enabled target with data (or of `targets`); the pages show disabled
    targets' data too (`enabled_only=False`)."""
    return Anchors(now, newest_samples(session, targets, enabled_only=enabled_only))


def target_end(session: Session, target_id: int, now: datetime) -> datetime:
    """One target's window end (its newest sample, or now without data), enabled or not."""
    return anchors(session, now, [target_id], enabled_only=False).end(target_id)
