"""Has the advice caught up with the last policy change? The Policy page's status line after a
save ("advice running for 1 target …", then "done: 3 new recommendations"), read from the
watermarks the save set (app/store/watermarks.request_advice) and the recommendations the advice
created since: no state of its own, so it is right after a restart and in every process."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import AdviceSnapshot, PolicyVersion, Recommendation, Target
from app.store.watermarks import import_pending


@dataclass(frozen=True)
class AdviceRun:
    changed_at: datetime | None  # the newest saved policy version (None: the shipped default)
    changed_by: str | None
    waiting: list[str]  # targets whose advice has not read their newest change yet (a mapping, an import)
    evaluated_at: datetime | None  # the newest advice run
    new_recommendations: int  # created since the policy change

    @property
    def running(self) -> bool:
        return bool(self.waiting)

    @property
    def done(self) -> bool:
        """The advice ran after the change and nothing waits."""
        return (
            not self.waiting
            and self.changed_at is not None
            and self.evaluated_at is not None
            and self.evaluated_at >= self.changed_at
        )


def advice_run(session: Session) -> AdviceRun:
    last = session.execute(
        select(PolicyVersion.created_at, PolicyVersion.created_by).order_by(PolicyVersion.id.desc()).limit(1)
    ).first()
    changed_at, changed_by = (last[0], last[1]) if last is not None else (None, None)
    pending = import_pending(session)
    waiting = list(session.scalars(select(Target.name).where(Target.id.in_(pending)).order_by(Target.name)))
    evaluated_at = session.scalar(select(func.max(AdviceSnapshot.evaluated_at)))
    new = 0
    if changed_at is not None:
        new = (
            session.scalar(
                select(func.count())
                .select_from(Recommendation)
                .where(Recommendation.created_at >= changed_at)
            )
            or 0
        )
    return AdviceRun(changed_at, changed_by, waiting, evaluated_at, new)
