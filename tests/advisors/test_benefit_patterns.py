"""Issue #32 in the benefit model: Resource Governor queueing kept apart from the storage's latency
(item 1), back-end writes priced by access pattern (item 4), and the minimum saving per move
(item 5). Hand arithmetic on the reference policy's tiers (tests/reference-policy.yaml)."""

from __future__ import annotations

import pytest

from advisors.advise import advise
from advisors.benefit import backend_iops, governor_ms, io_mix, physics, wait_on, write_factor
from advisors.binding import binding, tier_use
from advisors.classify import GOVERNOR_QUEUEING, governor_notes, latency_for_tier
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage, compute_features
from advisors.units import make_case, unit_costs
from policies.model import Policy
from tests.fixture_policy import reference_policy

POLICY = reference_policy()
PHYS = physics(POLICY)
RULES = POLICY.classification
HOUR = 3600.0
KB = 1024


def usage(reads_s: float, read_kb: float, read_ms: float, writes_s: float = 0.0, write_kb: float = 8,
          write_ms: float = 2.0, extra: dict[str, int] | None = None) -> Usage:  # fmt: skip
    reads, writes = int(reads_s * HOUR), int(writes_s * HOUR)
    return Usage(
        HOUR,
        {
            "reads": reads,
            "bytes_read": int(reads * read_kb * KB),
            "read_time_ms": int(reads * read_ms),
            "writes": writes,
            "bytes_written": int(writes * write_kb * KB),
            "write_time_ms": int(writes * write_ms),
        },
        extra or {},
    )


def governed(reads_s: float, read_ms: float, queued_ms: float) -> Usage:
    """Reads of 8 KB at `read_ms` each, `queued_ms` of it Resource Governor queueing, as
    sys.dm_io_virtual_file_stats counts them (io_stall_read_ms includes io_stall_queued_read_ms)."""
    reads = int(reads_s * HOUR)
    return usage(reads_s, 8, read_ms, extra={"io_stall_queued_read_ms": int(reads * queued_ms),
                                             "io_stall_queued_write_ms": 0})  # fmt: skip


def unit(name: str, tier: str, u: Usage, size_gb: float, kind: str = "filegroup") -> ObjectWindow:
    path = {"flash": "E:\\flash\\", "fc": "F:\\fc\\", "sata": "S:\\sata\\"}[tier]
    info = ObjectInfo(f"DB/{kind}/{name}", "sqlserver", "S", "DB", kind, name,
                      size_bytes=int(size_gb * GB), current_tier=tier, physical_name=f"{path}{name}.ndf")  # fmt: skip
    return ObjectWindow(info, u)


def costs_of(w: ObjectWindow, policy: Policy = POLICY):  # type: ignore[no-untyped-def]
    phys = physics(policy)
    case = make_case(w, compute_features(w, db_heat=None), policy, phys, now=None)
    assert case is not None
    return case, unit_costs(case, phys, {}, policy)


# --- item 1: Resource Governor queueing -------------------------------------------------------------


def test_the_governors_queue_is_taken_out_of_the_storage_latency() -> None:
    mix = io_mix(governed(500, 30.0, 28.8), RULES)
    assert mix is not None
    assert mix.read_ms == pytest.approx(1.2)  # what storage answered
    assert mix.governor_read_ms == pytest.approx(28.8)
    assert mix.governor_write_ms == 0.0


def test_the_governors_queue_is_never_more_than_the_stall() -> None:
    u = usage(100, 8, 5.0, extra={"io_stall_queued_read_ms": 10**9})
    assert governor_ms(u) == (pytest.approx(5.0), 0.0)
    assert governor_ms(usage(100, 8, 5.0)) == (0.0, 0.0)  # DB2 and SQL Server before 2014: none reported


