"""FastAPI application factory: store, scheduler and (demo) fleet wired into one process."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from fastapi import FastAPI
from sqlalchemy import func, select

from app.demo import ensure_demo_fleet
from app.jobs import Runtime, Scheduler
from app.secrets import Vault, load_key
from app.settings import Settings, get_settings
from app.store.db import Store
from app.store.models import DbObject, IoInterval, Sample, Target

log = logging.getLogger("tierwise")


@dataclass
class AppState:
    settings: Settings
    store: Store
    vault: Vault
    scheduler: Scheduler | None = None
    notes: list[str] = field(default_factory=list)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(settings.database_url)
        vault = Vault(load_key(settings))
        state = AppState(settings=settings, store=store, vault=vault)
        if settings.demo:
            result = ensure_demo_fleet(store, vault, settings)
            log.info(
                "demo fleet ready: %d samples, %d intervals backfilled", result.samples, result.intervals
            )
        if settings.scheduler_enabled:
            scheduler = Scheduler(Runtime(store=store, vault=vault, settings=settings))
            if scheduler.start():
                state.scheduler = scheduler
        app.state.tierwise = state
        try:
            yield
        finally:
            if state.scheduler is not None:
                state.scheduler.shutdown()
            store.dispose()

    app = FastAPI(title="tierwise", version="0.1.0", lifespan=lifespan)

    @app.get("/api/health")
    def health() -> dict[str, object]:
        """Liveness and a count of what the store holds (no auth: nothing sensitive)."""
        state: AppState = app.state.tierwise
        with state.store.session() as s:
            counts = {
                "targets": s.scalar(select(func.count()).select_from(Target)),
                "objects": s.scalar(select(func.count()).select_from(DbObject)),
                "samples": s.scalar(select(func.count()).select_from(Sample)),
                "intervals": s.scalar(select(func.count()).select_from(IoInterval)),
            }
        return {
            "status": "ok",
            "store": state.store.engine.dialect.name,
            "scheduler": "running" if state.scheduler is not None else "off",
            "demo": state.settings.demo,
            **counts,
        }

    return app
