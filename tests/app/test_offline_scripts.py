"""One offline script per database for approved recommendations (issue #30, N8): the approved
offline moves of one database share one pair of stored scripts, which takes the database offline
once; the pair is written again when that set changes (Microsoft Learn, "Move user databases":
one offline period for all the files of a database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from app.scripts import ensure_scripts
from app.store.db import Store
from app.store.models import Recommendation, ScriptRecord, Target
from policies.loader import parse_policy
from tests.migrations.golden_cases import FIXTURES, POLICY

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def _evidence(key: str) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "advice_sqlserver.json").read_text(encoding="utf-8"))
    return next(o for o in doc["objects"] if o["server"] == "SQLPROD01" and o["key"] == key)


def _rec(s: Any, target: Target, key: str, kind: str, name: str, status: str = "approved") -> Recommendation:
    ev = _evidence(key)
    rec = Recommendation(target_id=target.id, key=key, engine="sqlserver", server="SQLPROD01", database="Sales",
                         kind=kind, name=name, from_tier=ev["current_tier"], to_tier=ev["recommended_tier"],
                         profile="p", rule="R", size_bytes=ev.get("size_bytes"), evidence=ev, status=status,
                         created_at=NOW, updated_at=NOW)  # fmt: skip
    s.add(rec)
    s.flush()
    return rec


def _offline_periods(text: str) -> int:
    return text.count("\n    ALTER DATABASE [Sales] SET OFFLINE WITH ROLLBACK IMMEDIATE;")


def test_approved_offline_moves_of_one_database_share_one_script(store: Store) -> None:
    policy = parse_policy(POLICY.read_text(encoding="utf-8"), source="test")
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        primary = _rec(s, t, "Sales/filegroup/PRIMARY", "filegroup", "PRIMARY")
        first = ensure_scripts(s, primary, policy, now=NOW)
        fwd = next(r for r in first if r.direction == "forward")
        assert _offline_periods(fwd.text) == 1 and "Sales_log" not in fwd.text.split(":on error exit")[1]

        # the log of the same database approved too: both now hold the same script, one offline period
        log = _rec(s, t, "Sales/file/2", "log_file", "Sales_log")
        rows = ensure_scripts(s, log, policy, now=NOW)
        again = ensure_scripts(s, primary, policy, now=NOW)
        assert {r.direction for r in rows} == {"forward", "rollback"}
        by_dir = {r.direction: r for r in rows}
        assert {r.direction: r.text for r in again} == {d: r.text for d, r in by_dir.items()}
        text = by_dir["forward"].text
        assert _offline_periods(text) == 1
        assert (
            "AND mf.name IN (N'Sales_log', N'Sales');" in text
            or "AND mf.name IN (N'Sales', N'Sales_log');" in text
        )
        assert "Sales/filegroup/PRIMARY" in text and "Sales/file/2" in text
        stored = list(s.scalars(select(ScriptRecord).where(ScriptRecord.direction == "forward")))
        assert len(stored) == 2 and len({r.text for r in stored}) == 1  # the old PRIMARY-only script is gone

        # a second call changes nothing (the stored scripts carry the group's plan checksum)
        ids = sorted(r.id for r in s.scalars(select(ScriptRecord)))
        ensure_scripts(s, primary, policy, now=NOW)
        assert sorted(r.id for r in s.scalars(select(ScriptRecord))) == ids

        # the log reopened: PRIMARY's script is written again for PRIMARY alone
        log.status = "open"
        s.flush()
        alone = next(r for r in ensure_scripts(s, primary, policy, now=NOW) if r.direction == "forward")
        assert _offline_periods(alone.text) == 1
        assert "Sales_log" not in alone.text.split(":on error exit")[1]


def test_a_shared_offline_script_is_attached_once(store: Store) -> None:
    """The report email attaches approved scripts: the pair two recommendations share goes once."""
    from app.scripts import approved_script_attachments

    policy = parse_policy(POLICY.read_text(encoding="utf-8"), source="test")
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        recs = [
            _rec(s, t, "Sales/filegroup/PRIMARY", "filegroup", "PRIMARY"),
            _rec(s, t, "Sales/file/2", "log_file", "Sales_log"),
        ]
        files = [a.filename for a in approved_script_attachments(s, recs, policy, now=NOW)]
        assert len(files) == 2 and len(set(files)) == 2, files
        assert any(f.endswith(".forward.sql") for f in files) and any(
            f.endswith(".rollback.sql") for f in files
        )


def test_the_change_window_plan_keeps_one_databases_offline_moves_together(store: Store) -> None:
    """The plan places what the script does: the approved offline moves of Sales in one window, back
    to back (a move of another database never between them); an online move is planned on its own."""
    from app.change_windows import plan

    policy = parse_policy(POLICY.read_text(encoding="utf-8"), source="test")
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        recs = [_rec(s, t, "Sales/filegroup/PRIMARY", "filegroup", "PRIMARY"),
                _rec(s, t, "Sales/file/2", "log_file", "Sales_log"),
                _rec(s, t, "Sales/filegroup/FG_ORDERS_2024", "filegroup", "FG_ORDERS_2024")]  # fmt: skip
        out = plan(recs, policy, now=NOW)
    placed = [p for w in out.windows for p in w.moves] + list(out.unfit) + list(out.waiting)
    keys = {p.move.name: p.move.together for p in placed}
    assert keys["PRIMARY"] == keys["Sales_log"] == f"{t.id}/sqlserver/Sales" and keys["FG_ORDERS_2024"] == ""
    offline = [p for p in placed if p.move.together]
    assert len({p.window for p in offline}) == 1
    assert all("(one offline period with " in p.reason for p in offline)
    window = next(w for w in out.windows if any(p.move.together for p in w.moves))
    names = [p.move.name for p in window.moves]  # back to back: nothing between the two
    i, j = sorted(names.index(n) for n in ("PRIMARY", "Sales_log"))
    assert j == i + 1
