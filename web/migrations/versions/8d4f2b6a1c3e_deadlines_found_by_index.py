"""deadlines and mail found by partial indexes (open deadlines, reminder times, unsettled mail)

Revision ID: 8d4f2b6a1c3e
Revises: 8d4b2a6c1e3f
Create Date: 2026-12-01 12:30:00.000000

The deadline workers claim due deadlines in batches (``due_at`` of the open rows), the sweep
finds reminders by ``remind_at`` (80% of the window, written by the sweep for rows that have
none), mail to re-queue among the ``pending`` rows and lost sends among the ``sending`` ones;
each through a partial index that holds only those rows, so a sweep does not grow with the
deadlines and mail of every game that ever ran. ``ix_deadlines_due`` (state, due_at) held every
row ever made: the open-due index replaces it. ``notifications.queued_at``: when the sweep last
queued a row again, so a backlog is not queued again at every sweep.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "8d4f2b6a1c3e"
down_revision = "8d4b2a6c1e3f"
branch_labels = None
depends_on = None

OPEN = "state = 'open'"
UNSETTLED = ("pending", "sending")  # mail states the sweep looks at (one index each)


def upgrade():
    with op.batch_alter_table("deadlines") as batch_op:
        batch_op.add_column(sa.Column("remind_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.drop_index("ix_deadlines_due")
    op.create_index(
        "ix_deadlines_open_due",
        "deadlines",
        ["due_at"],
        postgresql_where=sa.text(OPEN),
        sqlite_where=sa.text(OPEN),
    )
    op.create_index(
        "ix_deadlines_open_remind",
        "deadlines",
        ["remind_at"],
        postgresql_where=sa.text(f"{OPEN} AND NOT reminded"),
        sqlite_where=sa.text(f"{OPEN} AND reminded = 0"),
    )
    with op.batch_alter_table("notifications") as batch_op:
        batch_op.add_column(sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True))
    for state in UNSETTLED:
        where = sa.text(f"email_state = '{state}'")
        op.create_index(
            f"ix_notifications_{state}",
            "notifications",
            ["id"],
            postgresql_where=where,
            sqlite_where=where,
        )


def downgrade():
    for state in UNSETTLED:
        op.drop_index(f"ix_notifications_{state}", table_name="notifications")
    with op.batch_alter_table("notifications") as batch_op:
        batch_op.drop_column("queued_at")
    op.drop_index("ix_deadlines_open_remind", table_name="deadlines")
    op.drop_index("ix_deadlines_open_due", table_name="deadlines")
    with op.batch_alter_table("deadlines") as batch_op:
        batch_op.create_index("ix_deadlines_due", ["state", "due_at"], unique=False)
        batch_op.drop_column("remind_at")
