"""commands: idempotency keys scoped by seat (the server's keys in a scope of their own)

Revision ID: 5c3e1f7a9b2d
Revises: 5c1d8e2f7a90
Create Date: 2026-12-01 09:00:00.000000

A command's key was unique per game, so a seat could use up the key the scheduler would use
(``timeout:<window>``) or another seat's. ``scope`` is the seat index, or -1 for the server's
own commands (``seat`` is NULL for those; NULLs are distinct in a unique constraint, so ``seat``
itself cannot carry the constraint). Existing rows keep their keys in the scope of their seat.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "5c3e1f7a9b2d"
down_revision = "5c1d8e2f7a90"
branch_labels = None
depends_on = None

SERVER_SCOPE = -1
NEW = "uq_commands_game_scope_key"
# SQLite reflects the first schema's unique constraint without a name; batch mode names it so.
NAMING = {"uq": "uq_%(table_name)s_%(column_0_N_name)s"}


def _unique_named(columns: list[str]) -> str:
    """The name of the ``commands`` unique constraint on ``columns`` (PostgreSQL gave it one;
    on SQLite, the name ``NAMING`` gives it)."""
    for constraint in sa.inspect(op.get_bind()).get_unique_constraints("commands"):
        if constraint["column_names"] == columns and constraint["name"]:
            return constraint["name"]
    return "uq_commands_" + "_".join(columns)


def upgrade():
    with op.batch_alter_table("commands", naming_convention=NAMING) as batch_op:
        batch_op.add_column(sa.Column("scope", sa.Integer(), nullable=True))
    op.execute(f"UPDATE commands SET scope = COALESCE(seat, {SERVER_SCOPE})")
    old = _unique_named(["game_id", "idempotency_key"])
    with op.batch_alter_table("commands", naming_convention=NAMING) as batch_op:
        batch_op.alter_column("scope", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_constraint(old, type_="unique")
        batch_op.create_unique_constraint(NEW, ["game_id", "scope", "idempotency_key"])


def downgrade():
    # Fails if two scopes of one game used the same key since the upgrade (the old schema
    # cannot hold both).
    with op.batch_alter_table("commands", naming_convention=NAMING) as batch_op:
        batch_op.drop_constraint(NEW, type_="unique")
        batch_op.drop_column("scope")
        batch_op.create_unique_constraint(
            "commands_game_id_idempotency_key_key", ["game_id", "idempotency_key"]
        )
