"""What the `tierwise` command modules share: the error exit, the store and vault they run on, and
the import files and policy the file commands (advise, tiers) read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
import typer

from app.settings import Settings, get_settings

if TYPE_CHECKING:
    from advisors.features import ObjectWindow
    from connectors.records import Snapshot
    from policies.model import Policy


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


def read_files(
    files: list[Path], policy_file: Path | None
) -> tuple[Policy, list[Snapshot], list[ObjectWindow]]:
    """The policy, the import files' snapshots and their objects' windows; a bad policy or file
    ends the command with its error (the file, line or field it names)."""
    from app.advice import AdviceInputError, windows_from_snapshots
    from connectors.files import read_import_file
    from connectors.records import ImportFileError
    from policies.loader import PolicyError, load_policy

    try:
        policy = load_policy(policy_file)
        snapshots: list[Snapshot] = []
        for path in files:
            snapshots.extend(read_import_file(path))
        return policy, snapshots, windows_from_snapshots(snapshots, policy)
    except (PolicyError, ImportFileError, AdviceInputError, OSError) as exc:
        fail(str(exc))
