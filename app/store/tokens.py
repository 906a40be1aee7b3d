"""API tokens: shown once at creation, stored only as a SHA-256 digest.

`last_used_at` is bookkeeping, not part of authentication: it is written at most once a minute per
token, in its own short transaction that gives up at once when another writer holds the store (a
large import on SQLite), so a read with a token never waits for, or fails on, the store's write lock.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.secrets import redact
from app.store.models import ApiToken, User

PREFIX = "tw_"
TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is kept to the minute
TOUCH_WAIT_MS = 100  # how long the bookkeeping write may wait for another writer

log = logging.getLogger("tierwise.tokens")
_tried: dict[tuple[str, int], datetime] = {}  # (store, token id) -> this process's last try
_tried_lock = threading.Lock()


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(session: Session, *, user: User, name: str, now: datetime) -> str:
    token = PREFIX + secrets.token_urlsafe(32)
    session.add(
        ApiToken(name=name, user_id=user.id, token_sha256=_digest(token), created_at=now, revoked=False)
    )
    session.flush()
    return token


class TokenError(LookupError):
    """No such token (or not yours): the caller says so instead of failing."""


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown about a token: never the token, nor its digest."""

    id: int
    name: str
    username: str
    created_at: datetime
    last_used_at: datetime | None
    revoked: bool


def list_tokens(session: Session, username: str | None = None, *, revoked: bool = True) -> list[TokenInfo]:
    """Every token (or one user's), oldest first; `revoked=False` leaves the revoked ones out."""
    query = select(ApiToken, User.username).join(User, User.id == ApiToken.user_id).order_by(ApiToken.id)
    if username is not None:
        query = query.where(User.username == username)
    if not revoked:
        query = query.where(ApiToken.revoked.is_(False))
    return [
        TokenInfo(t.id, t.name, name, t.created_at, t.last_used_at, t.revoked)
        for t, name in session.execute(query)
    ]


def revoke_token(session: Session, token_id: int, *, owner: str | None = None) -> TokenInfo:
    """Revoke a token at once (its next request is a 401). With `owner`, only that user's token:
    someone else's id is answered as unknown, so ids cannot be probed."""
    found = session.execute(
        select(ApiToken, User.username).join(User, User.id == ApiToken.user_id).where(ApiToken.id == token_id)
    ).first()
    if found is None or (owner is not None and found[1] != owner):
        raise TokenError(f"no API token #{token_id}" + (" of yours" if owner is not None else ""))
    token, username = found
    token.revoked = True
    session.flush()
    return TokenInfo(token.id, token.name, username, token.created_at, token.last_used_at, True)


def user_for_token(session: Session, token: str, *, now: datetime) -> User | None:
    """The token's user, or None for an unknown or revoked token or a disabled user. Reads only:
    `last_used_at` is written on the side (`touch`)."""
    row = session.scalar(select(ApiToken).where(ApiToken.token_sha256 == _digest(token)))
    if row is None or row.revoked:
        return None
    user = session.get(User, row.user_id)
    if user is None or user.disabled:
        return None
    bind = session.get_bind()
    if isinstance(bind, Engine) and _due((str(bind.url), row.id), row.last_used_at, now):
        touch(bind, row.id, now)
    return user


def _due(key: tuple[str, int], last_used_at: datetime | None, now: datetime) -> bool:
    """At most one try a minute per token in this process, and none while the stored value is fresh."""
    if last_used_at is not None and now - last_used_at < TOUCH_EVERY:
        return False
    with _tried_lock:
        tried = _tried.get(key)
        if tried is not None and now - tried < TOUCH_EVERY:
            return False
        _tried[key] = now
    return True


def touch(engine: Engine, token_id: int, now: datetime) -> bool:
    """Best effort: set the token's last_used_at in a separate short transaction. A store that is
    locked, busy or unreachable is logged and skipped (the next try is a minute later)."""
    try:
        with engine.connect() as conn:
            sqlite = conn.dialect.name == "sqlite"
            before = 0
            if sqlite:  # the pooled connection's own wait (busy_timeout) is restored afterwards
                before = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0)
                conn.exec_driver_sql(f"PRAGMA busy_timeout={TOUCH_WAIT_MS}")
                conn.commit()
            try:
                with conn.begin():
                    if not sqlite:
                        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{TOUCH_WAIT_MS}ms'")
                    conn.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=now))
            finally:
                if sqlite:
                    conn.exec_driver_sql(f"PRAGMA busy_timeout={before}")
                    conn.commit()
    except DBAPIError as exc:
        log.warning("could not record the use of API token #%d (skipped): %s", token_id,
                    redact(f"{type(exc).__name__}: {exc.orig}")[:300])  # fmt: skip
        return False
    return True
