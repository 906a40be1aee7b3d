"""ingest watermark

One row per target saying whether its data changed since the advice last read it: a counter of
the writes that stored its samples, the counter value the last import wrote, and the value the
last evaluation read. The scheduler advises after an import once the counter has been still for a
quiet period (app/jobs.py).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.store.models

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ingest_watermark",
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("imported_version", sa.BigInteger(), nullable=False),
        sa.Column("changed_at", app.store.models.UTCDateTime(), nullable=False),
        sa.Column("advised_version", sa.BigInteger(), nullable=False),
        sa.Column("advised_at", app.store.models.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["target.id"],
            name=op.f("fk_ingest_watermark_target_id_target"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("target_id", name=op.f("pk_ingest_watermark")),
    )


def downgrade() -> None:
    op.drop_table("ingest_watermark")
