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

from app.http.auth import CurrentUser, form_user
from app.http.state import AppState, app_state
from app.jobs import advise_soon
from app.store.policies import current_policy_text, save_policy
from app.store.recommendations import audit
from app.store.unmapped import unknown_locations
from app.store.watermarks import request_advice
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


def covers(prefix: str, location: str, engine: str, kind: str) -> bool:
    """Whether mapping `prefix` places the objects at `location`: a storage group by its name, a
    directory by a prefix of it, compared as the policy compares them (SQL Server paths without
    regard to case or slash direction, DB2 paths as written)."""
    if kind == "storage_group":
        return prefix.upper() == location.upper()
    if engine == "sqlserver":
        return location.replace("/", "\\").lower().startswith(prefix.replace("/", "\\").lower())
    return location.startswith(prefix)


def _to_mapping(message: str) -> Response:
    """Back to the Policy page's mapping section, saying what happened."""
    r = _back("/policies", message)
    r.headers["location"] += "#unknown-locations"
    return r


@router.post("/policies/mapping")
def map_locations_form(
    location: list[str] = Form([]),
    listed: list[str] = Form([]),
    engine: list[str] = Form([]),
    kind: list[str] = Form([]),
    pool: list[str] = Form([]),
    tier: list[str] = Form([]),
    comment: str = Form(""),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    """Map each listed location (or a shorter prefix of it typed over it: a whole drive) to the tier
    chosen for it ("" leaves it): one new policy version, then the targets with objects there are
    advised again at once (app/jobs.advise_soon), as an import is."""
    if not len(location) == len(listed) == len(engine) == len(kind) == len(pool) == len(tier):
        return _to_mapping("not saved: the mapping form was incomplete; reload the page")
    rows = list(zip(location, listed, engine, kind, pool, tier, strict=True))
    chosen = [Mapping(p, t, e, k, loc.strip()) for loc, _, e, k, p, t in rows if t]
    if not chosen:
        return _to_mapping("nothing mapped: choose a tier for at least one location")
    for loc, was, e, k, _, t in rows:
        if t and not (loc.strip() and covers(loc.strip(), was, e, k)):
            what = "its name" if k == "storage_group" else f"{was} or a shorter prefix of it (a drive: D:\\)"
            return _to_mapping(f"not saved: {loc.strip() or '(empty)'} does not cover {was}: give {what}")
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
            affected = sorted({u.target_id for u in unknown_locations(s) for m in chosen
                               if u.engine == m.engine and covers(m.location, u.location, u.engine, u.location_kind)})  # fmt: skip
            request_advice(s, affected)
    except PolicyError as exc:
        return _to_mapping(f"not saved: {exc}")
    advise_soon()
    return _to_mapping(f"policy saved: {what}; advising the {len(affected)} target{'' if len(affected) == 1 else 's'} "
                       "with objects there now")  # fmt: skip
