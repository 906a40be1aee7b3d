"""Policy files: the shipped default loads; mistakes are reported with the field's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from policies.loader import DEFAULT_POLICY, PolicyError, load_policy, parse_policy


def test_default_policy_has_three_tiers_with_published_figures() -> None:
    p = load_policy()
    assert [t.name for t in p.tiers] == ["flash", "fc", "sata"]
    fc = p.tier("fc")
    assert fc.device_iops == 180 and fc.raid_factor == 2
    assert p.tier("sata").device_iops == 80 and p.tier("sata").raid_factor == 6
    assert 2500 <= p.tier("flash").device_iops <= 2900
    assert p.tier("flash").raid_factor == 4


def test_pins_keep_logs_and_tempdb_off_sata() -> None:
    p = load_policy()
    assert p.allowed_tiers("log_file", "sqlserver") == ["flash", "fc"]
    assert p.allowed_tiers("tempdb", "db2") == ["flash", "fc"]
    assert p.allowed_tiers("data_file", "sqlserver") == ["flash", "fc", "sata"]


@pytest.mark.parametrize(
    ("engine", "path", "group", "tier"),
    [
        ("sqlserver", r"E:\flash\Sales\hot.ndf", None, "flash"),
        ("sqlserver", r"f:\FC\Sales\a.ndf", None, "fc"),
        ("sqlserver", "S:/sata/arch.ndf", None, "sata"),
        ("sqlserver", r"D:\other\x.mdf", None, None),
        ("db2", None, "sg_sata", "sata"),
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
        ("device_iops: 180", "device_iops: -5", "tiers[1].device_iops"),
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
