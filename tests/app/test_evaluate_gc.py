"""The cyclic garbage collector is off while a fleet's windows are read and advised (millions of
small objects, none cyclic, that each full pass walks), and always on again afterwards: after a
run, after a failing run, and never switched on by a run when the caller had it off."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import advise_pool_in_store, evaluate, without_cyclic_gc
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Target
from policies.loader import load_policy
from policies.model import DEFAULT_POOL

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
RUNS = ("evaluate", "advise_pool_in_store")


@pytest.fixture
def inside() -> Iterator[list[str]]:
    """The run (evaluate or advise_pool_in_store) on the stack of every collection that starts
    within one, with the collector's thresholds at their lowest so that any allocation with the
    collector on starts one."""
    seen: list[str] = []

    def hook(phase: str, info: dict[str, Any]) -> None:
        if phase != "start":
            return
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_name in RUNS and f.f_code.co_filename.endswith("evaluate.py"):
                seen.append(f.f_code.co_name)
                return
            f = f.f_back  # type: ignore[assignment]

    was, old = gc.isenabled(), gc.get_threshold()
    gc.callbacks.append(hook)
    try:
        yield seen
    finally:
        gc.callbacks.remove(hook)
        gc.set_threshold(*old)
        gc.enable() if was else gc.disable()


def _fleet(store: Store, settings: Settings) -> list[int]:
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings.model_copy(update={"demo_history_hours": 6}),
                      now=NOW)  # fmt: skip
    with store.session() as s:
        return list(s.scalars(select(Target.id)))


def test_no_collection_runs_within_an_evaluation_and_the_collector_is_on_after(
    store: Store, settings: Settings, inside: list[str]
) -> None:
    targets = _fleet(store, settings)
    policy = load_policy(None)
    gc.enable()
    gc.set_threshold(10, 1, 1)
    assert evaluate(store, policy, now=NOW).objects > 0
    assert gc.isenabled()
    assert advise_pool_in_store(store, policy, DEFAULT_POOL, targets, now=NOW).objects > 0
    assert gc.isenabled()
    assert inside == []
    # the control: the same run without its pause (the undecorated function) is seen collecting
    evaluate.__wrapped__(store, policy, now=NOW)  # type: ignore[attr-defined]
    assert "evaluate" in inside


def test_the_collector_is_on_again_after_a_failure_and_left_off_when_it_was_off() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), without_cyclic_gc():
        assert not gc.isenabled()
        raise RuntimeError("evaluation failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with without_cyclic_gc():
            with without_cyclic_gc():
                pass
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller had it off: a run does not switch it on
    finally:
        gc.enable()
    with without_cyclic_gc():
        with without_cyclic_gc():
            pass
        assert not gc.isenabled()  # the inner use leaves it to the outermost
    assert gc.isenabled()
