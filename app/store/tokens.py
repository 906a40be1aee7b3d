"""API tokens: shown once at creation, stored only as a SHA-256 digest."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import ApiToken, User

PREFIX = "tw_"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(session: Session, *, user: User, name: str, now: datetime) -> str:
    token = PREFIX + secrets.token_urlsafe(32)
    session.add(
        ApiToken(name=name, user_id=user.id, token_sha256=_digest(token), created_at=now, revoked=False)
    )
    session.flush()
    return token


def user_for_token(session: Session, token: str, *, now: datetime) -> User | None:
    row = session.scalar(select(ApiToken).where(ApiToken.token_sha256 == _digest(token)))
    if row is None or row.revoked:
        return None
    user = session.get(User, row.user_id)
    if user is None or user.disabled:
        return None
    row.last_used_at = now
    return user
