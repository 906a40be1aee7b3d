"""Migrated template stores, built once per test session and cloned per test (issue #34 item 8).

Migrating a store takes longer than most store tests, and loading the demo fleet longer still; a
clone of a store migrated (or loaded) once is the same bytes at a fraction of the cost:
PostgreSQL copies a template database (CREATE DATABASE ... TEMPLATE), SQLite copies the file.
Templates are named after the session (a uuid), so sessions run by others on the same PostgreSQL
never meet ours, and are dropped when the session ends.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, create_engine, text

from app.store.db import Store

Backend = str  # "sqlite" | "postgresql"
Populate = Callable[[Store], None]


def sqlite_path(url: str) -> Path:
    """The file of a sqlite:/// URL."""
    return Path(url.removeprefix("sqlite:///"))


def copy_sqlite(source: Path, dest: Path) -> None:
    """Copy a SQLite store into `dest` through SQLite's backup API: safe even when `dest` is open
    elsewhere (an engine of the test), unlike a file copy under an open connection."""
    src = sqlite3.connect(source)
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _settle_sqlite(path: Path) -> None:
    """Fold the write-ahead log into the file, so the file alone is the whole store."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


@dataclass
class Template:
    """One template store: where it is and when it was built."""

    backend: Backend
    location: str  # the SQLite file, or the PostgreSQL database name
    built_at: datetime


@dataclass
class StoreTemplates:
    """The session's template stores, built on first use: the migrated schema per backend, and
    populated ones (the demo fleet) keyed by what they were built from."""

    postgres_admin_url: str
    workdir: Path
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    _migrated: dict[Backend, Template] = field(default_factory=dict)
    _populated: dict[Hashable, Template] = field(default_factory=dict)
    _admin: Engine | None = None
    _clones: set[str] = field(default_factory=set)
    _count: int = 0

    # --- PostgreSQL plumbing -------------------------------------------------------------
    def admin(self) -> Engine:
        if self._admin is None:
            self._admin = create_engine(self.postgres_admin_url, isolation_level="AUTOCOMMIT")
        return self._admin

    def postgres_url(self, name: str) -> str:
        return self.postgres_admin_url.rsplit("/", 1)[0] + f"/{name}"

    def _execute(self, sql: str) -> None:
        with self.admin().connect() as conn:
            conn.execute(text(sql))

    def create_postgres(self, name: str, template: str | None = None) -> str:
        """A new database (a clone of `template` when given); its URL. A template may have no
        connections: ours are all closed (Store.dispose) before the template is used."""
        clause = f' TEMPLATE "{template}"' if template else ""
        self._execute(f'CREATE DATABASE "{name}"{clause}')
        return self.postgres_url(name)

    def drop_postgres(self, name: str) -> None:
        self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _name(self, what: str) -> str:
        self._count += 1
        return f"tierwise_template_{self.tag}_{what}_{self._count}"

    # --- templates -------------------------------------------------------------------------
    def migrated(self, backend: Backend) -> Template:
        """The store migrated to the newest schema (Alembic, for real), once per backend."""
        if backend not in self._migrated:
            self._migrated[backend] = self._build(backend, "migrated", None, lambda store: None)
        return self._migrated[backend]

    def populated(
        self, backend: Backend, key: Hashable, populate: Populate, *, fresh: bool = True
    ) -> Template:
        """A migrated store filled by `populate` (called once with the store), cached under `key`.
        `fresh=False` (the template no longer fits, say the hour moved on) builds it again."""
        cached = self._populated.get((backend, key))
        if cached is not None and fresh:
            return cached
        if cached is not None:
            self._discard(cached)
        template = self._build(backend, "populated", self.migrated(backend), populate)
        self._populated[(backend, key)] = template
        return template

    def _build(self, backend: Backend, what: str, base: Template | None, populate: Populate) -> Template:
        built_at = datetime.now(UTC)
        if backend == "sqlite":
            path = self.workdir / f"{self._name(what)}.db"
            if base is not None:
                shutil.copyfile(base.location, path)
            store = Store(f"sqlite:///{path}")
            try:
                populate(store)
            finally:
                store.dispose()
            _settle_sqlite(path)
            return Template(backend, str(path), built_at)
        name = self._name(what)
        url = self.create_postgres(name, base.location if base else None)
        store = Store(url)
        try:
            populate(store)
        finally:
            store.dispose()
        return Template(backend, name, built_at)

    def _discard(self, template: Template) -> None:
        if template.backend == "sqlite":
            Path(template.location).unlink(missing_ok=True)
        else:
            self.drop_postgres(template.location)

    # --- clones ------------------------------------------------------------------------------
    def clone_new(self, template: Template, *, sqlite_file: Path | None = None) -> str:
        """A new store holding a copy of `template`; its URL (SQLite: at `sqlite_file`)."""
        if template.backend == "sqlite":
            assert sqlite_file is not None
            shutil.copyfile(template.location, sqlite_file)
            return f"sqlite:///{sqlite_file}"
        name = f"tierwise_test_{uuid.uuid4().hex[:12]}"
        self._clones.add(name)
        return self.create_postgres(name, template.location)

    def clone_into(self, template: Template, url: str) -> None:
        """Replace the contents of the existing store at `url` by a copy of `template` (same URL
        afterwards). PostgreSQL: the database is dropped (its connections closed) and created
        again from the template; the engines' pre-ping reconnects. SQLite: the backup API."""
        if template.backend == "sqlite":
            copy_sqlite(Path(template.location), sqlite_path(url))
            return
        name = url.rsplit("/", 1)[1]
        self.drop_postgres(name)
        self.create_postgres(name, template.location)

    def drop_clone(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self.drop_postgres(name)
        self._clones.discard(name)

    def close(self) -> None:
        """Drop every PostgreSQL database of this session (clones first, then templates)."""
        if self._admin is None:
            return
        for name in sorted(self._clones):
            self.drop_postgres(name)
        for template in [*self._populated.values(), *self._migrated.values()]:
            if template.backend == "postgresql":
                self.drop_postgres(template.location)
        self._admin.dispose()
        self._admin = None
