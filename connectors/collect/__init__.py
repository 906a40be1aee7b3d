"""The collection scripts DBAs run themselves when tierwise may not connect (docs/import-files.md).

This is a package only so that the .sql and .sh files ship with tierwise (package data); the
scripts are read by people and by tests, never imported. Their output is read by connectors/files.py.
"""

from __future__ import annotations

from pathlib import Path

COLLECT_DIR = Path(__file__).resolve().parent
SCRIPTS: tuple[str, ...] = (
    "sqlserver_file_stats.sql",
    "sqlserver_partitions.sql",
    "sqlserver_buffer_manager.sql",
    "db2_collect.sh",
    "db2_collect.sql",
)
