"""What the object pages (app/web/objects.py) and their JSON twins (app/api/objects.py) both read:
the policy in force, the filters, the caches, and the store's read-models bound to the app's store.

It sits below both in the layers, so neither imports the other. Domain errors (app.errors.NotFound)
pass through: app/main.py answers them as a 404 page or JSON.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from app.http.state import AppState
from app.store.anchor import window_start
from app.store.heat_map import HeatMap, IoTotals, heat_map, io_totals
from app.store.object_detail import ObjectDetail, object_detail
from app.store.object_evidence import Evidence, object_evidence
from app.store.object_flash import DatabaseFlash, flash_curves
from app.store.object_list import ObjectFilter
from app.store.policies import current_policy_text
from app.store.unmapped import UnmappedLocation, unmatched_at
from policies.loader import parse_policy
from policies.model import Policy

DEFAULT_SORT = "heat"
HEATMAP_DAYS = 7
MAX_ID = 2**31 - 1  # object ids are INTEGER columns

_policies: dict[str, Policy] = {}


def policy_in_force(state: AppState) -> Policy:
    """The policy in force (the newest stored version, as the advice uses), parsed once per text."""
    with state.store.session() as s:
        text, source = current_policy_text(s, state.settings.policy_file)
    policy = _policies.get(text)
    if policy is None:
        _policies.clear()
        policy = _policies[text] = parse_policy(text, source=source)
    return policy


def object_filter(
    kind: str | None,
    tier: str | None,
    name: str | None,
    sort: str,
    direction: str | None,
    offset: int,
    limit: int,
    *,
    clamp: bool,
) -> ObjectFilter:
    """The objects table's filter from query parameters (blank ones are no filter)."""
    return ObjectFilter(
        kind=kind or None,
        tier=tier or None,
        name=(name or "").strip() or None,
        sort=sort,
        descending=direction != "asc",
        offset=offset,
        limit=limit,
        clamp=clamp,
    )


def detail(state: AppState, object_id: int) -> ObjectDetail:
    """One object's page data (NotFound: no such object)."""
    with state.store.session() as s:
        return object_detail(
            session=s, object_id=object_id, policy=policy_in_force(state), now=datetime.now(UTC)
        )


def evidence(state: AppState, object_id: int) -> Evidence | None:
    """The object's evidence from its target's last advice run (None: not covered yet)."""
    with state.store.session() as s:
        return object_evidence(s, state.store.url, object_id)


def unmatched(state: AppState, d: ObjectDetail) -> UnmappedLocation | None:
    """The unmatched location the object sits in, as its target's last advice run listed it."""
    with state.store.session() as s:
        return unmatched_at(s, target_id=d.target_id, engine=d.engine, physical_name=d.physical_name,
                            storage_group=d.storage_group)  # fmt: skip


def curves(state: AppState, target: str | None) -> list[DatabaseFlash]:
    """The stored flash curves of one target (NotFound: no such target) or of the whole fleet."""
    with state.store.session() as s:
        return flash_curves(s, target)


class TotalsCache:
    """Recent io_totals per (store, target, window): the heat map's ranking and skew read every
    object's week, which takes seconds on a big SQLite fleet; they may lag `max_age_s` behind,
    the hour cells and the savings never do."""

    def __init__(self, max_age_s: float = 300.0, size: int = 64) -> None:
        self.max_age_s, self.size = max_age_s, size
        self._items: dict[tuple[str, str, datetime], tuple[float, IoTotals]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, datetime]) -> IoTotals | None:
        with self._lock:
            hit = self._items.get(key)
        return hit[1] if hit is not None and time.monotonic() - hit[0] <= self.max_age_s else None

    def put(self, key: tuple[str, str, datetime], value: IoTotals) -> None:
        with self._lock:
            if len(self._items) >= self.size:
                self._items.pop(min(self._items, key=lambda k: self._items[k][0]))
            self._items[key] = (time.monotonic(), value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


heatmap_totals = TotalsCache()


def cached_heat_map(state: AppState, target: str | None) -> HeatMap:
    """The heat map of one target or the fleet, its week's totals from the cache when fresh
    (NotFound: no such target)."""
    now = datetime.now(UTC)
    key = (state.store.url, target or "", window_start(now, 24 * HEATMAP_DAYS))
    with state.store.session() as s:
        totals = heatmap_totals.get(key)
        if totals is None:
            totals = io_totals(session=s, target=target or None, now=now, days=HEATMAP_DAYS)
            heatmap_totals.put(key, totals)
        return heat_map(
            session=s,
            target=target or None,
            policy=policy_in_force(state),
            now=now,
            days=HEATMAP_DAYS,
            totals=totals,
        )
