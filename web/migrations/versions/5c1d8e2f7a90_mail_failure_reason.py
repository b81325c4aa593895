"""mail: why a notification's mail failed (email_error, email_error_detail)

Revision ID: 5c1d8e2f7a90
Revises: b7c1e5a0d2f4
Create Date: 2026-12-01 09:30:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5c1d8e2f7a90"
down_revision = "b7c1e5a0d2f4"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("email_error", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("email_error_detail", sa.String(length=200), nullable=True))


def downgrade():
    with op.batch_alter_table("notifications", schema=None) as batch_op:
        batch_op.drop_column("email_error_detail")
        batch_op.drop_column("email_error")