def test_the_governors_queue_goes_with_the_unit_to_every_tier() -> None:
    mix = io_mix(governed(500, 30.0, 28.8), RULES)
    assert mix is not None
    here = wait_on(mix, PHYS["fc"], current=PHYS["fc"], hit_share=0.0, utilisation=0.0, policy=POLICY)
    there = wait_on(mix, PHYS["flash"], current=PHYS["fc"], hit_share=0.0, utilisation=0.0, policy=POLICY)
    assert here.measured and here.read_ms == pytest.approx(30.0)  # measured: storage + queue, as counted
    assert there.read_ms is not None and there.read_ms > 28.8  # never "30.0 -> 1.1 ms per read"
    assert here.governor_ms_per_s == there.governor_ms_per_s == pytest.approx(500 * 28.8)
    assert here.wait_ms_per_s - there.wait_ms_per_s < 500 * 1.2  # at most what storage itself takes


def test_a_unit_slow_only_by_the_governor_is_not_promoted() -> None:
    _, costs = costs_of(unit("FG_CAPPED", "fc", governed(500, 30.0, 28.8), 50))
    assert "flash" not in costs.allowed  # its storage answers in 1.2 ms: flash saves < 2 ms per I/O
    assert costs.gated["flash"][0] < POLICY.benefit.min_saving_ms_per_io
    # the same stall without the governor's counters is slow storage, and flash pays
    _, slow = costs_of(unit("FG_SLOW", "fc", usage(500, 8, 30.0), 50))
    assert "flash" in slow.allowed and -slow.change["flash"] > 500 * 25


def test_the_governor_is_its_own_finding_and_the_tier_is_judged_on_storage() -> None:
    w = unit("FG_CAPPED", "flash", governed(500, 30.0, 28.8), 50)
    f = compute_features(w, db_heat=None)
    assert f.avg_read_ms == pytest.approx(30.0) and f.governor_read_ms == pytest.approx(28.8)
    notes = governor_notes(f)
    assert notes == (
        f"{GOVERNOR_QUEUEING} Resource Governor queues 28.8 ms of the 30.0 ms per read (96 %); storage "
        "answers in 1.2 ms: raise the resource pool's MAX_IOPS_PER_VOLUME, not the tier (a pool's cap no "
        "tier lifts)",
    )
    finding, slow = latency_for_tier(w.info, f, POLICY)
    assert not slow  # 1.2 ms from storage is flash's band's end, not a storage problem
    assert finding is not None and "28.8 ms more queued by Resource Governor" in finding
    # a small share of the stall is no finding
    assert (
        governor_notes(compute_features(unit("FG", "fc", governed(500, 10.0, 0.5), 50), db_heat=None)) == ()
    )


# --- item 4: back-end cost by access pattern --------------------------------------------------------


def test_full_stripe_factor_is_data_plus_parity_of_a_stripe() -> None:
    flash, fc, sata = (POLICY.tier(n) for n in ("flash", "fc", "sata"))
    assert flash.full_stripe_write_factor == pytest.approx(8 / 7)  # RAID 5 over 8 drives: 7 data + 1 parity
    assert sata.full_stripe_write_factor == pytest.approx(16 / 14)  # RAID 6 over 16 drives: 14 + 2
    assert fc.full_stripe_write_factor == 2.0  # a mirror writes twice, sequential or not
    assert (flash.raid_factor, fc.raid_factor, sata.raid_factor) == (4, 2, 6)


def test_a_logs_writes_pay_full_stripes_and_a_random_writer_the_penalty() -> None:
    log = io_mix(usage(0, 8, 0.0, writes_s=300, write_kb=60, write_ms=1.0), RULES, log=True)
    oltp = io_mix(usage(0, 8, 0.0, writes_s=300, write_kb=8, write_ms=1.0), RULES)
    assert log is not None and oltp is not None
    assert log.sequential_write_share == 1.0 and oltp.sequential_write_share == 0.0
    assert backend_iops(log, PHYS["sata"], 0.0) == pytest.approx(300 * 16 / 14)  # not 300 x 6
    assert backend_iops(oltp, PHYS["sata"], 0.0) == pytest.approx(300 * 6)
    assert backend_iops(log, PHYS["fc"], 0.0) == backend_iops(oltp, PHYS["fc"], 0.0) == pytest.approx(600)


