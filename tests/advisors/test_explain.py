"""Evidence for every object: the stage that decided, its numbers and the sentence, per stage.

Each case runs the whole pipeline (advise) on a few plain windows and asserts the decision stage,
the tiers and the reason text of one object, moved or not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest

from advisors.advise import Advice, advise, database_curves
from advisors.explain import STAGES, evidence_lines, match_objects
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from app.advice import report_json
from tests.fixture_policy import reference_policy

POLICY = reference_policy()  # hand arithmetic on its tier figures (tests/reference-policy.yaml)
T0 = datetime(2026, 11, 1, tzinfo=UTC)
WEEK = 7 * 24


def fg(
    name: str,
    reads_s: float,
    *,
    size_gb: float = 10,
    tier: str = "fc",
    read_kb: float = 8,
    read_ms: float = 10,
    writes_s: float = 0,
    database: str = "D",
    last_day_reads_s: float | None = None,
) -> ObjectWindow:
    """One data file of filegroup `name` (its only file), hourly over a week."""
    by_hour = []
    total: dict[str, int] = dict.fromkeys(
        ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms"), 0
    )
    for h in range(WEEK):
        per_s = last_day_reads_s if last_day_reads_s is not None and h >= WEEK - 24 else reads_s
        n, w = int(per_s * 3600), int(writes_s * 3600)
        c = {
            "reads": n,
            "bytes_read": int(n * read_kb * 1024),
            "read_time_ms": int(n * read_ms),
            "writes": w,
            "bytes_written": w * 8192,
            "write_time_ms": w * 2,
        }
        for k, v in c.items():
            total[k] += v
        by_hour.append((T0 + timedelta(hours=h), Usage(3600, c)))
    info = ObjectInfo(
        key=f"{database}/file/{name}",
        engine="sqlserver",
        server="S",
        database=database,
        kind="data_file",
        name=f"{name}_1",
        size_bytes=int(size_gb * GB),
        current_tier=tier,
        filegroup=name,
    )
    return ObjectWindow(info, Usage(3600 * WEEK, dict(total)), tuple(by_hour))


def partition(filegroup: str, number: int, *, database: str = "D") -> ObjectWindow:
    info = ObjectInfo(
        key=f"{database}/partition/dbo.Orders/1/{number}",
        engine="sqlserver",
        server="S",
        database=database,
        kind="partition",
        name=f"dbo.Orders p{number}",
        size_bytes=5 * GB,
        filegroup=filegroup,
        table_name="dbo.Orders",
        partition_number=number,
    )
    extra = {
        "page_io_latch_wait_count": 3600 * WEEK * 50,
        "singleton_lookup_count": 900,
        "range_scan_count": 100,
    }
    return ObjectWindow(info, Usage(3600 * WEEK, {}, extra))


def db2(kind: str, key: str, name: str, *, tier: str | None = None, **extra: int) -> ObjectWindow:
    """A history table space (500 GB, 5 reads/s at 6 ms: 0.01 reads/s per GB) or one of its partitions."""
    reads = 3600 * WEEK * 5
    counters = (
        {
            "reads": reads,
            "bytes_read": reads * 8192,
            "read_time_ms": reads * 6,
            "writes": 0,
            "bytes_written": 0,
            "write_time_ms": 0,
        }
        if kind == "tablespace"
        else {}
    )
    info = ObjectInfo(
        key=key,
        engine="db2",
        server="DB2",
        database="SALES",
        kind=kind,
        name=name,
        size_bytes=500 * GB,
        current_tier=tier,
        tablespace="TS_HIST",
    )
    return ObjectWindow(info, Usage(3600 * WEEK, counters, extra))


@dataclass
class Case:
    windows: Callable[[], list[ObjectWindow]]
    key: str  # the object whose evidence is checked
    stage: str
    rule: str
    current: str | None
    recommended: str
    moved: bool
    text: tuple[str, ...]  # fragments of the explanation, in order
    numbers: dict[str, float] = field(default_factory=dict)  # approximate figures in decision.numbers


COLD = fg("FG_COLD", 1, size_gb=2000, tier="sata")  # a cold neighbour


def moved_days_ago(w: ObjectWindow, days: float) -> ObjectWindow:
    """The window of a unit seen to move to where it is `days` before the end of the data."""
    return replace(w, info=replace(w.info, location_since=T0 + timedelta(hours=WEEK) - timedelta(days=days)))


CASES = {
    "benefit moves a hot random filegroup to flash": Case(
        lambda: [fg("FG_HOT", 2000), COLD],
        "D/filegroup/FG_HOT",
        "benefit",
        "TW700",
        "fc",
        "flash",
        True,
        (
            # 2,000 reads/s at 10 ms now; flash 1 ms x 1/(1 - 0.1): 2,000 of its 20,000 back-end IOPS
            "Move filegroup FG_HOT from fc to flash: saves 17.8 s/s of I/O wait on the whole window "
            "(1,778 ms/s per GB; 10.0 ms -> 1.1 ms per read), more than the 1.50 ms/s per GB that a GB on flash "
            "costs over fc.",
        ),
        {"read_iops": 2000, "avg_read_kb": 8, "avg_read_ms": 10, "io_ms_per_s_saved": 17778},
    ),
    "benefit keeps a hot filegroup on flash": Case(
        lambda: [fg("FG_HOT", 2000, tier="flash", read_ms=0.8), COLD],
        "D/filegroup/FG_HOT",
        "benefit",
        "TW700",
        "flash",
        "flash",
        False,
        ("Stays on flash: on fc it would wait ", "more than the 1.40 ms/s per GB a move to fc would free"),
    ),
    "minimum benefit keeps a scan off flash": Case(
        lambda: [fg("FG_SCAN", 500, read_kb=256, read_ms=3.5), COLD],
        "D/filegroup/FG_SCAN",
        "minimum_benefit",
        "TW705",
        "fc",
        "fc",
        False,
        ("Stays on fc: flash would save 1.4 ms per I/O (", "below the policy's minimum of 2.0 ms per I/O."),
        {"avg_read_kb": 256},
    ),
    "minimum benefit: the array cache serves it already": Case(
        lambda: [fg("FG_CACHED", 2000, read_ms=1.5), COLD],
        "D/filegroup/FG_CACHED",
        "minimum_benefit",
        "TW705",
        "fc",
        "fc",
        False,
        ("Stays on fc: flash would save 1.1 ms per I/O", "below the policy's minimum of 2.0 ms per I/O."),
        {"avg_read_ms": 1.5},
    ),
    "price keeps a warm unit on fc": Case(
        lambda: [fg("FG_WARM", 60, size_gb=1000, read_ms=6), COLD],
        "D/filegroup/FG_WARM",
        "price",
        "TW710",
        "fc",
        "fc",
        False,
        # 60 reads/s x 5 ms = 300 ms/s on 1,000 GB: 0.30 ms/s per GB < flash's 1.5 over fc
        (
            "Stays on fc: flash would save 300.0 ms/s of I/O wait (0.30 ms/s per GB), less than the 1.50 ms/s "
            "per GB that a GB on flash costs over fc; ",
            # and 60 x (14 - 6) = 480 ms/s more on sata, more than the 0.35 per GB the move would free
            "on sata it would wait 480.5 ms/s more (0.48 ms/s per GB, on the whole window), more than the "
            "0.35 ms/s per GB a move to sata would free (a GB on fc costs 0.45 ms/s per GB over sata, minus "
            "0.10 ms/s per GB for the move)",
        ),
    ),
    "price demotes a cold unit to sata and says what it frees": Case(
        lambda: [fg("FG_OLD", 0.2, size_gb=500, read_ms=6), fg("FG_HOT", 2000)],
        "D/filegroup/FG_OLD",
        "price",
        "TW710",
        "fc",
        "sata",
        True,
        ("Move filegroup FG_OLD from fc to sata: frees 500 GB of fc for 1.6 ms/s more I/O wait",),
        {"gb_freed": 500, "cost_freed": 500 * 4.5},
    ),
    "capacity: flash is full, the marginal unit stays": Case(
        lambda: [fg("FG_BIG1", 2000, size_gb=1000), fg("FG_BIG2", 1500, size_gb=1000), COLD],
        "D/filegroup/FG_BIG2",
        "capacity",
        "TW720",
        "fc",
        "fc",
        False,
        (
            # FG_BIG1: 2,000 x (10 - 1.1) ms / 1,000 GB less 1.5 = 16; FG_BIG2: 1,500 x 8.9 / 1,000 - 1.5 = 12
            "Stays on fc: flash is full (1,000 GB of 1.4 TB used, this unit needs 1,000 GB): the last unit "
            "placed there saves 16 ms/s per GB, this one 12 ms/s per GB.",
        ),
    ),
    "pinned: a system database": Case(
        lambda: [fg("PRIMARY", 2000, database="master"), fg("FG_OTHER", 1, size_gb=500, database="master")],
        "master/filegroup/PRIMARY",
        "pinned",
        "TW740",
        "fc",
        "fc",
        False,
        ("Stays on fc: pinned to fc by the policy (system databases are moved only with the instance).",),
    ),
    "residency: moved too recently to move again": Case(
        lambda: [moved_days_ago(fg("FG_NEW", 2000, read_ms=10), 3), COLD],
        "D/filegroup/FG_NEW",
        "residency",
        "TW730",
        "fc",
        "fc",
        False,
        ("Stays on fc: moved to fc 3.0 days ago; the minimum residency is 14 days.",),
    ),
    "storage problem: slow on the fastest tier": Case(
        lambda: [fg("FG_SLOW", 2000, tier="flash", read_ms=15), COLD],
        "D/filegroup/FG_SLOW",
        "storage_problem",
        "TW801",
        "flash",
        "flash",
        False,
        (
            "Stays on flash: slow for its tier: 15.0 ms per read (normal on flash: 0-2 ms)",
            "a storage problem to investigate",
        ),
    ),
    "partition moves with its filegroup": Case(
        lambda: [fg("FG_HOT", 2000), COLD, partition("FG_HOT", 3)],
        "D/partition/dbo.Orders/1/3",
        "moves_with_unit",
        "TW700",
        "fc",
        "flash",
        True,
        (
            "Moves with filegroup FG_HOT (fc -> flash): SQL Server places data by filegroup, so a partition "
            "cannot move alone; its own figures: 50.0 page I/O latch waits",
            "The filegroup: Move filegroup FG_HOT from fc to flash",
        ),
    ),
    "DB2 partition moves with its table space": Case(
        lambda: [
            db2("tablespace", "SALES/tablespace/TS_HIST", "TS_HIST", tier="fc"),
            db2("partition", "SALES/partition/ORDERS/1", "P2020", object_data_p_reads=3600 * WEEK),
        ],
        "SALES/partition/ORDERS/1",
        "moves_with_unit",
        "TW710",
        "fc",
        "sata",
        True,
        (
            "Moves with table space TS_HIST (fc -> sata): DB2 places data by table space, so a partition cannot "
            "move alone; its own figures: 1.0 object physical reads per second",
            "The table space: Move tablespace TS_HIST from fc to sata: frees 500 GB of fc",
        ),
    ),
    "unknown location": Case(
        lambda: [fg("FG_HOT", 2000, tier=None), COLD],  # type: ignore[arg-type]
        "D/filegroup/FG_HOT",
        "benefit",
        "TW700",
        None,
        "flash",
        False,
        ("Recommended flash (its location matches no tier in the policy): predicted ",),
    ),
}


def _advice(c: Case) -> Advice:
    report = advise(c.windows(), POLICY, now=T0 + timedelta(hours=WEEK), curve_points=0)
    return next(a for a in report.objects if a.info.key == c.key)


@pytest.mark.parametrize("name", list(CASES))
def test_evidence_per_stage(name: str) -> None:
    c = CASES[name]
    a = _advice(c)
    d = a.decision
    assert d is not None and d.stage in STAGES
    assert (d.stage, d.rule, d.current_tier, d.recommended_tier, d.moved) == (
        c.stage, c.rule, c.current, c.recommended, c.moved,
    ), a.explanation  # fmt: skip
    assert a.recommended_tier == c.recommended
    at = 0
    for fragment in c.text:
        found = a.explanation.find(fragment, at)
        assert found >= 0, f"{fragment!r} not in {a.explanation!r}"
        at = found + len(fragment)
    for k, v in c.numbers.items():
        assert d.numbers[k] == pytest.approx(v, rel=1e-3), k


def test_every_object_carries_evidence_in_the_json() -> None:
    windows = [fg("FG_HOT", 2000), fg("FG_SCAN", 500, read_kb=256), COLD, partition("FG_HOT", 3)]
    report = advise(windows, POLICY, now=T0 + timedelta(hours=WEEK), curve_points=0)
    doc = report_json(report, POLICY)
    assert len(doc["objects"]) == 4
    for o in doc["objects"]:
        assert o["explanation"], o["key"]
        assert o["decision"]["stage"] in STAGES
        assert o["decision"]["recommended_tier"] == o["recommended_tier"]
    scan = next(o for o in doc["objects"] if o["name"] == "FG_SCAN")
    pred = {p["tier"]: p for p in scan["decision"]["predicted"]}
    assert pred["fc"]["measured"] and pred["fc"]["read_ms"] == pytest.approx(10.0)
    # a 256 KB read-ahead: what it measures on fc, less fc's model (0.59 + 2.5 ms), plus flash's
    # (0.98 + 0.71 ms): flash saves only its faster transfer, and the 2 ms minimum keeps it on fc
    # ... times 1 / (1 - 0.1): FG_HOT's 2,000 back-end IOPS of flash's 20,000
    flash_seq = (10.0 - 3.09) + 1.69 / 0.9
    assert not pred["flash"]["measured"] and pred["flash"]["read_ms"] == pytest.approx(flash_seq, abs=0.02)
    assert pred["flash"]["io_ms_per_s"] == pytest.approx(500 * pred["flash"]["read_ms"], rel=1e-3)
    part = next(o for o in doc["objects"] if o["kind"] == "partition")
    assert part["decision"]["unit"] == "D/filegroup/FG_HOT"
    lines = evidence_lines(scan)
    assert lines[0] == "S/D filegroup FG_SCAN  [D/filegroup/FG_SCAN]"
    assert (
        "decided by: minimum_benefit (rule TW705); current fc, best alone fc, recommended fc, not moved"
        in lines[2]
    )
    assert any(line.startswith("  on flash: read 8.8 ms") for line in lines)


def test_match_objects_by_key_name_or_path() -> None:
    docs = [
        {"server": "S1", "database": "A", "name": "PRIMARY", "key": "A/filegroup/PRIMARY"},
        {"server": "S1", "database": "B", "name": "PRIMARY", "key": "B/filegroup/PRIMARY"},
        {"server": "S2", "database": "A", "name": "FG_X", "key": "A/filegroup/FG_X"},
    ]
    assert [d["database"] for d in match_objects(docs, "primary")] == ["A", "B"]
    assert [d["key"] for d in match_objects(docs, "S1/B/PRIMARY")] == ["B/filegroup/PRIMARY"]
    assert [d["name"] for d in match_objects(docs, "A/filegroup/FG_X")] == ["FG_X"]
    assert [d["name"] for d in match_objects(docs, "S1|A/filegroup/PRIMARY")] == ["PRIMARY"]
    assert match_objects(docs, "nope") == []


def test_database_curves() -> None:
    windows = [fg("FG_HOT", 2000), fg("FG_SCAN", 500, read_kb=256), COLD]
    report = advise(windows, POLICY, now=T0 + timedelta(hours=WEEK), curve_points=0)
    [c] = database_curves(report, POLICY, points=4)
    assert (c.server, c.database, c.units, c.note) == ("S", "D", 3, "")
    assert [round(g, 3) for g, _ in c.points] == [0.0, 3.333, 6.667, 10.0]  # up to FG_HOT's 10 GB
    shares = [v for _, v in c.points]
    assert shares == sorted(shares) and shares[-1] > shares[0]
    assert c.flash_gb_recommended == pytest.approx(10.0)
    # 2,000 reads/s: 10 ms now, flash's 1 ms x 1 / (1 - 0.1) with FG_HOT's load on it
    assert c.io_ms_per_s_now - c.io_ms_per_s_after == pytest.approx(2000 * (10 - 1 / 0.9), rel=1e-3)


def test_database_curve_when_the_load_exceeds_the_devices() -> None:
    # 3 x 200,000 reads/s: more than every tier's devices serve at any amount of flash
    windows = [fg(f"FG_{i}", 200_000, size_gb=100) for i in range(3)] + [COLD]
    report = advise(windows, POLICY, now=T0 + timedelta(hours=WEEK), curve_points=0, time_limit_s=2)
    [c] = database_curves(report, POLICY, points=3)
    assert c.note.startswith("the load exceeds the tiers' IOPS limits at every amount of flash")
    assert len(c.points) == 3 and c.points[-1][0] == pytest.approx(300.0)


def test_units_without_io_or_data_and_a_one_tier_policy() -> None:
    """No I/O, no GB, a single tier: an answer and a true sentence, never a crash."""
    report = advise(
        [fg("FG_EMPTY", 0, size_gb=0), fg("FG_IDLE", 0, size_gb=50), fg("FG_HOT", 2000)],
        POLICY,
        now=T0 + timedelta(hours=WEEK),
        curve_points=3,
    )
    by = {a.info.name: a for a in report.objects}
    assert by["FG_EMPTY"].recommended_tier == "fc"  # a tie stays where it is
    assert by["FG_EMPTY"].explanation == "Stays on fc: it holds no data (0 GB): nothing to gain by moving it."
    idle = by["FG_IDLE"]
    assert idle.recommended_tier == "sata" and idle.decision is not None and idle.decision.stage == "price"
    assert idle.decision.numbers["gb_freed"] == pytest.approx(50.0)
    one = POLICY.model_copy(update={"tiers": POLICY.tiers[1:2], "pins": []})
    [a] = advise([fg("FG_HOT", 2000)], one, now=T0 + timedelta(hours=WEEK), curve_points=3).objects
    assert (a.recommended_tier, a.explanation) == ("fc", "Stays on fc: fc is the only tier in the policy.")
