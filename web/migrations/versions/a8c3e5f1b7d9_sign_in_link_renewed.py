"""sign-in links renewed while the mailbox's limit holds new mails back

Revision ID: a8c3e5f1b7d9
Revises: d2e8b3f6a9c1
Create Date: 2026-12-04 17:30:00.000000

``sign_in_links.renewed_at``: when an ask that the mailbox's limit (``RATELIMIT_SIGN_IN_MAILBOX``)
held back last renewed the address's newest link, which then works ``SIGN_IN_LINK_SECONDS``
from that moment. ``ix_sign_in_links_email_lower``: the newest link of an address, whatever the
case of its local part.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "a8c3e5f1b7d9"
down_revision = "d2e8b3f6a9c1"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column(
        "sign_in_links", sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_index(
        "ix_sign_in_links_email_lower", "sign_in_links", [sa.text("lower(email)"), "created_at"]
    )


def downgrade():
    op.drop_index("ix_sign_in_links_email_lower", table_name="sign_in_links")
    op.drop_column("sign_in_links", "renewed_at")