@pytest.mark.parametrize(("write_kb", "share"), [(8, 0.0), (16, 0.0), (40, 0.5), (64, 1.0), (256, 1.0)])
def test_large_writes_count_as_bulk_loads(write_kb: float, share: float) -> None:
    mix = io_mix(usage(10, 8, 6.0, writes_s=100, write_kb=write_kb), RULES)
    assert mix is not None and mix.sequential_write_share == pytest.approx(share)
    assert write_factor(mix, PHYS["flash"]) == pytest.approx((1 - share) * 4 + share * 8 / 7)


def test_a_mostly_prefetched_unit_writes_as_it_is_scanned() -> None:
    scanned = io_mix(usage(100, 256, 3.0, writes_s=20), RULES)  # reads all read-ahead (>= 64 KB)
    mixed = io_mix(usage(100, 24, 3.0, writes_s=20), RULES)  # 1/6 of reads read-ahead: under half
    assert scanned is not None and mixed is not None
    assert scanned.sequential_write_share == 1.0 and mixed.sequential_write_share == 0.0


# --- item 5: the minimum saving per move ------------------------------------------------------------


def test_a_promotion_worth_less_than_the_minimum_per_move_is_not_made() -> None:
    # 2 GB at 1.5 reads/s of 12 ms on sata: flash saves ~11 ms per read, far above 2 ms per I/O, but
    # 1.5 x 11 = ~16.5 ms/s in all
    small = unit("FG_SMALL", "sata", usage(1.5, 8, 12.0), 2)
    policy = POLICY.model_copy(
        update={"benefit": POLICY.benefit.model_copy(update={"min_saving_ms_per_s_per_move": 20.0})}
    )
    case, costs = costs_of(small, policy)
    assert "flash" not in costs.gated  # it clears the per-I/O minimum
    assert "flash" in costs.small and costs.small["flash"] == pytest.approx(-costs.change["flash"])
    assert 15 < costs.small["flash"] < 20 and "flash" not in costs.allowed
    phys = physics(policy)
    bound = binding(case, costs, "sata", tier_use([], policy), policy, phys, pinned=None)
    assert bound.stage == "minimum_benefit"
    assert bound.detail.startswith("flash would save 16.")
    assert bound.detail.endswith(
        "below the policy's minimum of 20 ms/s per move: not worth the change it costs"
    )
    # with no minimum per move the same unit may go up
    off = POLICY.model_copy(
        update={"benefit": POLICY.benefit.model_copy(update={"min_saving_ms_per_s_per_move": 0.0})}
    )
    _, free = costs_of(small, off)
    assert free.small == {} and "flash" in free.allowed


def test_a_move_down_is_not_held_by_the_minimum_per_move() -> None:
    idle = unit("FG_IDLE", "flash", usage(0.01, 8, 1.0), 500)
    _, costs = costs_of(idle)
    assert costs.small == {} and "sata" in costs.allowed


def test_the_advice_says_the_queue_is_the_governors_and_predicts_it_on_flash() -> None:
    report = advise([unit("FG_CAPPED", "fc", governed(500, 30.0, 28.8), 50)], POLICY, curve_points=0)
    (a,) = report.objects
    assert a.recommended_tier == "fc" and a.decision is not None and a.decision.stage == "minimum_benefit"
    assert a.explanation.endswith(
        "Resource Governor queues 28.8 ms of the 30.0 ms per read (96 %); storage answers in 1.2 ms: raise "
        "the resource pool's MAX_IOPS_PER_VOLUME, not the tier (a pool's cap no tier lifts)."
    )
    assert a.reasons[1].startswith(GOVERNOR_QUEUEING)  # next to the binding reason
    flash = a.waits["flash"].read_ms
    assert flash is not None and 28.8 < flash < 30.0  # not "30.0 -> 1.1 ms per read"
