"""The ``imtheboss`` command: ``scenario run|check FILE``, ``simulate``, ``verify FILE``, ``mail
preview`` and ``doctor`` (the operator's list of what is stuck).

It lives here, in the outermost room, beside the worker's other commands: it speaks the engine's
rules and the web's words (the simulation's log and the verify report in a language, the doctor,
the mail as web/ composes it, all through ``imtheboss.web.app.commands``). The engine imports
nothing of web/ or worker/ (``tests/test_layers.py``). web/ is imported only by the command that
needs it, so ``scenario`` and ``simulate --json`` start without Flask or Celery.

Exit codes: 0 success; 1 a scenario's expectations do not hold, or a game record departs from
its seed (``verify``: the first difference is printed); 2 bad input (unreadable or malformed
file, unknown field, bad arguments).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from imtheboss.engine.languages import CODES, DEFAULT
from imtheboss.engine.record import game_record, read_record
from imtheboss.engine.scenario import ScenarioError, check_scenario, load_scenario, run_scenario
from imtheboss.engine.simulate import SimulationError, simulate
from imtheboss.engine.verify import verify


def _scenario(args: argparse.Namespace) -> int:
    try:
        doc = load_scenario(args.file)
        if args.action == "run":
            print(json.dumps(run_scenario(doc), indent=2, ensure_ascii=False))
            return 0
        result, diffs = check_scenario(doc)
    except ScenarioError as exc:
        print(f"imtheboss: {args.file}: {exc}", file=sys.stderr)
        return 2
    if diffs:
        print(f"FAIL {args.file}", file=sys.stderr)
        for line in diffs:
            print(f"  {line}", file=sys.stderr)
        return 1
    events, refused = len(result["events"]), len(result["errors"])
    print(f"ok {args.file}: {events} events, {refused} refused command(s)")
    return 0


def _simulate(args: argparse.Namespace) -> int:

    try:
        game = simulate(args.players, args.seed, variants=args.variant, bots=args.bot)
    except SimulationError as exc:
        print(f"imtheboss: {exc}", file=sys.stderr)
        return 2
    if args.json:  # the game's record (docs/export.md), as the server exports a finished game
        print(json.dumps(game_record(game.events), ensure_ascii=False))
        return 0
    from imtheboss.web.app.commands import (  # lazy: scenario starts without Flask
        simulation_log,
        speaking,
    )

    s = game.state
    with speaking(args.lang):
        for line in simulation_log(game.events, s.players, s.money, sorted(s.winners)):
            print(line)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from imtheboss.web.app.commands import (  # lazy: scenario starts without Flask
        bad_hash_text,
        record_error_text,
        speaking,
        unreadable_text,
        verdict_lines,
    )

    with speaking(args.lang):
        if args.hash is not None and not re.fullmatch(r"[0-9a-fA-F]{8,64}", args.hash):
            print("imtheboss: " + bad_hash_text(), file=sys.stderr)
            return 2
        try:
            doc = _read_json(args.file)
        except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
            print("imtheboss: " + unreadable_text(exc, args.file), file=sys.stderr)
            return 2
        try:
            verdict = verify(read_record(doc), args.hash)
        except (RecursionError, ValueError) as exc:  # RecordError, or values verify cannot read
            print("imtheboss: " + record_error_text(exc, args.file), file=sys.stderr)
            return 2
        lines = verdict_lines(verdict, args.file)
    print("\n".join(lines), file=sys.stdout if verdict.ok else sys.stderr)
    return 0 if verdict.ok else 1


def _mail(args: argparse.Namespace) -> int:
    from imtheboss.web.app.commands import preview  # lazy: scenario starts without Flask

    for path in preview(args.lang, Path(args.out)):
        print(path)
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from imtheboss.web.app.commands import doctor  # lazy: scenario starts without Flask

    return doctor(args)


def _read_json(name: str) -> object:
    """The JSON document in file ``name`` (``-``: standard input). Raises ``OSError``,
    ``UnicodeDecodeError``, ``json.JSONDecodeError`` or ``RecursionError``."""
    if name == "-":
        return json.load(sys.stdin)
    with open(name, encoding="utf-8") as f:
        return json.load(f)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``imtheboss`` console script; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="imtheboss", description="I'm the Boss! slow-play server tools"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sc = sub.add_parser("scenario", help="run or check a rules scenario (docs/scenarios.md)")
    sc.add_argument("action", choices=["run", "check"])
    sc.add_argument("file")
    sc.set_defaults(func=_scenario)
    sim = sub.add_parser("simulate", help="play a whole game with bots")
    sim.add_argument("--players", type=int, default=4)
    sim.add_argument("--seed", default="1")
    sim.add_argument(
        "--variant", action="append", default=[], metavar="V", help="V1..V9, repeatable"
    )
    sim.add_argument("--bot", choices=["sensible", "random", "mixed"], default="sensible")
    sim.add_argument("--json", action="store_true", help="print the event log as JSON")
    sim.add_argument("--lang", choices=CODES, default=DEFAULT, help="the log's language")
    sim.set_defaults(func=_simulate)
    ver = sub.add_parser(
        "verify", help="check a game record's seed, deal, dice and reshuffles (docs/export.md)"
    )
    ver.add_argument("file", help="the record (JSON), or - for standard input")
    ver.add_argument(
        "--hash", help="the seed hash published at the start (hex, or its first 8+ digits)"
    )
    ver.add_argument("--lang", choices=CODES, default=DEFAULT, help="the report's language")
    ver.set_defaults(func=_verify)
    mail = sub.add_parser("mail", help="mail tools")
    mail_sub = mail.add_subparsers(dest="mail_command", required=True)
    prev = mail_sub.add_parser(
        "preview",
        help="write one .eml per kind of mail, from a game bots play (docs/mail-replies.md)",
    )
    prev.add_argument("--lang", choices=CODES, default=DEFAULT, help="the mail's language")
    prev.add_argument("--out", required=True, help="the folder to write the .eml files in")
    prev.set_defaults(func=_mail)
    doc = sub.add_parser(
        "doctor", help="list stuck mail, overdue deadlines and failing webhooks across games"
    )
    doc.add_argument("--stuck-minutes", type=float, default=15.0)
    doc.add_argument("--grace-seconds", type=float, default=60.0)
    doc.add_argument("--json", action="store_true", help="one JSON list of the rows")
    doc.set_defaults(func=_doctor)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `imtheboss simulate | head`: the reader left; not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
