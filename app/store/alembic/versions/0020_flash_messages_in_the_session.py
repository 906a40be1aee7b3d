"""flash messages in the session

A page's confirmation after an action ("3 recommendations approved") was carried in the URL the
action redirected to (?message=...), so anyone could send a link showing any text on a signed-in
page. It now waits in the login's own row (web_session.flash) and is shown once by the next page
(app/http/flash.py). Existing rows get no message.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("web_session") as batch:
        batch.add_column(sa.Column("flash", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("web_session") as batch:
        batch.drop_column("flash")
