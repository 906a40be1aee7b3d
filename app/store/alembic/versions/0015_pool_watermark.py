"""pool watermark: evaluation per storage pool

One row per storage pool: the request counter that makes it due, what its last evaluation read
(targets' data versions, the policy), and the lease a worker holds while it evaluates the pool.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 04:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.store.models import UTCDateTime

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pool_watermark",
        sa.Column("pool", sa.String(length=200), nullable=False),
        sa.Column("requested", sa.BigInteger(), nullable=False),
        sa.Column("done", sa.BigInteger(), nullable=False),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("versions", sa.JSON(), nullable=False),
        sa.Column("policy_key", sa.String(length=64), nullable=False),
        sa.Column("requested_at", UTCDateTime(), nullable=True),
        sa.Column("advised_at", UTCDateTime(), nullable=True),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_until", UTCDateTime(), nullable=True),
        sa.Column("retry_at", UTCDateTime(), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("failed_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("pool"),
    )


def downgrade() -> None:
    op.drop_table("pool_watermark")
