"""withhold target errors recorded before secrets were masked by structure

Data only. A live target's last error is a driver's message about its connection string. Versions
before this one masked it by keyword (PWD=, Password=, UID=) only, so a message could keep the
value of another secret key (KeyStoreSecret, TrustStorePassword, SSLClientKeystoreDBPassword,
any key off the allow-list: docs/security.md) in clear in this column, and show it to viewers.
The key that would tell the secret values apart is not available here, so each such message is
replaced by a note; the target's next failed poll records its own message, masked by value. The
failure count, the times and the back-off are kept, so the target still shows as failing.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTE = (
    "(the error recorded by an earlier version was withheld: it may have held a secret of the "
    "connection string; the next failed poll records its own)"
)


def upgrade() -> None:
    op.get_bind().execute(
        sa.text("UPDATE target SET last_error = :note WHERE last_error IS NOT NULL AND source = 'live'"),
        {"note": NOTE},
    )


def downgrade() -> None:
    """Nothing to restore: the withheld messages are gone by design."""
