"""checkpoints: the engine's state every few hundred events, where the replay starts

Revision ID: d2e8b3f6a9c1
Revises: f2b8d4a6c9e1
Create Date: 2026-12-01 19:40:00.000000

``checkpoints``: ``(game_id, seq)`` and the state after ``seq`` events in the snapshot's
format, written as a game's snapshot moves past each ``CHECKPOINT_EVERY`` events; the replay
of event N reads the last one at or before N and the events after it.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "d2e8b3f6a9c1"
down_revision = "f2b8d4a6c9e1"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "checkpoints",
        sa.Column(
            "game_id",
            sa.String(24),
            sa.ForeignKey("games.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("state", sa.JSON(), nullable=False),
    )


def downgrade():
    op.drop_table("checkpoints")
