"""Verify after change through the store, on SQLite and PostgreSQL: snapshots before and after a
relocation, a move marked executed, the hourly evaluation, the API and the report email."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from app.mail.content import Scope, gather
from app.mail.service import compose, deliver
from app.main import create_app
from app.review import mark_executed
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import Recommendation, ScriptRecord, Target, Verification
from app.store.targets import add_target
from app.store.users import add_user
from app.verify import run_verification, track_record
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot
from tests.conftest import free_port
from tests.fixture_policy import REFERENCE_POLICY, reference_policy
from tests.mail.test_reports import Inbox
from tests.web.conftest import PASSWORD, login

# the fleet below sits on the reference policy's tiers (E:\\flash\\, F:\\fc\\) and its expectations are
# worked out on that policy's bands: frozen, not the shipped policy (tests/reference-policy.yaml)
POLICY = reference_policy()
START = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
CHANGE = START + timedelta(days=7)  # the move: hot1.ndf from F:\fc\ to E:\flash\
END = CHANGE + timedelta(days=7)
BOOT = START - timedelta(days=1)
HOUR = 3600


def _ref(key: str, name: str, path: str, filegroup: str, file_id: int) -> ObjectRef:
    return ObjectRef(Engine.SQLSERVER, "SQL1", "Sales", ObjectKind.DATA_FILE, key, name, size_bytes=10 * 2**30,
                     logical_name=name, physical_name=path, file_id=file_id, filegroup=filegroup)  # fmt: skip


class Series:
    """Cumulative counters of one file, advanced an hour at a time at given rates and latencies."""

    def __init__(self) -> None:
        self.c = dict.fromkeys(
            ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms"), 0
        )

    def step(self, read_iops: float, read_ms: float, write_iops: float, write_ms: float) -> dict[str, int]:
        r, w = round(read_iops * HOUR), round(write_iops * HOUR)
        self.c["reads"] += r
        self.c["bytes_read"] += r * 8192
        self.c["read_time_ms"] += round(r * read_ms)
        self.c["writes"] += w
        self.c["bytes_written"] += w * 8192
        self.c["write_time_ms"] += round(w * write_ms)
        return dict(self.c)


def snapshots(*, after_read_ms: float, after_read_iops: float = 430, others_after_ms: float = 1.0,
              moved: bool = True, until: datetime = END) -> list[Snapshot]:  # fmt: skip
    """Hourly snapshots over two weeks: hot1 (FG_HOT) on fc at 412 reads/s and 11.8 ms, then on
    flash (when `moved`); other1 (FG_OTHER) on flash all along at 2,000 reads/s."""
    hot, other = Series(), Series()
    out = []
    t = START
    hot_c, other_c = hot.step(0, 0, 0, 0), other.step(0, 0, 0, 0)
    while t <= until:
        after = t > CHANGE
        path = r"E:\flash\Sales\hot1.ndf" if after and moved else r"F:\fc\Sales\hot1.ndf"
        samples = (
            ObjectSample(_ref("Sales/file/3", "hot1", path, "FG_HOT", 3), hot_c, {}),
            ObjectSample(
                _ref("Sales/file/4", "other1", r"E:\flash\Sales\other1.ndf", "FG_OTHER", 4), other_c, {}
            ),
        )
        out.append(Snapshot(Engine.SQLSERVER, "SQL1", t, BOOT, samples))
        t += timedelta(hours=1)
        if t > CHANGE:
            hot_c = hot.step(after_read_iops, after_read_ms, 40, 2.0)
            other_c = other.step(2000, others_after_ms, 500, 1.5)
        else:
            hot_c = hot.step(412, 11.8, 40, 2.0)
            other_c = other.step(2000, 1.0, 500, 1.5)
    return out


STEADY = (1.0, 1.0, 1.0, 1.0)  # four unmoved fc files whose latency the change leaves alone


def with_controls(base: list[Snapshot], *, server: str = "SQL1", drift: tuple[float, ...] = STEADY,
                  burst_at: datetime | None = None, reads: tuple[float, ...] | None = None) -> list[Snapshot]:  # fmt: skip
    """The snapshots plus one unmoved fc file per drift factor (ctrl0, ctrl1, ...; FG_C0, ...) at
    20 reads/s (or `reads`, and a tenth as many writes) and 15 ms, their latency times the factor after the change; ctrl0 with a
    1 MB-read backup hour at `burst_at`."""
    series = [Series() for _ in drift]
    counters = [s.step(0, 0, 0, 0) for s in series]
    rates = reads or (20.0,) * len(drift)
    out = []
    for snap in base:
        t = snap.sample_time
        extra = tuple(
            ObjectSample(
                replace(
                    _ref(f"Sales/file/{10 + i}", f"ctrl{i}", rf"F:\fc\Sales\ctrl{i}.ndf", f"FG_C{i}", 10 + i),
                    server=server,
                ),
                counters[i],
                {},
            )
            for i in range(len(drift))
        )
        samples = snap.samples if server == snap.server else ()
        out.append(Snapshot(Engine.SQLSERVER, server, t, BOOT, samples + extra))
        for i, s in enumerate(series):
            ms = 15.0 * (drift[i] if t >= CHANGE else 1.0)
            counters[i] = s.step(rates[i], ms, rates[i] / 10, 1.0)
            if burst_at is not None and i == 0 and t == burst_at:
                s.c["reads"] += 100_000
                s.c["bytes_read"] += 100_000 * 2**20
                s.c["read_time_ms"] += 100_000 * 40
                counters[i] = dict(s.c)
    return out


def _setup(store: Store, snaps: list[Snapshot], *, recommend: bool = True) -> int | None:
    with store.session() as s:
        target = add_target(s, name="SQL1", engine="sqlserver", source="live", connection_encrypted=None,
                            password_env=None, poll_interval_s=300, now=START)  # fmt: skip
        ingest_snapshots(s, target, snaps)
        if not recommend:
            return None
        rec = Recommendation(target_id=target.id, key="Sales/filegroup/FG_HOT", engine="sqlserver", server="SQL1",
                             database="Sales", kind="filegroup", name="FG_HOT", from_tier="fc", to_tier="flash",
                             profile="random_read", rule="TW701", size_bytes=10 * 2**30, io_ms_per_s_now=4942.0,
                             io_ms_per_s_after=342.0, evidence={"reasons": ["small random reads"]},
                             status="approved", created_at=START, updated_at=START)  # fmt: skip
        s.add(rec)
        s.flush()
        s.add(ScriptRecord(recommendation_id=rec.id, direction="rollback", dialect="tsql",
                           filename="0001_rollback.sql", text="-- move back", sha256="0" * 64, created_at=START))  # fmt: skip
        mark_executed(s, rec.id, username="ops", when=CHANGE, now=CHANGE + timedelta(hours=2))
        return rec.id


def _cli_env(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(settings.secret_key_file))
    monkeypatch.setenv("TIERWISE_POLICY_FILE", str(REFERENCE_POLICY))  # the fleet's policy (POLICY)


@pytest.fixture(autouse=True)
def _fresh_cli_settings() -> Iterator[None]:
    """The CLI's settings are cached per process: drop them around each test, or a CLI call would
    read whichever store an earlier test configured."""
    from app.settings import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _verifications(store: Store) -> list[Verification]:
    with store.session() as s:
        rows = list(s.scalars(select(Verification).order_by(Verification.id)))
        s.expunge_all()
        return rows


def test_executed_move_is_improved_after_its_window(store: Store) -> None:
    rec_id = _setup(store, with_controls(snapshots(after_read_ms=0.9)))
    [v] = _verifications(store)
    assert (v.status, v.trigger, v.recommendation_id, v.changed_at) == ("waiting", "executed", rec_id, CHANGE)
    assert v.predicted_gain_ms_per_s == pytest.approx(4600.0)

    # half-way: the ingest's sighting of the relocation is the same change; figures so far, still waiting
    run_verification(store, POLICY, now=CHANGE + timedelta(days=3))
    [v] = _verifications(store)
    assert v.status == "waiting" and v.evaluated_at == CHANGE + timedelta(days=3)
    assert v.reasons[0] == "after-window ends 2026-11-15 00:00 UTC; figures so far"
    # measured from the first poll that saw it on flash (01:00) plus the 6-hour warm-up
    assert v.after["measured_from"] == "2026-11-08T07:00:00+00:00"
    assert len(v.after["days"]) == 3  # 07:00 -> +3 days: two whole days and 17 hours (enough: 12 needed)

    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    assert v.confidence is None  # the interval replaces it
    assert v.before["figures"]["avg_read_ms"] == pytest.approx(11.8, abs=0.01)
    assert v.after["figures"]["avg_read_ms"] == pytest.approx(0.9, abs=0.01)
    assert len(v.after["days"]) == 7 and v.after["interval"]["days"] == 7
    assert v.after["interval"]["high_pct"] < 0 and v.after["interval"]["estimate_pct"] == pytest.approx(
        -91, abs=1
    )
    assert v.achieved_gain_ms_per_s == pytest.approx(412 * 10.9, rel=0.01)
    assert v.share_of_prediction == pytest.approx(412 * 10.9 / 4600, rel=0.01)
    assert "read latency 11.8 ms → 0.9 ms" in v.reasons
    assert "on flash: hot1 (E:\\flash\\Sales\\hot1.ndf)" in v.reasons
    assert "achieved 98 % of the predicted 4.6 s/s saved" in v.reasons
    assert any(r.startswith("tier flash: load 2,500 → 2,970 IOPS") for r in v.reasons)
    assert v.after["controlled"] is True
    assert any(r.startswith("controls: 4 unmoved objects on fc weighted by their I/O") for r in v.reasons)
    assert any(r.startswith("delivered its prediction: at least 9") for r in v.reasons), v.reasons
    with store.session() as s:
        record = track_record(s, POLICY.verification)
    assert record["counts"]["improved"] == 1 and (record["judged"], record["achieved"]) == (1, 1)
    assert record["share_achieved"] == 1.0 and 0.2 < record["share_interval"]["low"] < 1.0


def test_executed_move_whose_files_stayed_put_is_not_moved(store: Store, settings: Settings) -> None:
    """Marked executed, but hot1.ndf never left F:\\fc\\ - and the array got quieter (11.8 -> 6 ms):
    the verdict is "not moved", never a gain."""
    rec_id = _setup(store, snapshots(after_read_ms=6.0, moved=False))
    run_verification(store, POLICY, now=CHANGE + timedelta(days=1))
    [v] = _verifications(store)
    assert v.status == "waiting" and v.reasons[0].startswith("not yet seen on flash")
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "not_moved", v.reasons
    assert v.reasons == ["not moved: hot1 (F:\\fc\\Sales\\hot1.ndf) is on fc, not flash"]
    assert v.achieved_gain_ms_per_s is None and v.share_of_prediction is None
    with store.session() as s:
        record = track_record(s, POLICY.verification)
    assert record["counts"]["not_moved"] == 1 and record["judged"] == 0
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=START)
    app_settings = settings.model_copy(update={"scheduler_enabled": False, "demo": False})
    with TestClient(create_app(app_settings)) as client:
        login(client, "vera")
        [item] = client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
        assert item["id"] == rec_id
        assert (item["verification"]["status"], item["verification"]["label"]) == ("not_moved", "not moved")
        page = client.get("/recommendations", params={"status": "executed"}).text
        assert 'data-status="not_moved"' in page and "is on fc, not flash" in page


def test_relocation_seen_by_ingest_is_verified_against_the_tiers(store: Store) -> None:
    _setup(store, with_controls(snapshots(after_read_ms=0.9)), recommend=False)
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert (v.trigger, v.key, v.name) == ("location_change", "Sales/filegroup/FG_HOT", "FG_HOT")
    assert (v.from_tier, v.to_tier, v.changed_at) == ("fc", "flash", CHANGE + timedelta(hours=1))
    assert v.before["previous_location"]["physical_name"] == r"F:\fc\Sales\hot1.ndf"
    # nobody predicted it: the policy's flash latencies do (412 x 11.8 + 40 x 2 - 412 x 1.0 - 40 x 1.5)
    assert v.predicted_gain_ms_per_s == pytest.approx(412 * 10.8 + 40 * 0.5, rel=0.01)
    assert v.status == "improved", v.reasons
    # the executed mark that comes later links to it instead of opening a second one
    with store.session() as s:
        t = s.scalar(select(Target))
        assert t is not None
        rec = Recommendation(target_id=t.id, key="Sales/filegroup/FG_HOT", engine="sqlserver", server="SQL1",
                             database="Sales", kind="filegroup", name="FG_HOT", from_tier="fc", to_tier="flash",
                             profile="random_read", rule="TW701", io_ms_per_s_now=4942.0, io_ms_per_s_after=342.0,
                             status="approved", created_at=START, updated_at=START)  # fmt: skip
        s.add(rec)
        s.flush()
        mark_executed(s, rec.id, username="ops", when=CHANGE, now=END + timedelta(hours=2))
    [v] = _verifications(store)
    assert v.trigger == "executed" and v.recommendation_id is not None
    assert v.predicted_gain_ms_per_s == pytest.approx(4600.0)
    assert v.status == "waiting"
    run_verification(store, POLICY, now=END + timedelta(hours=3))
    [v] = _verifications(store)
    assert v.status == "improved" and "achieved 98 % of the predicted 4.6 s/s saved" in v.reasons


def test_too_little_data_after_is_inconclusive(store: Store) -> None:
    snaps = [s for s in snapshots(after_read_ms=0.9) if s.sample_time <= CHANGE + timedelta(hours=12)]
    _setup(store, snaps)
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "waiting", v.reasons
    assert v.reasons[0] == "inconclusive so far: measuring until 2026-11-22 00:00 UTC (14 days)"
    run_verification(store, POLICY, now=CHANGE + timedelta(days=14, hours=1))
    [v] = _verifications(store)
    assert v.status == "inconclusive" and v.window_days == 14
    assert v.reasons[-1] == "too little data: no day has enough paired hours on both sides", v.reasons


def test_an_inconclusive_week_is_extended_and_judged_again(store: Store) -> None:
    """Monitoring stopped hours after the move and came back a week later: inconclusive at 7 days,
    so the window grows to 14 and the second week (paired with the same weekdays two weeks before
    it) decides; only then is the verdict final."""
    snaps = [s for s in with_controls(snapshots(after_read_ms=0.9, until=CHANGE + timedelta(days=14)))
             if not CHANGE + timedelta(hours=12) < s.sample_time < END]  # fmt: skip
    _setup(store, snaps)
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "waiting" and v.window_days == 14, v.reasons
    assert v.reasons[0].startswith("inconclusive so far: measuring until")
    assert v.after["extended_until"] == (CHANGE + timedelta(days=14)).isoformat()
    run_verification(store, POLICY, now=CHANGE + timedelta(days=10))  # not yet: still measuring
    [v] = _verifications(store)
    assert v.status == "waiting" and v.window_days == 14
    # the pages and the API still say why it waits, and until when
    assert v.after["extended_until"] == (CHANGE + timedelta(days=14)).isoformat()
    assert v.reasons[0] == "inconclusive at 7 days: measuring to 14 days, until 2026-11-22 00:00 UTC"
    run_verification(store, POLICY, now=CHANGE + timedelta(days=14, hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    assert any(
        r.startswith("compared 7 days after the move with the same weekdays 2 weeks earlier")
        for r in v.reasons
    )


def test_regression_shows_in_api_page_report_and_cli(
    store: Store, settings: Settings, smtp: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # hot1 is fast on flash (11.8 -> 1.0 ms), but the flash tier it joined got slower for the
    # objects already there (their reads 1 -> 3 ms at the same load): the move overloaded it
    rec_id = _setup(store, with_controls(snapshots(after_read_ms=1.0, others_after_ms=3.0)))
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert (v.status, v.after["regression"]) == ("regressed", "tier"), v.reasons
    assert v.after["verdict"].startswith(
        "regression: tier flash it joined got slower: its other objects' read latency +200 % (95 % interval"
    )
    assert v.after["verdict"].endswith("all beyond the 20 % and 1 ms allowed")
    assert "read latency 11.8 ms → 1.0 ms" in v.reasons

    # the API and the Recommendations page
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=START)
    app_settings = settings.model_copy(update={"scheduler_enabled": False, "demo": False})
    with TestClient(create_app(app_settings)) as client:
        login(client, "vera")
        [item] = client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
        assert item["id"] == rec_id
        ver = item["verification"]
        assert ver["status"] == "regressed" and ver["regression"] == "tier"
        assert ver["tier_share"] == pytest.approx(470 / (470 + 2500), abs=0.01)
        assert set(ver["tier_intervals"]) == {"read", "write"}
        assert ver["rollback_script"]["download"].endswith("/download")
        assert ver["predicted_gain_ms_per_s"] == pytest.approx(4600.0)
        assert client.get("/api/verifications", params={"status": "regressed"}).json()[0]["id"] == v.id
        record = client.get("/api/track-record").json()
        # the object achieved its gain: the track record counts it, the tier's regression is shown
        assert record["counts"]["regressed"] == 1 and record["achieved"] == 1 and record["judged"] == 1
        page = client.get("/recommendations", params={"status": "executed"}).text
        assert 'data-status="regressed"' in page and "rollback script" in page
        assert "1 of 1</strong> verified moves achieved" in page and 'class="share-interval"' in page

    # the next report announces it once, and only once it was delivered
    inbox, port = smtp
    mail_settings = settings.model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_starttls": False}
    )
    now = END + timedelta(hours=2)
    with store.session() as s:
        content = gather(s, Scope("fleet"), now=now)
    assert [r.id for r in content.regressions] == [v.id]
    msg, _ = compose(store, mail_settings, Scope("fleet"), ["dba@example.com"], now=now)
    down = mail_settings.model_copy(update={"smtp_port": free_port()})  # nobody listens: not delivered
    assert not deliver(store, down, msg, now=now, sleep=lambda _: None).ok
    assert _verifications(store)[0].notified_at is None
    sent = deliver(store, mail_settings, msg, now=now)
    assert sent.ok
    [received] = inbox.messages
    assert received["X-Tierwise-Regressions"] is None  # the internal marker is not sent
    text = received.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "Moves that made things worse" in text and "FG_HOT" in text
    assert "tier flash it joined got slower" in text
    html = received.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert "Moves that made things worse" in html and "rollback" in html
    [v] = _verifications(store)
    assert v.notified_at == now
    with store.session() as s:
        assert gather(s, Scope("fleet"), now=now).regressions == ()

    # the CLI prints the same verdict
    from app.cli import app as cli

    _cli_env(monkeypatch, settings)
    out = CliRunner().invoke(cli, ["verify", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["items"][0]["status"] == "regressed" and doc["track_record"]["counts"]["regressed"] == 1
    text_out = CliRunner().invoke(cli, ["verify"]).output
    i = doc["items"][0]["interval"]
    assert doc["items"][0]["label"] in text_out and "confidence" not in text_out
    assert f"% interval {i['low_pct']:+.0f} % to {i['high_pct']:+.0f} %" in text_out


def test_hourly_job_runs_the_verification(store: Store, settings: Settings, vault: Vault) -> None:
    from app.jobs import Runtime, Scheduler, verify_job

    _setup(store, with_controls(snapshots(after_read_ms=0.9)))
    pinned = settings.model_copy(update={"policy_file": REFERENCE_POLICY})  # the fleet's policy (POLICY)
    Scheduler(Runtime(store, vault, pinned))  # sets the jobs' runtime; not started
    verify_job()  # now (the real clock) is past the after-window
    [v] = _verifications(store)
    assert v.status == "improved" and v.evaluated_at is not None


def test_cli_marks_an_approved_move_executed(
    store: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tierwise executed` is the CLI twin of the Scripts page's form: audited, verification opened."""
    from app.cli import app as cli
    from app.store.models import AuditEvent, Recommendation

    rec_id = _setup(store, snapshots(after_read_ms=1.0))
    with store.session() as s:
        rec = s.get(Recommendation, rec_id)
        assert rec is not None
        rec.status, rec.executed_at, rec.executed_by = "approved", None, None
        for row in [*s.scalars(select(Verification)), *s.scalars(select(AuditEvent))]:
            s.delete(row)  # as if only approved: the CLI below does the marking
    _cli_env(monkeypatch, settings)
    runner = CliRunner()
    bad = runner.invoke(cli, ["executed", str(rec_id), "--by", "ops.kim", "--at", "yesterday"])
    assert bad.exit_code == 2 and "not a date and time" in bad.output
    missing = runner.invoke(cli, ["executed", "999999", "--by", "ops.kim"])
    assert missing.exit_code == 2 and "no recommendation #999999" in missing.output
    at = CHANGE.strftime("%Y-%m-%dT%H:%M")
    out = runner.invoke(cli, ["executed", str(rec_id), "--by", "ops.kim", "--at", at])
    assert out.exit_code == 0, out.output
    assert "executed" in out.output and "ops.kim" in out.output
    again = runner.invoke(cli, ["executed", str(rec_id), "--by", "ops.kim"])
    assert again.exit_code == 2 and "is already executed by ops.kim" in again.output
    with store.session() as s:
        rec = s.get(Recommendation, rec_id)
        assert rec is not None and (rec.status, rec.executed_by) == ("executed", "ops.kim")
        [v] = s.scalars(select(Verification)).all()
        assert (v.status, v.trigger, v.changed_at) == ("waiting", "executed", CHANGE)
        assert s.scalar(select(AuditEvent).where(AuditEvent.action == "executed")) is not None
