"""The shipped policy with the import fixtures' locations assigned to tiers, as an admin would map
them on the Policy page: objects on locations no tier knows are left out of the advice."""

from __future__ import annotations

from pathlib import Path

import yaml

from policies.loader import load_policy
from policies.model import Policy

ROOT = Path(__file__).parents[1]

# The shipped policy as it was before #28's modern figures, frozen (its header says why): the tests
# whose expectations are arithmetic done by hand on those tier figures load it, not the shipped
# policy, so that a change of the shipped figures cannot quietly move their expectations.
REFERENCE_POLICY = Path(__file__).with_name("reference-policy.yaml")


def reference_policy() -> Policy:
    """The frozen reference policy (tests/reference-policy.yaml), validated."""
    return load_policy(REFERENCE_POLICY)


# tests/fixtures/import/*.csv: where their files, storage groups and DB2 paths are
FIXTURE_LOCATIONS: dict[str, dict[str, list[str]]] = {
    "flash": {"sqlserver_path_prefixes": ["T:\\tempdb\\"], "db2_storage_groups": ["SG_HOT"]},
    "fc": {
        "sqlserver_path_prefixes": [
            "E:\\data\\", "L:\\log\\", "D:\\MSSQL\\DATA\\", "F:\\OLTP\\", "G:\\OLTP\\",
            "C:\\Program Files\\Microsoft SQL Server\\",
        ],
        "db2_path_prefixes": ["/db2/log/", "/db2/data1/"],
    },
    "sata": {"db2_storage_groups": ["SG_COLD"]},
}  # fmt: skip


def mapped_policy(
    path: Path,
    locations: dict[str, dict[str, list[str]]] | None = None,
    min_saving_ms_per_io: float | None = None,
) -> Path:
    """Write the mapped policy to `path` and return it (`locations`: another mapping, per tier)."""
    doc = yaml.safe_load((ROOT / "policies" / "default.yaml").read_text(encoding="utf-8"))
    if min_saving_ms_per_io is not None:
        doc["benefit"]["min_saving_ms_per_io"] = min_saving_ms_per_io
    for tier in doc["tiers"]:
        for key, values in (
            (FIXTURE_LOCATIONS if locations is None else locations).get(tier["name"], {}).items()
        ):
            tier["locations"].setdefault(key, [])
            tier["locations"][key] = [*tier["locations"][key], *values]
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


# both DB2 storage groups on sata, as test_db2_from_fresh_advice has them: the busy partitions move up
DB2_ON_SATA = {
    "flash": {"sqlserver_path_prefixes": ["T:\\tempdb\\"]},
    "fc": FIXTURE_LOCATIONS["fc"],
    "sata": {"db2_storage_groups": ["SG_HOT", "SG_COLD"]},
}
