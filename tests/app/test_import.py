"""`tierwise import`: files into the store whole or not at all, idempotent, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app
from app.importer import import_file
from app.settings import get_settings
from app.store.db import Store
from app.store.models import DbObject, ImportedFile, IoInterval, Sample, Target
from connectors.records import ImportFileError
from tests.conftest import FIXTURES

FILE_STATS = FIXTURES / "import" / "sqlserver_file_stats.csv"


def _count(store: Store, model: type) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


def test_import_stores_samples_intervals_and_restart(store: Store) -> None:
    out = import_file(store, FILE_STATS)
    r = out.result
    # SQLPROD01: 3 samples x 6 files, restarted before the third; SQLPROD02\OLTP: 2 samples x 3 files
    assert (r.snapshots, r.samples) == (5, 24)
    assert r.intervals == 6 + 3  # the restart leaves a gap for SQLPROD01
    assert r.new_series == 6 + 6 + 3
    with store.session() as s:
        names = set(s.scalars(select(Target.name)))
        assert names == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
        assert all((iv.reads or 0) >= 0 for iv in s.scalars(select(IoInterval)))
        assert s.scalar(select(func.count()).select_from(DbObject)) == 9
    again = import_file(store, FILE_STATS)
    assert again.already_imported and _count(store, Sample) == 24


def test_import_of_the_same_rows_under_another_name_adds_nothing(store: Store, tmp_path: Path) -> None:
    import_file(store, FILE_STATS)
    copy = tmp_path / "again.csv"
    copy.write_bytes(FILE_STATS.read_bytes() + b"\n")  # different bytes, same samples
    r = import_file(store, copy).result
    assert (r.samples, r.intervals, r.duplicates) == (0, 0, 24)


def test_bad_file_stores_nothing(store: Store, tmp_path: Path) -> None:
    lines = FILE_STATS.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([*lines[:-1], lines[-1].replace(",0,0,", ",-5,0,")]) + "\n")
    with pytest.raises(ImportFileError) as err:
        import_file(store, bad)
    assert "bad.csv" in str(err.value) and f"line {len(lines)}" in str(err.value)
    assert _count(store, Sample) == 0 and _count(store, Target) == 0 and _count(store, ImportedFile) == 0


def test_cli_import_reports_each_file_and_fails_on_a_bad_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", f"sqlite:///{tmp_path / 'tw.db'}")
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    good = tmp_path / "file_stats.csv"
    shutil.copy(FILE_STATS, good)
    bad = tmp_path / "truncated.csv"
    bad.write_text(FILE_STATS.read_text()[:-40])
    try:
        r = CliRunner().invoke(app, ["import", str(good), str(bad), str(tmp_path / "missing.csv")])
    finally:
        get_settings.cache_clear()
    assert r.exit_code == 1
    assert "file_stats.csv: 5 snapshots, 24 samples, 9 intervals" in r.output
    assert "truncated.csv" in r.output and "nothing from this file was stored" in r.output
    assert "missing.csv: no such file" in r.output
    check = Store(f"sqlite:///{tmp_path / 'tw.db'}")
    assert _count(check, Sample) == 24
    check.dispose()


def test_files_of_a_polled_server_join_its_target(store: Store) -> None:
    """A server that is polled and also imported is one target with one series per object, not
    two targets holding the same files (the advice would count their I/O and GB twice)."""
    from datetime import UTC, datetime, timedelta

    from cryptography.fernet import Fernet

    from app.collect import poll_target, simulator_connection
    from app.secrets import Vault
    from app.settings import Settings
    from app.store.targets import add_target

    vault = Vault(Fernet.generate_key())
    origin = datetime(2024, 1, 1, tzinfo=UTC)
    with store.session() as s:
        live = add_target(s, name="prod-a", engine="sqlserver", source="live",
                          connection_encrypted=vault.encrypt(simulator_connection("SQLPROD01", origin)),
                          password_env=None, poll_interval_s=300, now=origin).id  # fmt: skip
    settings = Settings(database_url=str(store.engine.url.render_as_string(hide_password=False)))
    assert poll_target(store, vault, settings, live, now=origin + timedelta(hours=1)).ok
    import_file(store, FILE_STATS)
    with store.session() as s:
        names = set(s.scalars(select(Target.name)))
        servers = {srv: tid for srv, tid in s.execute(select(DbObject.server, DbObject.target_id).distinct())}
    assert names == {"prod-a", "import:sqlserver:SQLPROD02\\OLTP"}
    assert servers["SQLPROD01"] == live
