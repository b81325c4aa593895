"""reply claims: a reply by mail taken in once per (game, seat, Message-ID)

Revision ID: f2b8d4a6c9e1
Revises: a3f6d1c8e2b7
Create Date: 2026-12-01 19:30:00.000000

``reply_claims``: written before a reply by mail is acted on; its unique constraint makes one
of two deliveries of the same mail at the same moment act and be answered, the other nothing.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "f2b8d4a6c9e1"
down_revision = "a3f6d1c8e2b7"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "reply_claims",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column(
            "game_id", sa.String(24), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("seat_index", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("game_id", "seat_index", "idempotency_key", name="uq_reply_claims_key"),
    )


def downgrade():
    op.drop_table("reply_claims")
