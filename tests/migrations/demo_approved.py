"""Every script the demo fleet's advice yields when each recommendation of one engine is approved:
the demo store built as tests/web/conftest.py builds it (SQLite), evaluated, approved through
app.review, the stored scripts read back. The session-rule tests of both dialects read them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import evaluate
from app.review import review
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Recommendation, ScriptRecord
from policies.loader import load_policy

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
DIALECT = {"sqlserver": "tsql", "db2": "db2"}


def demo_approved_scripts(tmp: Path, engine: str) -> tuple[str, dict[str, str]]:
    """The demo store's URL (kept for reading) and {file name: text} of every `engine` script."""
    url = f"sqlite:///{tmp / 'tierwise.db'}"
    settings = Settings(database_url=url, secret_key_file=tmp / "tierwise.key", demo_history_hours=8,
                        demo_step_s=900)  # fmt: skip
    store = Store(url)
    try:
        ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings, now=NOW)
        policy = load_policy()
        evaluate(store, policy, now=NOW)
        out: dict[str, str] = {}
        with store.session() as s:
            recs = list(s.scalars(select(Recommendation).where(Recommendation.engine == engine)))
            assert recs, f"the demo fleet's advice should have {engine} moves"
            for rec in recs:
                review(s, rec.id, action="approve", username="abe", comment=None, now=NOW, policy=policy)
            for rec in recs:
                assert rec.script_error is None, f"{rec.key}: {rec.script_error}"
            for row in s.scalars(select(ScriptRecord).where(ScriptRecord.dialect == DIALECT[engine])):
                out[row.filename] = row.text
        return url, out
    finally:
        store.dispose()
