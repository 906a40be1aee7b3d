"""Policy files: the shipped default loads; mistakes are reported with the field's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from policies.loader import DEFAULT_POLICY, PolicyError, load_policy, parse_policy


def test_default_policy_has_three_tiers_with_published_figures() -> None:
    """Today's mid-range array (docs/policies.md, "The shipped figures and where they come from"):
    SSDs, 10K SAS and NL-SAS, under the product's tier names."""
    p = load_policy()
    assert [t.name for t in p.tiers] == ["flash", "fc", "sata"]
    flash, fc, sata = p.tiers
    assert "SSD" in flash.description and "10K rpm SAS" in fc.description and "NL-SAS" in sata.description
    assert "called fc" in fc.description and "called sata" in sata.description
    assert (flash.raid_level, fc.raid_level, sata.raid_level) == (5, 10, 6)
    assert (flash.device_iops, fc.device_iops, sata.device_iops) == (20_000, 140, 75)
    assert (flash.read_latency_ms, fc.read_latency_ms, sata.read_latency_ms) == (0.5, 7.0, 12.5)
    for t in p.tiers:  # the light-load latency is normal for the tier
        assert t.read_latency_band_ms is not None
        assert t.read_latency_band_ms[0] <= t.read_latency_ms <= t.read_latency_band_ms[1], t.name
    # usable capacity from the drives: 8 x 960 GB RAID 5 7+1, 48 x 1.2 TB mirrored, 12 x 16 TB RAID 6 10+2
    assert (
        flash.capacity_gb == 7 * 960 and fc.capacity_gb == 48 * 1200 / 2 and sata.capacity_gb == 10 * 16_000
    )
    assert flash.endurance_dwpd == 1 and flash.write_budget_gb_day == 3840  # 1 x 7,680 GB raw / 2
    assert fc.endurance_dwpd is None and sata.endurance_dwpd is None
    assert flash.transfer_rate_mb_s > fc.transfer_rate_mb_s > sata.transfer_rate_mb_s
    assert not flash.seeks and fc.seeks and sata.seeks
    # money: flash twice a mirrored 10K SAS GB, NL-SAS a tenth of it; the price step flash must
    # clear over fc stays 1.5 ms/s per GB
    assert (flash.cost_per_gb, fc.cost_per_gb, sata.cost_per_gb) == (1.0, 0.5, 0.05)
    weight = p.benefit.price_weight
    assert (flash.cost_per_gb - fc.cost_per_gb) * weight == pytest.approx(1.5)
    assert (fc.cost_per_gb - sata.cost_per_gb) * weight == pytest.approx(1.35)


def test_default_policy_paths_say_what_each_tier_is() -> None:
    p = load_policy()
    loc = {t.name: t.locations for t in p.tiers}
    assert [loc[n].sqlserver_directory for n in ("flash", "fc", "sata")] == [
        "E:\\MSSQL\\FLASH\\",
        "F:\\MSSQL\\SAS\\",
        "S:\\MSSQL\\NLSAS\\",
    ]
    assert [loc[n].db2_storage_group for n in ("flash", "fc", "sata")] == ["SG_FLASH", "SG_SAS", "SG_NLSAS"]
    assert loc["fc"].db2_storage_groups == ["SG_SAS", "IBMSTOGROUP"]  # Db2's default group: the middle tier
    for name, word in (("flash", "flash"), ("fc", "sas"), ("sata", "nlsas")):
        t = loc[name]
        assert t.sqlserver_directory in t.sqlserver_path_prefixes
        assert t.db2_path_prefixes == [f"/db2/{word}/"]
        assert t.db2_paths and all(path.startswith(f"/db2/{word}/") for path in t.db2_paths)


def test_pins_keep_logs_and_tempdb_off_sata() -> None:
    p = load_policy()
    assert p.allowed_tiers("log_file", "sqlserver") == ["flash", "fc"]
    assert p.allowed_tiers("tempdb", "db2") == ["flash", "fc"]
    assert p.allowed_tiers("data_file", "sqlserver") == ["flash", "fc", "sata"]


@pytest.mark.parametrize(
    ("engine", "path", "group", "tier"),
    [
        ("sqlserver", r"E:\MSSQL\FLASH\Sales\hot.ndf", None, "flash"),
        ("sqlserver", r"f:\mssql\sas\Sales\a.ndf", None, "fc"),
        ("sqlserver", "S:/MSSQL/NLSAS/arch.ndf", None, "sata"),
        ("sqlserver", r"F:\MSSQL\SASX\a.ndf", None, None),  # a prefix is a whole directory
        ("sqlserver", r"D:\other\x.mdf", None, None),
        ("db2", None, "sg_nlsas", "sata"),
        ("db2", None, "IBMSTOGROUP", "fc"),
        ("db2", None, "SG_UNKNOWN", None),
    ],
)
def test_current_location_maps_to_tier(
    engine: str, path: str | None, group: str | None, tier: str | None
) -> None:
    assert load_policy().tier_of_location(engine=engine, physical_name=path, storage_group=group) == tier


def _broken(replace: str, by: str) -> str:
    text = DEFAULT_POLICY.read_text()
    assert replace in text
    return text.replace(replace, by, 1)


@pytest.mark.parametrize(
    ("replace", "by", "message"),
    [
        ("device_iops: 140", "device_iops: -5", "tiers[1].device_iops"),
        ("raid_level: 10", "raid_level: 3", "tiers[1].raid_level"),
        ("    forbid: [sata]", "    forbid: [tape]", "pins[0] names unknown tier 'tape'"),
        ("  - name: fc", "  - name: flash", "tier names must be unique: flash"),
        (
            "  cold_max_iops: 5",
            "  cold_max_iops: 5\n  cold_max_iop: 3",
            "classification.cold_max_iop",
        ),
    ],
)
def test_invalid_policy_names_the_field(replace: str, by: str, message: str) -> None:
    with pytest.raises(PolicyError) as err:
        parse_policy(_broken(replace, by), source="mine.yaml")
    assert "mine.yaml" in str(err.value)
    assert message in str(err.value)


def test_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"x.yaml, line 3: not valid YAML"):
        parse_policy("tiers:\n  - name: [unclosed\n", source="x.yaml")
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "nope.yaml")
