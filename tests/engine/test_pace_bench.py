"""The pace benchmark (bench/pace.py) runs as a command and prints its figures as JSON; its
games end. Speed and pace are figures of the benchmark, not assertions here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PACE = Path(__file__).resolve().parents[2] / "bench" / "pace.py"
WINDOW_KINDS = {"turn", "stop", "last_call", "negotiation", "discard"}
MAKERS = ("seat", "order", "proxy", "timeout")


def pace(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PACE), *argv], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("argv", "with_orders"),
    [
        (("--orders", "none", "--silent", "1", "--proxy-hours", "48"), False),
        (("--orders", "full", "--premoves", "0.6", "--fast", "1", "--zones=-5,0,8"), True),
    ],
)
def test_pace_prints_its_figures_as_json_and_every_game_ends(argv, with_orders):
    done = pace(
        "--seats", "5", "--games", "3", "--checks-per-day", "2", "--seed", "1", "--json", *argv
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["unfinished"] == 0
    assert 0 < out["p10_days"] <= out["median_days"] <= out["p90_days"] <= out["max_days"]
    assert out["max_days"] < out["params"]["cap_days"]
    assert set(out["timeouts"]) == WINDOW_KINDS
    assert all(isinstance(v, int) and v >= 0 for v in out["timeouts"].values())
    shares = [out[f"decided_by_{m}"] for m in MAKERS]
    assert all(0 <= x <= 1 for x in shares) and sum(shares) == pytest.approx(1, abs=1e-3)
    assert (out["decided_by_order"] > 0) is with_orders
    assert sum(out["time_share"].values()) == pytest.approx(1, abs=1e-3)
    assert out["per_game"]["deals_closed"] > 0


def test_typical_group_uses_the_servers_default_orders():
    """``--typical``: every seat starts with what the server gives a new seat at the default
    pace (the same ``orders.pace_orders``), 2 of 5 change to full orders, 1 of 5 pre-moves."""
    sys.path.insert(0, str(PACE.parent))
    try:
        import pace as bench
    finally:
        sys.path.remove(str(PACE.parent))
    from imtheboss.engine.orders import DEFAULT_PACE, pace_orders
    from imtheboss.web.games.create import _orders

    args = bench.parse_args(["--typical", "--games", "1"])
    assert (args.orders, args.changed, args.premoves) == ("default", 2, 0.2)
    game = bench.PaceGame(args, 0)
    plain = [p.seat for p in game.people if not p.changed and not p.premove]
    assert sum(p.changed for p in game.people) == 2 and sum(p.premove for p in game.people) == 1
    assert plain and all(game.state.orders[s] == pace_orders(DEFAULT_PACE) for s in plain)
    assert _orders(DEFAULT_PACE, 5) == [pace_orders(DEFAULT_PACE)] * 5
    done = pace("--typical", "--no-back", "--games", "3", "--seed", "1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["unfinished"] == 0 and out["params"]["changed"] == 2


def test_pace_refuses_bad_arguments():
    done = pace("--seats", "5", "--silent", "6")
    assert done.returncode == 2 and "--silent" in done.stderr
    assert pace("--orders", "some").returncode == 2


def test_a_present_seats_proxied_run_is_broken_only_by_its_own_decision_not_by_an_absence():
    """``max_present_proxied_run`` counts proxied decisions in a row of a seat that looked at
    its game between them (A11 hands a seat back at its look: more than 1 is a fault);
    ``max_absent_proxied_run`` those of a seat that did not look in between (away for days:
    the proxy plays for it by design)."""
    sys.path.insert(0, str(PACE.parent))
    try:
        from pace import Ledger
    finally:
        sys.path.remove(str(PACE.parent))
    ledger = Ledger(open={}, last=None)
    for maker in ("proxy", "proxy", "seat"):  # away: two proxied decisions, then its own
        ledger._present(0, maker)
    assert (ledger.max_proxied_run, ledger.max_absent_run) == (1, 2)
    ledger._present(1, "proxy")
    ledger.looked.add(1)  # it looked, and yet the proxy decided again
    ledger._present(1, "proxy")
    assert (ledger.max_proxied_run, ledger.max_absent_run) == (2, 2)
