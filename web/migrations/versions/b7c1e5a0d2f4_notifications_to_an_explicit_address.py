"""notifications to an explicit address (the organiser, a seat's old address)

Revision ID: b7c1e5a0d2f4
Revises: 649aab4d65a9
Create Date: 2026-12-01 10:00:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "b7c1e5a0d2f4"
down_revision = "649aab4d65a9"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("to_email", sa.String(length=254), nullable=True))


def downgrade():
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.drop_column("to_email")
