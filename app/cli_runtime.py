"""What the `tierwise` command modules share: the error exit and the store and vault they run on."""

from __future__ import annotations

from typing import NoReturn

import typer

from app.settings import Settings, get_settings


def fail(message: str, code: int = 2) -> NoReturn:
    """A message on stderr and a non-zero exit: a DBA sees what to fix, scripts see the failure."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def runtime(settings: Settings | None = None):  # type: ignore[no-untyped-def]
    """(settings, store, vault) for one command, from the environment unless settings are given."""
    from app.secrets import Vault, load_key
    from app.store.db import Store

    settings = settings or get_settings()
    return settings, Store(settings.database_url), Vault(load_key(settings))
