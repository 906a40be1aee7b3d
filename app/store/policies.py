"""The policy in force: the newest stored version, else the configured file, else the default."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import PolicyVersion
from policies.loader import DEFAULT_POLICY, parse_policy
from policies.model import Policy


def current_policy_text(session: Session, policy_file: Path | None) -> tuple[str, str]:
    """(YAML text, where it came from)."""
    row = session.scalar(select(PolicyVersion).order_by(PolicyVersion.id.desc()).limit(1))
    if row is not None:
        return row.yaml_text, f"version {row.id} by {row.created_by}"
    path = policy_file or DEFAULT_POLICY
    return Path(path).read_text(encoding="utf-8"), str(path)


def current_policy(session: Session, policy_file: Path | None) -> Policy:
    text, source = current_policy_text(session, policy_file)
    return parse_policy(text, source=source)


def save_policy(
    session: Session, *, yaml_text: str, username: str, comment: str | None, now: datetime
) -> Policy:
    """Validate, then store as the newest version (raises PolicyError naming the field)."""
    policy = parse_policy(yaml_text, source="the edited policy")
    session.add(PolicyVersion(yaml_text=yaml_text, created_at=now, created_by=username, comment=comment))
    return policy


def history(session: Session, *, limit: int = 20) -> list[PolicyVersion]:
    return list(session.scalars(select(PolicyVersion).order_by(PolicyVersion.id.desc()).limit(limit)))
