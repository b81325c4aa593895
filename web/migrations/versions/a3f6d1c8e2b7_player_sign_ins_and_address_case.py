"""players.sign_ins (signing out ends every session of the address), addresses without case

Revision ID: a3f6d1c8e2b7
Revises: c4a9e7d2b1f0
Create Date: 2026-12-01 19:30:00.000000

``players.sign_ins``: the address's sign-in generation. A session remembers the generation it
was signed in with and holds only while the row still has it; signing out counts it up, so a
copied cookie stops working too. ``players.email`` is kept in lower case (``addresses.key``:
``Amy@…`` and ``amy@…`` are one player); rows written before are lowered where that makes no
clash. ``ix_seats_email_lower``: the seats of an address whatever the case of its local part.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "a3f6d1c8e2b7"
down_revision = "c4a9e7d2b1f0"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("players") as batch_op:
        batch_op.add_column(sa.Column("sign_ins", sa.Integer(), nullable=False, server_default="0"))
    op.execute(
        "UPDATE players SET email = lower(email) WHERE email <> lower(email)"
        " AND lower(email) NOT IN (SELECT email FROM players)"
    )
    op.create_index("ix_seats_email_lower", "seats", [sa.text("lower(email)")])


def downgrade():
    op.drop_index("ix_seats_email_lower", table_name="seats")
    with op.batch_alter_table("players") as batch_op:
        batch_op.drop_column("sign_ins")
