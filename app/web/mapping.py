"""Unknown locations as a task: the directories and DB2 storage groups that match no tier of their
storage pool, per target (Targets and Policy pages), and one form that maps each to a tier of its
pool. The mapping saves a new policy version through the policy editor's own save path, so it is
validated, versioned and audited alike; the next advice run places the objects there."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from fastapi import APIRouter, Depends, Form
from fastapi.responses import Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.http.auth import CurrentUser, form_user
from app.http.state import AppState, app_state
from app.store.models import AdviceSnapshot, Target
from app.store.policies import current_policy_text, save_policy
from app.store.recommendations import audit
from app.web.pages import _back
from policies.loader import PolicyError, parse_policy
from policies.model import DEFAULT_POOL, Policy

router = APIRouter()

# which list of a tier's `locations` an unmatched location goes to
_FIELD = {
    ("sqlserver", "path"): "sqlserver_path_prefixes",
    ("db2", "path"): "db2_path_prefixes",
    ("db2", "storage_group"): "db2_storage_groups",
    ("sqlserver", "storage_group"): "db2_storage_groups",
}


@dataclass(frozen=True)
class UnmappedLocation:
    """One row of the task list: a location of one target that no tier of its pool explains."""

    target_id: int
    target: str
    evaluated_at: datetime
    server: str
    engine: str
    pool: str
    location: str
    location_kind: str  # path | storage_group
    objects: int
    size_gb: float
    reads_per_s: float
    writes_per_s: float
    reason: str
    examples: tuple[str, ...]
    pools: tuple[str, ...] = ()  # two pools both take it: a conflict, fixed by narrowing a pool

    @property
    def io_per_s(self) -> float:
        return self.reads_per_s + self.writes_per_s

    @property
    def mappable(self) -> bool:
        """Whether a tier's location fixes it (a unit split over two pools, or a location two pools
        take, needs the pools fixed)."""
        return not self.pools and "matches no tier" in self.reason

    @property
    def pool_text(self) -> str:
        """The pool column: its pool, or both pools of a conflict."""
        return " and ".join(self.pools) if self.pools else self.pool


def unknown_locations(session: Session) -> list[UnmappedLocation]:
    """Every target's unmatched locations as its last advice run found them, biggest first."""
    q = select(Target.id, Target.name, AdviceSnapshot.evaluated_at, AdviceSnapshot.unknown_locations).join(
        AdviceSnapshot, AdviceSnapshot.target_id == Target.id
    )
    out: list[UnmappedLocation] = []
    for tid, name, at, items in session.execute(q.order_by(Target.name)):
        for u in items or []:
            keys = ("server", "engine", "pool", "location", "location_kind", "objects", "size_gb", "reads_per_s",
                    "writes_per_s", "reason")  # fmt: skip
            row: dict[str, Any] = {k: u[k] for k in keys}
            out.append(UnmappedLocation(tid, name, at, examples=tuple(u.get("examples") or ()),
                                        pools=tuple(u.get("pools") or ()), **row))  # fmt: skip
    return out


def by_target(rows: list[UnmappedLocation]) -> dict[int, list[UnmappedLocation]]:
    out: dict[int, list[UnmappedLocation]] = {}
    for r in rows:
        out.setdefault(r.target_id, []).append(r)
    return out


def tier_choices(policy: Policy) -> dict[str, list[str]]:
    """Per pool, the tiers a location may be mapped to (fastest first)."""
    return {pool: [t.name for t in policy.pool_tiers(pool)] for pool in policy.pool_names()}


@dataclass(frozen=True)
class Mapping:
    pool: str
    tier: str
    engine: str
    location_kind: str
    location: str


def apply_mapping(yaml_text: str, mappings: list[Mapping], *, username: str, now: datetime) -> str:
    """The policy text with each location added to its tier's `locations` (the list its kind
    belongs in: sqlserver_path_prefixes, db2_path_prefixes or db2_storage_groups). The YAML is
    written anew, so its comments are not kept (the earlier version keeps them in the history).
    Raises PolicyError naming the pool or tier that does not exist."""
    data = yaml.safe_load(yaml_text)
    if not isinstance(data, dict):
        raise PolicyError("the current policy is not a mapping")
    for m in mappings:
        tiers = data.get("tiers") if m.pool == DEFAULT_POOL else _pool_tiers(data, m.pool)
        tier = next((t for t in tiers or [] if isinstance(t, dict) and t.get("name") == m.tier), None)
        if tier is None:
            raise PolicyError(f"pool {m.pool!r} has no tier {m.tier!r}")
        field = _FIELD.get((m.engine, m.location_kind))
        if field is None:
            raise PolicyError(f"{m.location}: unknown kind of location {m.location_kind!r} for {m.engine}")
        locations = tier.get("locations") or {}
        values: list[Any] = list(locations.get(field) or [])
        if m.location not in values:
            values.append(m.location)
        tier["locations"] = {**locations, field: values}
    head = f"# saved by {username} from the location mapping form, {now:%Y-%m-%d %H:%M} UTC\n"
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


def _pool_tiers(data: dict[str, Any], pool: str) -> list[Any]:
    for p in data.get("pools") or []:
        if isinstance(p, dict) and p.get("name") == pool:
            return list(p.get("tiers") or [])
    raise PolicyError(f"the policy has no pool {pool!r}")


@router.post("/policies/mapping")
def map_locations_form(
    location: list[str] = Form([]),
    engine: list[str] = Form([]),
    kind: list[str] = Form([]),
    pool: list[str] = Form([]),
    tier: list[str] = Form([]),
    comment: str = Form(""),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    """Map each listed location to the tier chosen for it ("" leaves it): one new policy version."""
    if not len(location) == len(engine) == len(kind) == len(pool) == len(tier):
        return _back("/policies", "not saved: the mapping form was incomplete; reload the page")
    chosen = [Mapping(p, t, e, k, loc) for loc, e, k, p, t in zip(location, engine, kind, pool, tier, strict=True)
              if t]  # fmt: skip
    if not chosen:
        return _back("/policies", "nothing mapped: choose a tier for at least one location")
    now = datetime.now(UTC)
    what = ", ".join(f"{m.location} -> {m.tier}" + ("" if m.pool == DEFAULT_POOL else f" ({m.pool})")
                     for m in chosen)  # fmt: skip
    try:
        with state.store.session() as s:
            text, _ = current_policy_text(s, state.settings.policy_file)
            new_text = apply_mapping(text, chosen, username=user.username, now=now)
            parse_policy(new_text, source="the mapped policy")  # the same check the save makes, before it
            policy = save_policy(s, yaml_text=new_text, username=user.username,
                                 comment=comment or f"mapped {what}", now=now)  # fmt: skip
            audit(s, at=now, username=user.username, action="edit_policy", subject_type="policy",
                  subject_id=policy.name, summary=f"mapped locations to tiers: {what}"[:500],
                  comment=comment or None)  # fmt: skip
    except PolicyError as exc:
        return _back("/policies", f"not saved: {exc}")
    return _back("/policies", f"policy saved: {what}; the next advice run places the objects there")
