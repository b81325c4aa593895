"""What one page of the story (``/g/<gid>/story``) reads: only its own chapters' events.

A game's chapters are known without reading its events: each negotiation is one (its range of
events, ``negotiations``), and so is each run of events between two (the turns), the first one
from event 1 (the start). A page is ``STORY_PAGE`` chapters counted from the newest
(``page_of``); it reads the events of its chapters' range but chat, and of the chat only the
last ``CHAT_SHOWN`` messages of each chapter (the others are counted: the page says how many
are left out and links to the history, which has them all). So a page costs the same early and
late in a long game, whatever the table said.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TypeVar

from imtheboss.web.models import EventRecord, db
from imtheboss.web.say import chapters
from imtheboss.web.store import negotiations
from sqlalchemy import select

STORY_PAGE = 8  # chapters a page: a negotiation, or the turns between two
CHAT_SHOWN = 10  # chat messages a chapter shows, the last ones
T = TypeVar("T")


@dataclass(frozen=True)
class Span:
    """One chapter's events, ``first..last`` (sequence numbers); ``number``: its negotiation's
    (``None``: turns)."""

    first: int
    last: int
    number: int | None


@dataclass
class StoryPage:
    """One page: its story (``chapters.Story`` of its chapters, the start on the oldest page,
    the end on the newest), the page (1: the newest), how many pages, and the chat left out:
    ``{seq of the first message shown of a chapter: how many before it are not shown}``."""

    told: chapters.Story
    page: int
    pages: int
    left_out: dict[int, int]


def spans(game_id: str, last_seq: int) -> list[Span]:
    """The game's chapters, oldest first, from its negotiations' ranges (a running one reaches
    to ``last_seq``)."""
    out: list[Span] = []
    at = 1
    for row in negotiations.rows_of(game_id):
        if row.first_seq > at:
            out.append(Span(at, row.first_seq - 1, None))
        end = row.last_seq if row.last_seq is not None else last_seq
        out.append(Span(row.first_seq, end, row.number))
        at = end + 1
    if at <= last_seq:
        out.append(Span(at, last_seq, None))
    return out


def page_of(chapters: list[T], asked: str) -> tuple[list[T], int, int]:
    """Page ``asked`` of ``chapters`` (oldest first), ``STORY_PAGE`` a page counted from the
    newest: ``(its chapters oldest first, the page, the number of pages)``; a page out of range
    or not a number is the nearest one (1 for text)."""
    pages = max(1, math.ceil(len(chapters) / STORY_PAGE))
    try:
        page = min(max(1, int(asked)), pages)
    except ValueError:
        page = 1
    end = len(chapters) - (page - 1) * STORY_PAGE
    return chapters[max(0, end - STORY_PAGE) : end], page, pages


def read_page(game_id: str, last_seq: int, seat: int | None, asked: str) -> StoryPage:
    """Page ``asked`` of the game's story as ``seat`` may read it (``chapters.story``: A8)."""
    shown, page, pages = page_of(spans(game_id, last_seq), asked)
    if not shown:
        return StoryPage(chapters.Story(), page, pages, {})
    lo, hi = shown[0].first, shown[-1].last
    chat, left_out = _chat(game_id, shown)
    rest = negotiations.records(game_id, after=lo - 1, upto=hi, without=("chat",))
    merged = heapq.merge(rest, chat, key=lambda record: record[0])
    first = next((s.number for s in shown if s.number is not None), 1)
    return StoryPage(chapters.story(merged, seat, first_number=first), page, pages, left_out)


def _chat(game_id: str, shown: list[Span]) -> tuple[list[negotiations.Record], dict[int, int]]:
    """The last ``CHAT_SHOWN`` chat messages of each of the chapters ``shown``, and how many
    each leaves out (by the seq of its first message shown)."""
    lo, hi = shown[0].first, shown[-1].last
    seqs = db.session.execute(
        select(EventRecord.seq).where(
            EventRecord.game_id == game_id,
            EventRecord.type == "chat",
            EventRecord.seq >= lo,
            EventRecord.seq <= hi,
        )
    ).scalars()
    firsts = [s.first for s in shown]
    by_chapter: dict[int, list[int]] = defaultdict(list)
    for seq in seqs:
        by_chapter[bisect.bisect_right(firsts, seq) - 1].append(seq)
    kept: list[int] = []
    left_out: dict[int, int] = {}
    for found in by_chapter.values():
        found.sort()
        kept += found[-CHAT_SHOWN:]
        if len(found) > CHAT_SHOWN:
            left_out[found[-CHAT_SHOWN]] = len(found) - CHAT_SHOWN
    return (negotiations.records(game_id, seqs=sorted(kept)) if kept else []), left_out
