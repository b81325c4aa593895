"""Concurrency on PostgreSQL: 20 threads, each with its own test client
(and so its own app context and database session), released together by a barrier, submit
conflicting commands to one game through the JSON API: several ``stop``s on one pending card
and repeated idempotency keys. Exactly one stop is accepted, every key appends at most once (the
repeats answer ``duplicate``), the sequence numbers run 1..N without gaps, and nothing is 5xx."""

from __future__ import annotations

import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.models import CommandRecord, EventRecord, db
from sqlalchemy import func, select
from support.api_client import NAMES, Api, find_stop_plan

THREADS = 20


def _setup(app, client) -> tuple[str, list[str], Any, str]:
    """A 6-seat game with a card waiting out its stop window that at least 4 seats can stop."""
    plan = find_stop_plan(need=4)
    with app.app_context():
        players = [(n, f"{n.lower()}@example.org") for n in NAMES]
        created = create_game("race", players, seed=plan.seed)
    api = Api(client, created.game_id)
    tokens = created.seat_tokens
    for key, cmd in (
        ("marker", {"do": "place_marker", "space": plan.space}),
        ("open", {"do": "open_deal"}),
    ):
        assert api.send(tokens[plan.boss], cmd, key).status_code == 201
    played = api.send(tokens[plan.player], plan.card_command, "card")
    assert played.status_code == 201, played.get_json()
    (window,) = [e["window"] for e in played.get_json()["events"] if e["type"] == "card_pending"]
    return created.game_id, tokens, plan, window


def _jobs(plan, window: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(seat, key, command) for the 20 threads: each possible stopper sends its stop twice
    with one key and once more with another key and no window named; the other seats send
    ``allow`` twice with one key; chat messages sent twice with one key fill up to 20."""
    jobs: list[tuple[int, str, dict[str, Any]]] = []
    for seat in plan.stoppers:
        stop = {"do": "stop", "window": window}
        jobs += [(seat, f"stop-{seat}", stop), (seat, f"stop-{seat}", stop)]
        jobs.append((seat, f"stop-{seat}-bare", {"do": "stop"}))
    others = [s for s in range(6) if s != plan.player and s not in plan.stoppers]
    for seat in others:
        allow = {"do": "allow", "window": window}
        jobs += [(seat, f"allow-{seat}", allow), (seat, f"allow-{seat}", allow)]
    seat = 0
    while len(jobs) < THREADS:
        key = f"chat-{len(jobs)}"
        chat = {"do": "chat", "text": f"message {len(jobs)}"}
        jobs += [(seat, key, chat), (seat, key, chat)][: THREADS - len(jobs)]
        seat = (seat + 1) % 6
    assert len(jobs) == THREADS
    return jobs


@pytest.mark.parametrize("round_", range(3))
def test_conflicting_commands_from_20_threads(app, client, round_) -> None:
    gid, tokens, plan, window = _setup(app, client)
    with app.app_context():
        seq_before = get_game(gid).last_seq
        commands_before = db.session.execute(
            select(func.count()).select_from(CommandRecord)
        ).scalar_one()
    jobs = _jobs(plan, window)
    barrier = threading.Barrier(THREADS)

    def run(job: tuple[int, str, dict[str, Any]]) -> tuple[int, dict[str, Any]]:
        seat, key, cmd = job
        own = Api(app.test_client(), gid)  # the fixture's client is not thread-safe
        barrier.wait(timeout=60)
        response = own.send(tokens[seat], cmd, key)
        return response.status_code, response.get_json()

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        answers = list(pool.map(run, jobs))

    statuses = [status for status, _ in answers]
    assert all(s in (200, 201, 409) for s in statuses), statuses  # no 5xx, nothing unexpected
    by_key: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for (_, key, _), answer in zip(jobs, answers, strict=True):
        by_key[key].append(answer)

    # Every key appends at most once; its repeats are duplicates with the same result (A7).
    for key, results in by_key.items():
        accepted = [body for status, body in results if status == 201]
        assert len(accepted) <= 1, key
        repeats = [body for status, body in results if status == 200]
        assert all(r["duplicate"] is True for r in repeats)
        if accepted:
            assert all(r["events"] == accepted[0]["events"] for r in repeats)
            assert len(accepted) + len(repeats) == len(results), key
        else:
            assert not repeats, key
        if key.startswith("chat-"):
            assert len(accepted) == 1, key

    # Exactly one stop wins; the others find the window gone (A7) or nothing to stop (R5.6).
    stop_wins = [
        body for key, rs in by_key.items() if key.startswith("stop-") for s, body in rs if s == 201
    ]
    assert len(stop_wins) == 1
    assert [e["type"] for e in stop_wins[0]["events"]] == ["card_stopped"]
    codes = {body["error"]["code"] for status, body in answers if status == 409}
    assert codes <= {"window_closed", "nothing_to_stop"}, codes
    for key, results in by_key.items():
        if key.startswith("allow-"):
            assert {s for s, _ in results} <= {200, 201, 409}
            refused = [b["error"]["code"] for s, b in results if s == 409]
            assert set(refused) <= {"window_closed"}

    # The log: 1..N without gaps or duplicates; one command row per accepted command.
    accepted_events = [e for status, body in answers if status == 201 for e in body["events"]]
    with app.app_context():
        seqs = list(
            db.session.execute(
                select(EventRecord.seq).where(EventRecord.game_id == gid).order_by(EventRecord.seq)
            ).scalars()
        )
        game = get_game(gid)
        stored_types = list(
            db.session.execute(
                select(EventRecord.type).where(
                    EventRecord.game_id == gid, EventRecord.type == "card_stopped"
                )
            ).scalars()
        )
        commands_after = db.session.execute(
            select(func.count()).select_from(CommandRecord)
        ).scalar_one()
    assert seqs == list(range(1, game.last_seq + 1))
    assert game.last_seq == seq_before + len(accepted_events)
    assert sorted(e["seq"] for e in accepted_events) == list(range(seq_before + 1, len(seqs) + 1))
    assert stored_types == ["card_stopped"]
    assert commands_after - commands_before == statuses.count(201)
