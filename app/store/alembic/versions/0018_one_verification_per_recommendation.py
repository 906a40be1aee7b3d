"""one verification per recommendation

A recommendation is executed once (executed is a final status), so it has at most one
verification; a unique constraint on verification.recommendation_id makes the store say so, under
the compare-and-set of the status change (app/store/recommendations.change_status). Rows without
a recommendation (relocations tierwise saw by itself) are not constrained (NULLs are distinct).

Data: parallel "executed" calls of earlier versions could create several verifications for one
move; the first (lowest id) is kept and the later duplicates are deleted, since they counted the
same move again in the track record.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 12:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "DELETE FROM verification WHERE recommendation_id IS NOT NULL AND id > ("
        "SELECT MIN(kept.id) FROM verification AS kept "
        "WHERE kept.recommendation_id = verification.recommendation_id)"
    )
    with op.batch_alter_table("verification") as batch:
        batch.create_unique_constraint(op.f("uq_verification_recommendation_id"), ["recommendation_id"])


def downgrade() -> None:
    with op.batch_alter_table("verification") as batch:
        batch.drop_constraint(op.f("uq_verification_recommendation_id"), type_="unique")
