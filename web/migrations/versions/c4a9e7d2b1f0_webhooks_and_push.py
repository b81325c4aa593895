"""webhooks, push subscriptions and their outbox of posts

Revision ID: c4a9e7d2b1f0
Revises: e4a7c2b9d6f1
Create Date: 2026-12-01 15:40:00.000000

``webhooks``: the URLs a game's organiser added (each with its signing secret, language and
zone); ``push_subscriptions``: the phones of a seat (the push service's endpoint and the
browser's keys); ``outbound_posts``: one row per (webhook, event) and per (phone, question),
written with the events and posted by the mail worker, unique by ``dedupe_key``, found by a
partial index of the pending rows.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "c4a9e7d2b1f0"
down_revision = "e4a7c2b9d6f1"
branch_labels = None
depends_on = None

PENDING = "state = 'pending'"


def _id(name: str) -> sa.Column:
    return sa.Column(name, sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True)


def upgrade():
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "game_id", sa.String(24), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("locale", sa.String(16), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_webhooks_game_id", "webhooks", ["game_id"])
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "game_id", sa.String(24), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("seat_index", sa.Integer(), nullable=False),
        sa.Column("endpoint", sa.Text(), nullable=False),
        sa.Column("p256dh", sa.String(120), nullable=False),
        sa.Column("auth", sa.String(40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("game_id", "seat_index", "endpoint"),
    )
    op.create_table(
        "outbound_posts",
        _id("id"),
        sa.Column(
            "game_id", sa.String(24), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "webhook_id",
            sa.Integer(),
            sa.ForeignKey("webhooks.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column(
            "subscription_id",
            sa.Integer(),
            sa.ForeignKey("push_subscriptions.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("dedupe_key", sa.String(200), nullable=False, unique=True),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("tried_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.String(32), nullable=True),
        sa.Column("error_detail", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_outbound_posts_game", "outbound_posts", ["game_id", "id"])
    op.create_index(
        "ix_outbound_posts_pending",
        "outbound_posts",
        ["id"],
        postgresql_where=sa.text(PENDING),
        sqlite_where=sa.text(PENDING),
    )


def downgrade():
    op.drop_table("outbound_posts")
    op.drop_table("push_subscriptions")
    op.drop_table("webhooks")
