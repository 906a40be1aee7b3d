"""Local accounts: argon2 password hashes, three roles."""

from __future__ import annotations

from datetime import datetime

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import User

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
