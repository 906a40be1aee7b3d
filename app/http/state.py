"""What a request handler can reach: settings, store, vault, scheduler, login limiter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import Request

from app.http.auth import LoginLimiter
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store

if TYPE_CHECKING:
    from app.jobs import Scheduler


@dataclass
class AppState:
    settings: Settings
    store: Store
    vault: Vault
    scheduler: Scheduler | None = None
    limiter: LoginLimiter = field(default_factory=LoginLimiter)


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.tierwise
    return state
