"""The policy in force: the newest stored version, else the configured file, else the default."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import DbObject, PolicyVersion
from policies.loader import DEFAULT_POLICY, PolicyError, parse_policy
from policies.model import Policy, ServerPools


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
    on other servers no object can be taken twice. The pools are matched to each server once
    (ServerPools), and a first pass (_any_taken_twice) matches each distinct location once, so a
    policy that is saved, its servers all split by path, costs little; only a refused one reads
    the objects in order, to name the first `limit`."""
    if len(policy.pools) < 2:
        return []
    named: dict[tuple[str, str], ServerPools] = {}
    for engine, server in session.execute(select(DbObject.engine, DbObject.server).distinct()):
        matcher = ServerPools(policy.pools, server)
        if len(matcher.names) > 1:
            named[(engine, server)] = matcher
    servers = sorted({server for _, server in named})
    if not _any_taken_twice(session, named, servers):
        return []
    out: list[StoredConflict] = []
    cols = (DbObject.engine, DbObject.server, DbObject.database, DbObject.key, DbObject.physical_name,
            DbObject.storage_group)  # fmt: skip
    for i in range(0, len(servers), CHUNK):
        q = select(*cols).where(DbObject.server.in_(servers[i : i + CHUNK]))
        for engine, server, database, key, path, group in session.execute(
            q.order_by(DbObject.server, DbObject.database, DbObject.key)
        ):
            pools = named.get((engine, server))
            if pools is None:  # the same server name under the other engine
                continue
            takers = pools.taking(path, group)
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


def _any_taken_twice(session: Session, named: dict[tuple[str, str], ServerPools], servers: list[str]) -> bool:
    """Whether any object of these servers is taken by two pools: the unordered first pass of
    pool_conflicts, which a policy that is saved (no conflict) is the only pass of.

    Matched once per distinct (server, storage group, path head), not per object: a pool takes an
    object by its storage group and by whether its path starts with a prefix, and no prefix is
    longer than `width` characters, so the first `width` characters of the path decide. That holds
    for an ASCII head (lower-casing and the slash rule map it character for character); a server
    with a non-ASCII head is checked object by object instead."""
    width = max([1, *(p.prefix_width for p in named.values())])
    head = func.substr(DbObject.physical_name, 1, width)
    recheck: set[str] = set()
    for i in range(0, len(servers), CHUNK):
        rows = session.execute(
            select(DbObject.engine, DbObject.server, head, DbObject.storage_group)
            .where(DbObject.server.in_(servers[i : i + CHUNK]))
            .distinct()
        )
        for engine, server, path, group in rows:
            pools = named.get((engine, server))
            if pools is None:
                continue
            if path is not None and not path.isascii():
                recheck.add(server)
            elif len(pools.taking(path, group)) > 1:
                return True
    cols = (DbObject.engine, DbObject.server, DbObject.physical_name, DbObject.storage_group)
    ordered = sorted(recheck)
    for i in range(0, len(ordered), CHUNK):
        for engine, server, path, group in session.execute(
            select(*cols).where(DbObject.server.in_(ordered[i : i + CHUNK]))
        ):
            pools = named.get((engine, server))
            if pools is not None and len(pools.taking(path, group)) > 1:
                return True
    return False


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
