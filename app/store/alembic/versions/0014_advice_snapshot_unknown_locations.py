"""advice snapshot: unknown locations

Per target, the path prefixes (directories) and DB2 storage groups that match no tier of the
object's storage pool, with their objects, GB and I/O, as the last advice run found them: the
Targets and Policy pages list them and offer the mapping to a pool's tier.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("advice_snapshot", schema=None) as batch_op:
        batch_op.add_column(sa.Column("unknown_locations", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("advice_snapshot", schema=None) as batch_op:
        batch_op.drop_column("unknown_locations")
