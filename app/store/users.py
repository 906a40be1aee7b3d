"""Local accounts (argon2 password hashes, three roles) and their web sessions."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.store.models import ApiToken, User, WebSession

ROLES = ("viewer", "approver", "admin")
_hasher = PasswordHasher()


class UserError(Exception):
    pass


def role_at_least(role: str, needed: str) -> bool:
    return ROLES.index(role) >= ROLES.index(needed)


def add_user(session: Session, *, username: str, password: str, role: str, now: datetime) -> User:
    if role not in ROLES:
        raise UserError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if not username.strip() or len(username) > 100:
        raise UserError("user name must be 1 to 100 characters")
    if len(password) < 8:
        raise UserError("password must be at least 8 characters")
    if session.scalar(select(User.id).where(User.username == username)) is not None:
        raise UserError(f"a user named {username!r} already exists")
    user = User(
        username=username, password_hash=_hasher.hash(password), role=role, created_at=now, disabled=False
    )
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The user when the password matches; None otherwise (same answer for unknown users)."""
    user = session.scalar(select(User).where(User.username == username))
    if user is None or user.disabled:
        _hasher.hash(password)  # spend the same time as a real check
        return None
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return user


# ---- web sessions --------------------------------------------------------------------------
# The cookie carries a random session id; the store keeps its SHA-256 (a copy of the database holds no
# usable cookie). Deleting the row ends the login for every copy of the cookie.

LAST_SEEN_EVERY = timedelta(minutes=1)  # last_seen_at is written at most this often (not every request)


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def start_session(
    session: Session, *, user_id: int, role: str, now: datetime, lifetime: timedelta
) -> tuple[str, str]:
    """A new login: (session id for the cookie, its CSRF token). Expired rows are cleared here too."""
    session.execute(delete(WebSession).where(WebSession.expires_at <= now))
    sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    session.add(WebSession(id_sha256=_digest(sid), user_id=user_id, role_at_login=role, csrf=csrf,
                           created_at=now, last_seen_at=now, expires_at=now + lifetime))  # fmt: skip
    session.flush()
    return sid, csrf


class IdleEnded(Exception):
    """The login was unused for longer than the idle limit: session_user ended it in the store."""


def session_user(
    session: Session, sid: str, *, now: datetime, idle_limit: timedelta | None = None
) -> tuple[User, WebSession] | None:
    """The user and row behind a session id while it is live: not ended, not expired, user enabled.
    A login unused for `idle_limit` or longer is ended (every copy of its cookie) and IdleEnded
    raised, judged on the last use before this request. The caller takes the role from the User
    (read now), never from the row."""
    row = session.scalar(select(WebSession).where(WebSession.id_sha256 == _digest(sid)))
    if row is None or row.expires_at <= now:
        return None
    user = session.get(User, row.user_id)
    if user is None or user.disabled:
        return None
    if idle_limit is not None and now - row.last_seen_at >= idle_limit:
        session.delete(row)
        raise IdleEnded(sid)
    if now - row.last_seen_at >= LAST_SEEN_EVERY:
        row.last_seen_at = now
    return user, row


def end_session(session: Session, sid: str) -> None:
    """Logout: this login ends for every copy of its cookie."""
    session.execute(delete(WebSession).where(WebSession.id_sha256 == _digest(sid)))


def set_flash(session: Session, sid: str, message: str) -> bool:
    """Leave `message` for this login's next page (replacing one not shown yet); False when the
    session id names no login (nothing to show it to)."""
    done = session.execute(
        update(WebSession).where(WebSession.id_sha256 == _digest(sid)).values(flash=message)
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def take_flash(session: Session, sid: str) -> str | None:
    """This login's waiting message, once: it is cleared as it is read (compare-and-set, so two
    pages loading at once do not both show it)."""
    digest = _digest(sid)
    message = session.scalar(select(WebSession.flash).where(WebSession.id_sha256 == digest))
    if message is None:
        return None
    cleared = session.execute(
        update(WebSession)
        .where(WebSession.id_sha256 == digest, WebSession.flash == message)
        .values(flash=None)
    )
    return message if cleared.rowcount else None  # type: ignore[attr-defined]


def revoke_sessions(session: Session, user_id: int, *, keep_sid: str | None = None) -> int:
    """End the user's logins (all, or all but `keep_sid`); returns how many ended."""
    q = delete(WebSession).where(WebSession.user_id == user_id)
    if keep_sid is not None:
        q = q.where(WebSession.id_sha256 != _digest(keep_sid))
    return session.execute(q).rowcount or 0  # type: ignore[attr-defined]


def _user(session: Session, username: str) -> User:
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise UserError(f"no user named {username!r}")
    return user


def set_role(session: Session, *, username: str, role: str) -> User:
    """Change a user's role; their logins end (a session must never outlive the role it was given)."""
    if role not in ROLES:
        raise UserError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    user = _user(session, username)
    user.role = role
    revoke_sessions(session, user.id)
    return user


def set_password(session: Session, *, username: str, password: str, keep_sid: str | None = None) -> User:
    """Change a user's password; their other logins end (a stolen cookie dies with the old password),
    the one that made the change (`keep_sid`) stays."""
    if len(password) < 8:
        raise UserError("password must be at least 8 characters")
    user = _user(session, username)
    user.password_hash = _hasher.hash(password)
    revoke_sessions(session, user.id, keep_sid=keep_sid)
    return user


def delete_user(session: Session, *, username: str) -> None:
    """Delete a user, their API tokens and their logins (explicitly: not every store enforces cascades)."""
    user = _user(session, username)
    revoke_sessions(session, user.id)
    session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    session.delete(user)
    session.flush()
