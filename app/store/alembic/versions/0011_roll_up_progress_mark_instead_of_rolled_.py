"""roll-up progress mark instead of rolled_up

The hourly roll-up no longer marks every interval (an UPDATE of each io_interval row, doubling its
write and WAL volume); it keeps the id of the last interval it added in rollup_progress.

Data: the mark starts at the highest id already rolled up. Intervals below it that were not rolled
up yet (stored by a transaction that committed after a roll-up had passed their id) are added into
their hours here, so that afterwards every interval up to the mark is in the roll-ups exactly once
and every interval above it is not. On SQLite io_interval is rebuilt with AUTOINCREMENT, so the id
of a deleted newest interval is never given out again.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-22 03:08:16.925689
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

import app.store.models

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTERS = ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")


def _table(name: str, *cols: sa.ColumnClause[Any]) -> sa.TableClause:
    return sa.table(name, *cols)


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _roll_up_stragglers(bind: sa.Connection, mark: int) -> None:
    """Add the not-rolled-up intervals below the mark into their hours (as the roll-up did)."""
    iv = _table(
        "io_interval",
        sa.column("id", sa.BigInteger),
        sa.column("object_id", sa.Integer),
        sa.column("end_time", sa.DateTime),
        sa.column("seconds", sa.Float),
        sa.column("extra", sa.JSON),
        sa.column("rolled_up", sa.Boolean),
        *[sa.column(c, sa.BigInteger) for c in COUNTERS],
    )
    hr = _table(
        "hourly_rollup",
        sa.column("object_id", sa.Integer),
        sa.column("hour", sa.DateTime),
        sa.column("intervals", sa.Integer),
        sa.column("seconds", sa.Float),
        sa.column("extra", sa.JSON),
        *[sa.column(c, sa.BigInteger) for c in COUNTERS],
    )
    rows = bind.execute(
        sa.select(
            iv.c.object_id, iv.c.end_time, iv.c.seconds, iv.c.extra, *[iv.c[c] for c in COUNTERS]
        ).where(iv.c.rolled_up.is_(False), iv.c.id <= mark)
    ).all()
    sums: dict[tuple[int, Any], dict[str, Any]] = defaultdict(
        lambda: {"intervals": 0, "seconds": 0.0, "extra": {}, **dict.fromkeys(COUNTERS)}
    )
    for r in rows:
        acc = sums[(r.object_id, r.end_time.replace(minute=0, second=0, microsecond=0))]
        acc["intervals"] += 1
        acc["seconds"] += r.seconds
        for c in COUNTERS:
            acc[c] = _add(acc[c], getattr(r, c))
        for k, v in (r.extra or {}).items():
            acc["extra"][k] = acc["extra"].get(k, 0) + v
    for (object_id, hour), acc in sums.items():
        key = (hr.c.object_id == object_id) & (hr.c.hour == hour)
        old = bind.execute(sa.select(hr).where(key)).first()
        if old is None:
            bind.execute(sa.insert(hr).values(object_id=object_id, hour=hour, **acc))
            continue
        extra = dict(old.extra or {})
        for k, v in acc["extra"].items():
            extra[k] = extra.get(k, 0) + v
        bind.execute(
            sa.update(hr)
            .where(key)
            .values(
                intervals=old.intervals + acc["intervals"],
                seconds=old.seconds + acc["seconds"],
                extra=extra,
                **{c: _add(getattr(old, c), acc[c]) for c in COUNTERS},
            )
        )


def upgrade() -> None:
    progress = op.create_table(
        "rollup_progress",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("last_interval_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", app.store.models.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_rollup_progress")),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":  # no interval is written or rolled up meanwhile
        op.execute("LOCK TABLE io_interval IN SHARE MODE")
    iv = _table("io_interval", sa.column("id", sa.BigInteger), sa.column("rolled_up", sa.Boolean))
    mark = int(bind.scalar(sa.select(sa.func.max(iv.c.id)).where(iv.c.rolled_up.is_(True))) or 0)
    _roll_up_stragglers(bind, mark)
    op.bulk_insert(progress, [{"name": "hourly", "last_interval_id": mark, "updated_at": None}])
    with op.batch_alter_table(
        "io_interval", schema=None, table_kwargs={"sqlite_autoincrement": True}
    ) as batch_op:
        batch_op.drop_index(batch_op.f("ix_io_interval_unrolled"))
        batch_op.drop_column("rolled_up")


def downgrade() -> None:
    bind = op.get_bind()
    progress = _table(
        "rollup_progress", sa.column("name", sa.String), sa.column("last_interval_id", sa.BigInteger)
    )
    mark = int(bind.scalar(sa.select(progress.c.last_interval_id).where(progress.c.name == "hourly")) or 0)
    with op.batch_alter_table("io_interval", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rolled_up", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.create_index(batch_op.f("ix_io_interval_unrolled"), ["rolled_up", "end_time"], unique=False)
    iv = _table("io_interval", sa.column("id", sa.BigInteger), sa.column("rolled_up", sa.Boolean))
    bind.execute(sa.update(iv).where(iv.c.id <= mark).values(rolled_up=True))
    with op.batch_alter_table("io_interval", schema=None) as batch_op:
        batch_op.alter_column("rolled_up", server_default=None)
    op.drop_table("rollup_progress")
