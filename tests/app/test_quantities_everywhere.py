"""One figure, one text: the command line's table, the recommendation page and the report email
read the same quantity the same way (advisors.quantities), for imported files advised in a store
(SQLite)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from advisors import quantities as q
from app.cli import app
from app.mail.content import Scope
from app.mail.service import compose
from app.main import create_app
from app.settings import get_settings
from app.store.db import Store
from app.store.models import Recommendation
from app.store.users import add_user
from tests.app.test_import import FILE_STATS
from tests.fixture_policy import mapped_policy
from tests.web.conftest import PASSWORD, login

runner = CliRunner()


def _table_rows(stdout: str) -> dict[tuple[str, str, str], list[str]]:
    """`advise --format table` rows by (server, database, name), as the table cuts them, with their
    size, reads/s, read size and latency columns (cut by the header's fixed widths)."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("server "))
    rows = {}
    for line in lines[header + 2 :]:
        if not line.strip():
            break
        rows[(line[:12].strip(), line[13:23].strip(), line[35:59].strip())] = [
            line[60:69].strip(),
            line[100:109].strip(),
            line[110:119].strip(),
            line[120:].strip(),
        ]
    return rows


@pytest.fixture
def policy_file(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = mapped_policy(cli_env / "mapped.yaml")
    monkeypatch.setenv("TIERWISE_POLICY_FILE", str(path))
    get_settings.cache_clear()
    return path


def test_the_table_the_page_and_the_report_read_a_figure_alike(cli_env: Path, policy_file: Path) -> None:
    table = runner.invoke(
        app, ["advise", "--input", str(FILE_STATS), "--format", "table", "--policy", str(policy_file)]
    )
    assert table.exit_code == 0, table.output
    rows = _table_rows(table.stdout)
    assert runner.invoke(app, ["import", str(FILE_STATS)]).exit_code == 0
    evaluated = runner.invoke(app, ["evaluate", "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.stdout)["moves"] > 0

    settings = get_settings().model_copy(update={"scheduler_enabled": False})
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=datetime.now(UTC))
        recs = list(s.scalars(select(Recommendation).where(Recommendation.status == "open")))
    assert recs
    msg, _ = compose(store, settings, Scope.parse("fleet"), ["x@example.test"], now=datetime.now(UTC))
    report = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    store.dispose()
    with TestClient(create_app(settings)) as client:
        login(client, "vera")
        for rec in recs:
            page = client.get(f"/recommendations/{rec.id}").text
            size = q.size(rec.size_bytes)
            saving = q.io_wait((rec.io_ms_per_s_now or 0) - (rec.io_ms_per_s_after or 0))
            # the page
            assert f"<dt>Size</dt><dd>{size}</dd>" in page
            assert f"<strong>saves {saving} of I/O wait</strong>" in page
            # the report's line for it
            line = next(x for x in report.splitlines() if x.startswith(f"  #{rec.id} "))
            assert f"({rec.status}, {size}, saves {saving})" in line, line
            # the command line's row for it
            row = rows[(rec.server[:12], rec.database[:10], rec.name[:24])]
            assert row[0] == size, (rec.name, row)
            # the figures it was judged on: reads/s, read size and latency, as the page's Measured table reads them
            reads, per_read, read_latency = row[1:]
            assert f'<th>Reads</th><td class="num">{reads} reads/s</td>' in page
            assert f'<th>Average read size</th><td class="num">{per_read}</td>' in page
            assert f'<th>Average read latency</th><td class="num">{read_latency}</td>' in page
