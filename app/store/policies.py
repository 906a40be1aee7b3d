"""The policy in force: the newest stored version, else the configured file, else the default."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import DbObject, PolicyVersion
from policies.loader import DEFAULT_POLICY, PolicyError, parse_policy
from policies.model import Policy, Pool


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
    """Validate, then store as the newest version (raises PolicyError naming the field, or the
    stored objects that two of its pools would both take)."""
    policy = parse_policy(yaml_text, source="the edited policy")
    conflicts = pool_conflicts(session, policy)
    if conflicts:
        raise PolicyError(conflicts_text(conflicts))
    session.add(PolicyVersion(yaml_text=yaml_text, created_at=now, created_by=username, comment=comment))
    return policy


@dataclass(frozen=True, slots=True)
class StoredConflict:
    """A stored object that two (or more) pools of a policy would both take."""

    engine: str
    server: str
    database: str
    key: str
    location: str
    pools: tuple[str, ...]


def pool_conflicts(session: Session, policy: Policy, *, limit: int = 20) -> list[StoredConflict]:
    """The stored objects (up to `limit`) that two pools of `policy` both take. Only the objects
    of servers whose name two pools' `servers` match are read (in one pass, servers in chunks):
    on other servers no object can be taken twice."""
    if len(policy.pools) < 2:
        return []
    named: dict[tuple[str, str], list[Pool]] = {}
    for engine, server in session.execute(select(DbObject.engine, DbObject.server).distinct()):
        pools = [
            p for p in policy.pools if any(fnmatchcase(server.lower(), pat.lower()) for pat in p.servers)
        ]
        if len(pools) > 1:
            named[(engine, server)] = pools
    servers = sorted({server for _, server in named})
    out: list[StoredConflict] = []
    cols = (DbObject.engine, DbObject.server, DbObject.database, DbObject.key, DbObject.physical_name,
            DbObject.storage_group)  # fmt: skip
    for i in range(0, len(servers), CHUNK):
        q = select(*cols).where(DbObject.server.in_(servers[i : i + CHUNK]))
        for engine, server, database, key, path, group in session.execute(
            q.order_by(DbObject.server, DbObject.database, DbObject.key)
        ):
            takers = [p.name for p in named.get((engine, server), [])
                      if p.takes(server=server, physical_name=path, storage_group=group)]  # fmt: skip
            if len(takers) > 1:
                out.append(
                    StoredConflict(
                        engine, server, database, key, path or group or "(no location)", tuple(takers)
                    )
                )
                if len(out) >= limit:
                    return out
    return out


CHUNK = 500  # servers per IN list


def conflicts_text(conflicts: list[StoredConflict]) -> str:
    """The refusal: which pools, and the objects they would both take (a few named)."""
    first = conflicts[0]
    named = "; ".join(f"{c.engine} {c.server} {c.database} {c.key} ({c.location})" for c in conflicts[:5])
    more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
    return (
        f"pools {first.pools[0]!r} and {first.pools[1]!r} would both take stored objects: {named}{more}. "
        "An object may be in one pool only: narrow their servers, sqlserver_path_prefixes or db2_storage_groups"
    )


def history(session: Session, *, limit: int = 20) -> list[PolicyVersion]:
    return list(session.scalars(select(PolicyVersion).order_by(PolicyVersion.id.desc()).limit(limit)))
