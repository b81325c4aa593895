"""Money over time: each seat's money (M) after each closed deal, as a server-rendered SVG
(``templates/partials/money_chart.html``; no script), from the events (``for_game`` reads
only the two types it needs).

Money changes only when a deal closes (R6.4 payouts), so a seat's line has one point at the
start and one after each closed deal. A viewer sees the lines ``view`` shows the money of: its
own always, everyone's with open money (R7.1) or once the game is over; without open money a
line of another seat is never drawn before the end, not even in part (A8).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from imtheboss.engine.events import Event
from imtheboss.web.store import negotiations

WIDTH, HEIGHT = 320, 180  # the SVG's user units; it scales to the page's width
LEFT, RIGHT, TOP, BOTTOM = 34, 12, 10, 26
DASHES = ("", "6 3", "2 3", "8 3 2 3", "12 4", "3 6")  # a line reads without its colour too
MARKS = ("circle", "square", "diamond", "triangle", "circle", "square")
COLOURS = ("#1f5fa8", "#b8431d", "#2c7a3d", "#7a3c8f", "#8a6d12", "#4a4a4a")
RELEVANT = ("game_started", "deal_closed")


@dataclass(frozen=True)
class Line:
    """One seat's line: its points in SVG units, its look, and its last value (M)."""

    seat: int
    name: str
    points: list[tuple[float, float]]
    dash: str
    mark: str
    colour: str
    last: int

    @property
    def path(self) -> str:
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in self.points)


@dataclass(frozen=True)
class Chart:
    """What the template draws: the lines, the y axis's ticks ``(y, M)``, the x axis's ticks
    ``(x, deals closed)`` and the plot's corners."""

    lines: list[Line]
    y_ticks: list[tuple[float, int]]
    x_ticks: list[tuple[float, int]]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def money_steps(events: Iterable[Event]) -> list[list[int]]:
    """Every seat's money at the start and after each closed deal, in order, from the events of
    types ``RELEVANT`` (others are skipped): ``[[M per seat], ...]``."""
    steps: list[list[int]] = []
    for event in events:
        if event.type == "game_started":
            steps = [list(event.data["money"])]
        elif event.type == "deal_closed" and steps:
            money = list(steps[-1])
            for seat, amount in event.data["payments"].items():
                money[int(seat)] += amount
            steps.append(money)
    return steps


def for_game(
    game_id: str, v: dict[str, Any], upto: int | None = None, players: list[str] | None = None
) -> Chart | None:
    """The chart of a game's log (up to event ``upto``; ``None``: all of it), found by the
    events' type index, with the lines ``v`` (the viewer's ``view``) shows the money of, named
    ``players`` (``None``: as ``v`` names the seats)."""
    records = negotiations.records(game_id, upto=upto, types=RELEVANT)
    steps = money_steps(ev for _seq, _at, ev in records)
    names = players if players is not None else [s["name"] for s in v["seats"]]
    return chart(steps, names, shown_seats(v))


def shown_seats(v: dict[str, Any]) -> list[int]:
    """The seats whose money ``view``'s answer ``v`` shows (own, open money, or the end)."""
    return [s["seat"] for s in v["seats"] if s["money"] is not None]


def chart(steps: list[list[int]], players: list[str], seats: list[int]) -> Chart | None:
    """The chart of ``seats``'s money over ``steps`` (``money_steps``); ``None`` when no seat
    may be shown."""
    if not steps or not seats:
        return None
    top_value = _nice(max(max(step[s] for s in seats) for step in steps))
    deals = max(1, len(steps) - 1)

    def x(i: int) -> float:
        return LEFT + (WIDTH - RIGHT - LEFT) * i / deals

    def y(m: int) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - BOTTOM - TOP) * m / top_value

    lines = [
        Line(
            seat=s,
            name=players[s],
            points=[(x(i), y(step[s])) for i, step in enumerate(steps)],
            dash=DASHES[s % len(DASHES)],
            mark=MARKS[s % len(MARKS)],
            colour=COLOURS[s % len(COLOURS)],
            last=steps[-1][s],
        )
        for s in seats
    ]
    y_ticks = [(y(m), m) for m in range(0, top_value + 1, top_value // 4)]
    every = 1 if deals <= 8 else 2
    x_ticks = [(x(i), i) for i in range(0, deals + 1, every)]
    return Chart(lines, y_ticks, x_ticks)


def _nice(value: int) -> int:
    """A round top for the y axis at or above ``value`` (M), divisible by 4."""
    for step in (20, 40, 80, 100, 200, 400, 800, 1000, 2000, 4000):
        if value <= step:
            return step
    return -(-value // 4000) * 4000
