"""The report's figures match the data: rates over the seconds the samples cover, the coverage
stated, old data and short histories said so (#17 items 2, 4, 6)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.evaluate import evaluate
from app.importer import import_file
from app.mail.content import gather
from app.mail.render import build_message
from app.mail.scope import resolve_scope
from app.store.db import Store
from policies.loader import load_policy

T0 = datetime(2026, 10, 20, 8, 0, tzinfo=UTC)
READS_PER_S = 2267
WRITES_PER_S = 41
HEADER = (
    "sample_time,server_name,sqlserver_start_time,database_name,file_id,file_name,type_desc,filegroup_name,"
    "physical_name,size_on_disk_bytes,num_of_reads,num_of_bytes_read,io_stall_read_ms,num_of_writes,"
    "num_of_bytes_written,io_stall_write_ms,io_stall_queued_read_ms,io_stall_queued_write_ms,"
    "volume_mount_point,volume_total_bytes,volume_available_bytes"
)


def one_hour_file(
    tmp: Path, *, server: str = "SQLRATE01", start: datetime = T0, minutes: int = 60, database: str = "Sales"
) -> Path:
    """One data file sampled every 5 minutes for `minutes`, at READS_PER_S and WRITES_PER_S,
    2 ms a read and 1 ms a write."""
    lines = [HEADER]
    for i in range(minutes // 5 + 1):
        at = start + timedelta(minutes=5 * i)
        reads, writes = 1_000 + READS_PER_S * 300 * i, 500 + WRITES_PER_S * 300 * i
        lines.append(
            f'{at:%Y-%m-%dT%H:%M:%S}.000Z,"{server}",2026-10-01T03:00:00.000Z,"{database}",1,"Sales","ROWS",'
            f'"PRIMARY","E:\\data\\Sales.mdf",53687091200,{reads},{reads * 8192},{reads * 2},{writes},'
            f'{writes * 8192},{writes},0,0,"E:\\",2199023255552,879609302220'
        )
    path = tmp / f"{server}_{start:%Y%m%d%H%M}_file_stats.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _text(store: Store, scope: str, now: datetime) -> tuple[str, str, object]:
    with store.session() as s:
        content = gather(s, resolve_scope(s, scope), now=now, policy=load_policy())
    msg = build_message(content, sender="t@example.test", recipients=["d@example.test"], base_url="http://x")
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = msg.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    return text, html, content


def test_one_hour_at_a_known_rate_reads_that_rate(store: Store, tmp_path: Path) -> None:
    import_file(store, one_hour_file(tmp_path), now=T0 + timedelta(hours=1))
    text, html, content = _text(store, "fleet", T0 + timedelta(hours=1, minutes=10))
    assert content.read_iops == pytest.approx(READS_PER_S)  # type: ignore[attr-defined]
    assert content.write_iops == pytest.approx(WRITES_PER_S)  # type: ignore[attr-defined]
    assert content.avg_read_ms == pytest.approx(2.0)  # type: ignore[attr-defined]
    for part in (text, html):
        assert "2,267 reads/s" in part and "41.0 writes/s" in part and "94.4" not in part
        assert "2.0 ms" in part and "1.0 ms" in part  # the average read and write
        assert "1 h of data" in part
        assert "1 hour of data: figures are a sample" in part
    assert "average read 2.0 ms   average write 1.0 ms" in text


def test_gaps_state_the_hours_covered(store: Store, tmp_path: Path) -> None:
    """Samples for 3 h, 17 h ago, and 2 h now: 5 h of the last 24 h, the rate over those 5 h."""
    import_file(store, one_hour_file(tmp_path, start=T0 - timedelta(hours=17), minutes=180))
    import_file(store, one_hour_file(tmp_path, start=T0 + timedelta(hours=1), minutes=120))
    text, _, content = _text(store, "target:import:sqlserver:SQLRATE01", T0 + timedelta(hours=3))
    assert content.read_iops == pytest.approx(READS_PER_S)  # type: ignore[attr-defined]
    assert "5 h of the last 24 h" in text
    assert "figures are a sample" in text  # 5 hours of history in all


def test_old_data_is_reported_on_its_own_day_and_says_so(store: Store, tmp_path: Path) -> None:
    import_file(store, one_hour_file(tmp_path), now=T0 + timedelta(hours=1))
    now = T0 + timedelta(days=33, hours=1, minutes=20)
    evaluate(store, load_policy(), now=now)
    text, html, content = _text(store, "import:sqlserver:SQLRATE01", now)
    assert content.read_iops == pytest.approx(READS_PER_S)  # type: ignore[attr-defined]
    for part in (text, html):
        assert "data up to 2026-10-20 09:00 UTC, 33 days old" in part
        assert "2,267 reads/s" in part


def test_a_long_history_has_no_sample_note(store: Store, tmp_path: Path) -> None:
    import_file(store, one_hour_file(tmp_path, minutes=26 * 60))
    text, _, content = _text(store, "fleet", T0 + timedelta(hours=26))
    assert content.read_iops == pytest.approx(READS_PER_S)  # type: ignore[attr-defined]
    assert "23 h of the last 24 h" in text  # the current hour and the 23 before it
    assert "figures are a sample" not in text and "data up to" not in text


def test_the_report_counts_each_pools_fastest_tier(store: Store) -> None:
    """With storage pools, "flash" is each pool's fastest tier (#34 item 7): a move onto array-b's
    nvme counts, a move onto the default pool's fc does not, and the report names both tiers."""
    import yaml

    from app.store.models import Recommendation, Target
    from policies.loader import DEFAULT_POLICY, parse_policy
    from tests.policies.test_pools_policy import nvme_pool

    data = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    data["pools"] = [nvme_pool("array-b", "SQLDEV*")]
    policy = parse_policy(yaml.safe_dump(data), source="pools.yaml")
    now = T0 + timedelta(hours=1)
    with store.session() as s:
        for name, pool, to_tier, gib in (("SQLDEV01", "array-b", "nvme", 6), ("SQLPROD01", None, "fc", 40),
                                         ("SQLPROD02", None, "flash", 3)):  # fmt: skip
            t = Target(name=name, engine="sqlserver", source="import", created_at=T0)
            s.add(t)
            s.flush()
            s.add(Recommendation(target_id=t.id, key="Sales/filegroup/FG", engine="sqlserver", server=name,
                                 database="Sales", kind="filegroup", name="FG", from_tier="sata", to_tier=to_tier,
                                 profile="hot", rule="TW700", size_bytes=gib * 2**30, io_ms_per_s_now=3.0,
                                 io_ms_per_s_after=1.0, evidence={"pool": pool} if pool else {}, status="open",
                                 created_at=T0, updated_at=T0))  # fmt: skip
        s.flush()
        content = gather(s, resolve_scope(s, "fleet"), now=now, policy=policy)
    assert content.flash_gb_recommended == pytest.approx(9.0)  # 6 GiB nvme + 3 GiB flash, not the 40 on fc
    assert content.flash_tier == "flash / nvme"
    msg = build_message(content, sender="t@example.test", recipients=["d@example.test"], base_url="http://x")
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "flash / nvme these moves would use: 9.0 GB" in text
