"""A travel card on one's own family card on the table is legal (R5.2 forbids nothing; R5.1
forbids only one's own investor), so it stays possible, but folded away, not offered beside
the moves that help: a travel card on another player's family card is not folded."""

from __future__ import annotations

from imtheboss.web.say.command_forms import command_forms

PLAYERS = ["Ann", "Bo", "Cy"]


def test_travel_on_one_s_own_family_card_is_folded_and_on_another_s_is_not(app) -> None:
    commands = [
        {"do": "travel", "card": "travel:*", "target": "family:W@1"},
        {"do": "travel", "card": "travel:*", "target": "family:W@0"},
        {"do": "travel", "card": "travel:*", "target": "investor:S"},
    ]
    view = {"you": {"seat": 1}, "phase": "negotiation", "deal": {"boss": 0}}
    with app.test_request_context("/"):
        groups = {key: forms for key, _title, forms in command_forms(commands, view, PLAYERS)}
    folded = {f.cmd["target"]: f.fold for f in groups["cards"]}
    assert folded == {"family:W@1": True, "family:W@0": False, "investor:S": False}
