"""What the `tierwise` command modules share: the error exit and the store and vault they run on."""

from __future__ import annotations

from typing import NoReturn

import click
import typer

from app.settings import Settings, get_settings


def fail(message: str, code: int = 2) -> NoReturn:
    """A message on stderr and a non-zero exit: a DBA sees what to fix, scripts see the failure."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def store_line(settings: Settings) -> str:
    """`store: URL`, its password masked: which store a command reads and writes."""
    from app.secrets import redact_url

    return f"store: {redact_url(settings.database_url)}"


def announce_store(settings: Settings) -> None:
    """Say on stderr, once per command, which store it uses (stdout stays the command's output,
    JSON included): two shells with different settings must not look at different data unseen."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        if ctx.meta.get("tierwise.store_announced"):
            return
        ctx.meta["tierwise.store_announced"] = True
    typer.echo(store_line(settings), err=True)


def runtime(settings: Settings | None = None):  # type: ignore[no-untyped-def]
    """(settings, store, vault) for one command, from the environment unless settings are given."""
    from app.secrets import Vault, load_key
    from app.store.db import Store

    settings = settings or get_settings()
    announce_store(settings)
    return settings, Store(settings.database_url), Vault(load_key(settings))
