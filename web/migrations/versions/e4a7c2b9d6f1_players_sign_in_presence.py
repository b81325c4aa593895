"""players (an address's defaults and API token), sign-in links, seats' presence

Revision ID: e4a7c2b9d6f1
Revises: 8d4f2b6a1c3e
Create Date: 2026-12-01 15:30:00.000000

``players``: one row per address that signed in by email (its defaults for new seats: language,
zone, mail frequency, night, standing orders; the hash of its API token). ``sign_in_links``: one
row per sign-in link asked for (single use: ``used_at``; the grace of a double click is bound to
``used_by``). ``seats.present_at``: the seat's last look at its game page or its live part (a
seat looking at the page gets no mail of what it sees there). ``ix_seats_email``: the seats of
an address (``/me``).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e4a7c2b9d6f1"
down_revision = "8d4f2b6a1c3e"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "players",
        sa.Column("email", sa.String(length=254), primary_key=True),
        sa.Column("locale", sa.String(length=16), nullable=False, server_default=""),
        sa.Column("timezone", sa.String(length=64), nullable=False, server_default=""),
        sa.Column("notify", sa.String(length=16), nullable=False, server_default=""),
        sa.Column("night", sa.JSON(), nullable=True),
        sa.Column("orders", sa.JSON(), nullable=True),
        sa.Column("api_token_hash", sa.String(length=64), nullable=True, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "sign_in_links",
        sa.Column("id", sa.String(length=32), primary_key=True),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("locale", sa.String(length=16), nullable=False, server_default="en"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("mail_state", sa.String(length=12), nullable=False, server_default="pending"),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("used_by", sa.String(length=64), nullable=True),
    )
    op.create_index("ix_sign_in_links_created", "sign_in_links", ["created_at"])
    with op.batch_alter_table("seats") as batch_op:
        batch_op.add_column(sa.Column("present_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_seats_email", ["email"])


def downgrade():
    with op.batch_alter_table("seats") as batch_op:
        batch_op.drop_index("ix_seats_email")
        batch_op.drop_column("present_at")
    op.drop_index("ix_sign_in_links_created", table_name="sign_in_links")
    op.drop_table("sign_in_links")
    op.drop_table("players")
