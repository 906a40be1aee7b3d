"""server-side sessions

Web logins move from a signed cookie that carried the user and role (valid for its whole lifetime,
logout or not) to a row per login: the cookie carries only a random id, whose SHA-256 is kept here.
Logout, a password change, a role change and deleting the user delete rows, which ends those logins.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import app.store.models

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("id_sha256", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("role_at_login", sa.String(length=20), nullable=False),
        sa.Column("csrf", sa.String(length=64), nullable=False),
        sa.Column("created_at", app.store.models.UTCDateTime(), nullable=False),
        sa.Column("last_seen_at", app.store.models.UTCDateTime(), nullable=False),
        sa.Column("expires_at", app.store.models.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["app_user.id"], name=op.f("fk_web_session_user_id_app_user"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_session")),
        sa.UniqueConstraint("id_sha256", name=op.f("uq_web_session_id_sha256")),
    )
    with op.batch_alter_table("web_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_web_session_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_web_session_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("web_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_web_session_user_id"))
        batch_op.drop_index(batch_op.f("ix_web_session_expires_at"))
    op.drop_table("web_session")
