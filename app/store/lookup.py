"""What a page names, found or refused: the read models raise app.errors.NotFound (a 404)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.errors import NotFound
from app.store.models import Target
from app.store.targets import find_target


def target_named(session: Session, ref: str) -> Target:
    """A target by id or name (app.store.targets.find_target), or NotFound."""
    t = find_target(session, ref)
    if t is None:
        raise NotFound(f"no target named {ref[:200]!r}")
    return t
