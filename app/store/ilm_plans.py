"""The stored ILM plans (app/ilm.py writes them at each advice run): the page, the API and the
report emails show the newest."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import IlmPlanRecord


def latest_plan(session: Session) -> IlmPlanRecord | None:
    """The newest stored plan, or None before the first advice run that planned partitions."""
    return session.scalar(select(IlmPlanRecord).order_by(IlmPlanRecord.id.desc()).limit(1))
