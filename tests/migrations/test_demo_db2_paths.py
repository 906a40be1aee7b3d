"""Every DB2 script the demo approves passes its own storage-path checks against the demo fleet's
storage groups (issue #30, N13): the shipped policy plans each tier's storage group on its
`db2_paths`, and the simulated Db2 keeps that group's table spaces on exactly those storage paths
(automatic storage: a container on each path), so no approved script stops at "SG_... exists on
other paths". The check the script runs (migrations/db2_frame.py): a group of that name, if it
exists, must have every planned path (ADMIN_GET_STORAGE_PATHS, trailing separators ignored).
"""

from __future__ import annotations

import re
from collections import defaultdict

from sqlalchemy import select

from app.store.db import Store
from app.store.models import DbObject
from tests.migrations.test_db2_session_rules import demo_approved  # noqa: F401 - the shared demo fixture

PLANNED = re.compile(r"storage group (\S+), if it exists already, has every planned path \(([^;]+);")
AUTOMATIC = re.compile(r"^(.*?)/db2inst1/NODE\d{4}/")  # <storage path>/<instance>/NODE0000/<db>/T.../C...


def storage_groups(url: str) -> dict[str, set[str]]:
    """Each storage group of the demo's Db2 and its storage paths, as ADMIN_GET_STORAGE_PATHS would
    list them: the storage path of every container of its table spaces."""
    store = Store(url)
    try:
        with store.session() as s:
            spaces = dict(
                s.execute(
                    select(DbObject.tablespace, DbObject.storage_group).where(
                        DbObject.engine == "db2", DbObject.kind.in_(("tablespace", "tempdb"))
                    )
                ).all()
            )
            containers = s.execute(
                select(DbObject.tablespace, DbObject.physical_name).where(DbObject.kind == "container")
            ).all()
    finally:
        store.dispose()
    groups: dict[str, set[str]] = defaultdict(set)
    for space, path in containers:
        m = AUTOMATIC.match(path or "")
        assert m, f"{space}: container {path} is not under an automatic storage path"
        groups[spaces[space]].add(m.group(1).rstrip("/"))
    return dict(groups)


def planned(text: str) -> dict[str, set[str]]:
    """Each storage group a script checks and the paths it plans for it."""
    return {g: {p.strip().rstrip("/") for p in paths.split(",")} for g, paths in PLANNED.findall(text)}


def test_every_script_the_demo_approves_passes_its_storage_path_checks(
    demo_approved: tuple[str, dict[str, str]],  # noqa: F811
) -> None:
    url, scripts = demo_approved
    existing = storage_groups(url)
    assert existing, "the demo's Db2 has table spaces in storage groups"
    checked_existing = 0
    for name, text in scripts.items():
        for group, paths in planned(text).items():
            if group in existing:
                checked_existing += 1
                assert paths <= existing[group], (
                    f"{name}: plans {group} on {sorted(paths)}, the demo's group is on {sorted(existing[group])}: "
                    "the script would stop at 'exists on other paths'"
                )
    # not vacuous: some approved script plans a group the demo already has
    assert checked_existing > 0, (sorted(existing), [planned(t) for t in scripts.values()])


def test_the_check_catches_a_group_on_other_paths() -> None:
    text = "storage group SG_SAS, if it exists already, has every planned path (/db2/sas/data1, /db2/sas/data2; ADMIN"
    assert planned(text) == {"SG_SAS": {"/db2/sas/data1", "/db2/sas/data2"}}
    assert not planned(text)["SG_SAS"] <= {"/db2data/fc"}  # the demo as issue #30 found it
