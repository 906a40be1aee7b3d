"""What a report is about: the fleet, one target, or one database of a target, checked against
the targets the store knows (a scope naming nothing would render "0 open" and look fine)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import DbObject, Target
from app.store.targets import find_target

SCOPE_FORMS = "'fleet', a target's name or id, 'target:NAME', or 'database:TARGET/DB'"
MAX_LISTED = 8  # known databases named in an error


class ScopeError(ValueError):
    """A scope that names no target or database the store knows; `field` for the form and API."""

    field = "scope"


@dataclass(frozen=True)
class Scope:
    """fleet | target:NAME | database:TARGET/DB, with TARGET a known target's name."""

    kind: str
    target: str | None = None
    database: str | None = None

    @classmethod
    def parse(cls, text: str) -> Scope:
        """The form alone, without the store (use `resolve_scope` to check the names)."""
        text = (text or "fleet").strip()
        if text == "fleet":
            return cls("fleet")
        kind, _, value = text.partition(":")
        if kind == "target" and value:
            return cls("target", value)
        if kind == "database" and "/" in value:
            target, _, db = value.rpartition("/")
            return cls("database", target, db)
        raise ScopeError(f"scope must be {SCOPE_FORMS}, not {text[:200]!r}")

    def text(self) -> str:
        """The stored form: what `resolve_scope` reads back to the same scope."""
        if self.kind == "fleet":
            return "fleet"
        if self.kind == "target":
            return f"target:{self.target}"
        return f"database:{self.target}/{self.database}"

    def label(self) -> str:
        if self.kind == "fleet":
            return "the fleet"
        if self.kind == "target":
            return f"target {self.target}"
        return f"database {self.database} on {self.target}"


def _known(session: Session) -> list[tuple[int, str]]:
    return [(tid, name) for tid, name in session.execute(select(Target.id, Target.name))]


def _database_scope(session: Session, value: str, text: str) -> Scope:
    """`TARGET/DB` where TARGET is a target's id or name: the longest known name (or id) that the
    value starts with, followed by "/", so `import:db2:host/instance/SAMPLE` splits after the
    instance, whatever holds a "/"."""
    known = _known(session)
    matches = [
        (tid, name, value[len(ref) + 1 :])
        for tid, name in known
        for ref in (name, str(tid))
        if value.startswith(ref + "/") and len(value) > len(ref) + 1
    ]
    if not matches:
        raise ScopeError(
            f"scope {text[:200]!r} names no known target: write database:TARGET/DB with TARGET a "
            "target's name or id (`tierwise targets list`)"
        )
    tid, name, db = min(matches, key=lambda m: len(m[2]))  # the longest target reference
    dbs = sorted(set(session.scalars(select(DbObject.database).where(DbObject.target_id == tid))))
    if db not in dbs:
        listed = ", ".join(dbs[:MAX_LISTED]) + (", …" if len(dbs) > MAX_LISTED else "")
        raise ScopeError(
            f"target {name!r} has no database {db[:200]!r}"
            + (f" (it has {listed})" if dbs else " (no data yet)")
        )
    return Scope("database", name, db)


def resolve_scope(session: Session, text: str) -> Scope:
    """The scope `text` means, its target checked against the store: 'fleet'; a target's name or
    id alone, or after 'target:'; 'database:TARGET/DB'. Raises ScopeError naming what is unknown."""
    text = (text or "fleet").strip()
    if text == "fleet":
        return Scope("fleet")
    bare = find_target(session, text)
    if bare is not None:
        return Scope("target", bare.name)
    kind, _, value = text.partition(":")
    if kind == "target" and value:
        t = find_target(session, value.strip())
        if t is None:
            raise ScopeError(f"no target named {value.strip()[:200]!r} (`tierwise targets list` shows them)")
        return Scope("target", t.name)
    if kind == "database" and value:
        return _database_scope(session, value.strip(), text)
    raise ScopeError(f"no target named {text[:200]!r}, and it is not a scope: a scope is {SCOPE_FORMS}")
