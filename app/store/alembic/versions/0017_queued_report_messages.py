"""queued report messages: a delivery may wait, pending, with its message

A scheduled report is claimed as a pending delivery before it is composed, and keeps the message
it will send (the bytes an SMTP server receives) while it is pending: a service stopped while it
retried the SMTP server leaves it queued, and the next start sends it (app/mail/service.py). The
message is dropped once the delivery is sent or has failed. Existing rows are kept as they are.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("delivery") as batch:
        batch.add_column(sa.Column("message", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("delivery") as batch:
        batch.drop_column("message")
