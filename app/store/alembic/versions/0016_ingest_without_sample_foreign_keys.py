"""ingest at COPY speed: no foreign keys on sample / io_interval, object kept half full

The two high-volume tables lose their foreign key to object: its check (a `FOR KEY SHARE` probe
of the object row per inserted row) took ~30 % of each ingest statement (bench/collectors.py).
What the key guaranteed is kept: the ingest writes samples and intervals only for objects it
read or created in the same transaction, holding their targets (`FOR KEY SHARE`, so a target
cannot be deleted under it), and a trigger on object deletes an object's samples and intervals,
as ON DELETE CASCADE did (a target's delete cascades to its objects, which fires it).

On PostgreSQL the object table gets fillfactor 50: every poll moves each object's `last_seen`,
and with free room on the page that update is HOT (no index entry written for it). Existing
pages are full; each row moves to a half-full page at its first update, no rewrite is needed.

Data: every row is kept. On SQLite both tables are rebuilt (batch mode) with their rows and
io_interval keeps AUTOINCREMENT and its sequence (an interval id is never given out twice).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("sample", "io_interval")

_PG_TRIGGER = """
CREATE OR REPLACE FUNCTION tierwise_object_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM sample WHERE object_id IN (SELECT id FROM gone);
  DELETE FROM io_interval WHERE object_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER object_deleted AFTER DELETE ON object REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION tierwise_object_deleted();
"""

_SQLITE_TRIGGER = """
CREATE TRIGGER object_deleted AFTER DELETE ON object FOR EACH ROW BEGIN
  DELETE FROM sample WHERE object_id = OLD.id;
  DELETE FROM io_interval WHERE object_id = OLD.id;
END
"""


def _fk(table: str) -> str:
    return f"fk_{table}_object_id_object"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for table in _TABLES:  # IF EXISTS: a store partitioned by hand may have dropped it
            op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {_fk(table)}")
        op.execute("ALTER TABLE object SET (fillfactor = 50)")
        op.execute(_PG_TRIGGER)
        return
    seq = bind.scalar(sa.text("SELECT seq FROM sqlite_sequence WHERE name = 'io_interval'"))
    with op.batch_alter_table("sample", schema=None) as batch_op:
        batch_op.drop_constraint(_fk("sample"), type_="foreignkey")
    with op.batch_alter_table(
        "io_interval", schema=None, table_kwargs={"sqlite_autoincrement": True}
    ) as batch_op:
        batch_op.drop_constraint(_fk("io_interval"), type_="foreignkey")
    if seq is not None:  # the rebuilt table's sequence restarts at its highest id; keep the old one
        bind.execute(
            sa.text("UPDATE sqlite_sequence SET seq = max(seq, :seq) WHERE name = 'io_interval'"),
            {"seq": seq},
        )
    op.execute(_SQLITE_TRIGGER)


def downgrade() -> None:
    bind = op.get_bind()
    postgres = bind.dialect.name == "postgresql"
    if postgres:
        op.execute("DROP TRIGGER IF EXISTS object_deleted ON object")
        op.execute("DROP FUNCTION IF EXISTS tierwise_object_deleted()")
        op.execute("ALTER TABLE object RESET (fillfactor)")
    else:
        op.execute("DROP TRIGGER IF EXISTS object_deleted")
    for table in _TABLES:  # a key cannot be added over orphans (there should be none)
        op.execute(f"DELETE FROM {table} WHERE object_id NOT IN (SELECT id FROM object)")
    for table in _TABLES:
        kwargs = {"table_kwargs": {"sqlite_autoincrement": True}} if table == "io_interval" else {}
        with op.batch_alter_table(table, schema=None, **kwargs) as batch_op:  # type: ignore[arg-type]
            batch_op.create_foreign_key(_fk(table), "object", ["object_id"], ["id"], ondelete="CASCADE")
