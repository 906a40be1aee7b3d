"""The advice's notes on an overloaded array read their figures as the pages do (advisors.quantities):
IOPS with thousands separators, sizes and GB a day in the size rule, shares in percent."""

from __future__ import annotations

from advisors.advise import advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from tests.fixture_policy import reference_policy

POLICY = reference_policy()  # hand arithmetic on its tier figures (tests/reference-policy.yaml)
WEEK = 7 * 24 * 3600.0


def on_sata(name: str, reads_s: int, size_gb: int) -> ObjectWindow:
    """A filegroup on sata reading 8 KB pages at 14 ms for a week, writing nothing."""
    reads = int(reads_s * WEEK)
    counters = {"reads": reads, "bytes_read": reads * 8192, "read_time_ms": reads * 14,
                "writes": 0, "bytes_written": 0, "write_time_ms": 0}  # fmt: skip
    info = ObjectInfo(key=f"D/filegroup/{name}", engine="sqlserver", server="S", database="D", kind="filegroup",
                      name=name, size_bytes=size_gb * GB, current_tier="sata",
                      physical_name=f"S:\\sata\\D\\{name}.ndf", filegroup=name)  # fmt: skip
    return ObjectWindow(info, Usage(WEEK, counters, {}))


def test_an_overloaded_tier_is_named_with_its_load_and_its_plan() -> None:
    """Two 5,000 GB filegroups of 50,000 reads/s each: too large for flash (1,400 GB), one at most
    on fc (7,200 GB) and that one over fc's IOPS, so no placement meets every limit; sata keeps
    the load it has today, which its devices were never planned for."""
    report = advise([on_sata("FG_A", 50_000, 5000), on_sata("FG_B", 50_000, 5000)], POLICY, curve_points=0)
    assert [a.recommended_tier for a in report.objects] == ["sata", "sata"]
    # planned back-end IOPS at 70 % (max_planned_utilisation): flash 8 x 2,500, fc 48 x 180, sata 16 x 80
    # = 14,000 + 6,048 + 896 = 20,944; the reads need 2 x 50,000 (no writes, no RAID factor)
    assert report.notes[:2] == (
        "physical IOPS at least 100,000 (RAID write factors included) > total max_iops 20,944 of all tiers",
        "tier sata carries 100,000 back-end IOPS, more than the 896 planned for its devices: add devices "
        "(see `tierwise size`) or move load elsewhere; placed with no tier more loaded than today",
    )
    # nothing on flash writes: 0 GB of its budget, 0 %
    [budget] = [n for n in report.notes if n.startswith("flash's daily write budget: ")]
    assert budget.startswith("flash's daily write budget: the units placed there write 0 GB of ")
    assert budget.endswith(" a day (0 %)")
