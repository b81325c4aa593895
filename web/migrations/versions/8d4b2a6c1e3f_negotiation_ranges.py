"""negotiations: each negotiation's range of events; events found by type

Revision ID: 8d4b2a6c1e3f
Revises: 5c3e1f7a9b2d
Create Date: 2026-12-01 12:00:00.000000

The deals list, a negotiation's page and the game page's chat panel read a negotiation's row
and the events of its range instead of splitting the whole log. The rows of existing games are
filled here from their logs, as the pages split them: a negotiation runs from its
``deal_opened`` to its ``deal_closed`` or ``deal_failed``, plus the end roll and the game's end
right after a closing (events about a seat between them are no part of it); a running one has no
``last_seq``. The rule is written out here rather than imported, so this migration does not
change when the code does.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "8d4b2a6c1e3f"
down_revision = "5c3e1f7a9b2d"
branch_labels = None
depends_on = None

SEAT_EVENTS = ("seat_away", "orders_set", "night_set", "proxy_scheduled")
READ = ("deal_opened", "deal_closed", "deal_failed", "die_rolled", "game_ended", *SEAT_EVENTS)
END = {"deal_closed": "closed", "deal_failed": "failed"}

events = sa.table(
    "events",
    sa.column("game_id", sa.String),
    sa.column("seq", sa.Integer),
    sa.column("type", sa.String),
    sa.column("body", sa.JSON),
    sa.column("created_at", sa.DateTime(timezone=True)),
)


def upgrade():
    negotiations = op.create_table(
        "negotiations",
        sa.Column("game_id", sa.String(length=24), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=True),
        sa.Column("end_seq", sa.Integer(), nullable=True),
        sa.Column("space", sa.Integer(), nullable=False),
        sa.Column("boss", sa.Integer(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_id", "number"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_game_type", ["game_id", "type", "seq"], unique=False)
    rows = _backfill(op.get_bind())
    if rows:
        op.bulk_insert(negotiations, rows)


def _backfill(conn) -> list[dict]:
    """The rows of every game's negotiations, from the events that start, end or follow one."""
    found = conn.execute(
        sa.select(events.c.game_id, events.c.seq, events.c.type, events.c.body, events.c.created_at)
        .where(events.c.type.in_(READ))
        .order_by(events.c.game_id, events.c.seq)
    )
    rows: list[dict] = []
    game, current, previous = None, None, 0
    for game_id, seq, kind, body, at in found:
        if game_id != game:
            game, current, previous, number = game_id, None, 0, 0
        follows = seq == previous + 1  # no other event between this one and the previous
        previous = seq
        if kind == "deal_opened":
            number += 1
            current = {
                "game_id": game_id,
                "number": number,
                "first_seq": seq,
                "last_seq": None,
                "end_seq": None,
                "space": body["space"],
                "boss": body["boss"],
                "opened_at": at,
                "outcome": "running",
            }
            rows.append(current)
        elif current is None or kind in SEAT_EVENTS:
            continue
        elif current["outcome"] == "running" and kind in END:
            current.update(outcome=END[kind], end_seq=seq, last_seq=seq)
        elif current["outcome"] != "running" and follows and _tail(kind, body):
            current["last_seq"] = seq
        elif current["outcome"] != "running":
            current = None  # the negotiation is over: nothing later belongs to it
    return rows


def _tail(kind: str, body: dict) -> bool:
    return kind == "game_ended" or (kind == "die_rolled" and body.get("purpose") == "end")


def downgrade():
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_game_type")
    op.drop_table("negotiations")
