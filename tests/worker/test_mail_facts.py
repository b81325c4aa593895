"""Every kind of mail a played game sends (``imtheboss mail preview``: composed as the worker
composes it), in English, 简体中文 and 繁體中文: no raw card id, no line speaking of its
reader in the third person, and the decision facts of the asking kinds (what a deal on the
space needs and pays, what the reader could bring, until when the negotiation runs)."""

from __future__ import annotations

import re
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from imtheboss.web.mail.preview import LANGUAGES, PLAYERS, preview

RAW = re.compile(r"\b(?:investor|family|travel|recruit|boss|stop):|(?:card|卡) ?\d+")
FACTS = {  # a deal's needs and proceeds; what the reader could bring; the negotiation's end
    "en": ("It pays", "You ", "Its negotiation runs until"),
    "zh_Hans": ("可得", "你", "谈判进行到"),
    "zh_Hant": ("可得", "你", "談判進行到"),
    "ja": ("収益は", "あなたは", "交渉は"),
}
NAMES = {address: name for name, address in PLAYERS}


@pytest.fixture(scope="module")
def mails(tmp_path_factory) -> dict[str, dict[str, tuple[str, str]]]:
    """``{lang: {kind: (reader's name, plain body)}}``."""
    out = {}
    for lang in LANGUAGES:
        folder = tmp_path_factory.mktemp(lang)
        out[lang] = {}
        for path in preview(lang, folder):
            mail = BytesParser(policy=policy.default).parsebytes(Path(path).read_bytes())
            # a seat's player by name; the organiser, a new address or player: no name to test
            reader = NAMES.get(mail["To"].addresses[0].addr_spec, "")
            out[lang][Path(path).stem] = (reader, mail.get_body(("plain",)).get_content())
    return out


def _lines(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_raw_card_id_and_the_reader_is_you(mails, lang):
    kinds = mails[lang]
    assert {"your_turn", "deal_opened", "stop", "offer", "agreement"} <= set(kinds)
    for kind, (reader, body) in kinds.items():
        assert not RAW.search(body), (kind, body)
        if kind == "invited" or not reader:  # names the seat it invites; no seat's player
            continue
        assert not [line for line in _lines(body) if reader in line], (kind, body)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_turn_and_the_deal_opened_carry_what_the_decision_needs(mails, lang):
    pays, bring, until = FACTS[lang]
    _reader, turn = mails[lang]["your_turn"]
    assert pays in turn and " M" in turn and bring in turn, turn
    _reader, opened = mails[lang]["deal_opened"]
    assert pays in opened and until in opened and "UTC" in opened, opened


def test_each_added_sentence_follows_a_full_stop(mails):
    """The facts and the lapse warning follow the event's line after a full stop ("… for 3 M.
    A deal on space 10 needs …"), never run into it; in Chinese and Japanese the sentences
    follow one another with no space."""
    run_on = re.compile(r"[\w)] (?:A deal on space|If the card happens|You could bring)")
    for kind, (_reader, body) in mails["en"].items():
        assert not [line for line in _lines(body) if run_on.search(line)], (kind, body)
    _reader, opened = mails["zh_Hans"]["deal_opened"]
    assert "。" in opened, opened
    for lang in ("zh_Hans", "zh_Hant", "ja"):  # no space after a CJK full stop: "。你", not "。 你"
        for kind, (_reader, body) in mails[lang].items():
            assert "。 " not in body, (lang, kind, body)


DEAL = {  # a last call's deal as it stands: who is boss, the line-up, the proceeds
    "en": ("is the boss.", "Line-up: ", "after the agreements the boss keeps"),
    "zh_Hans": ("是老板。", "阵容：", "付清各项协议后老板留下"),
    "zh_Hant": ("是老闆。", "陣容：", "付清各項協議後老闆留下"),
    "ja": ("がボスです。", "顔ぶれ：", "ボスの手元に"),
}
NEXT = {  # "You are next, after …": never in a mail sent once that turn is over
    "en": "You are next",
    "zh_Hans": "就轮到你",
    "zh_Hant": "就輪到你",
    "ja": "の次はあなたの番",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_last_call_carries_the_deal_as_it_stands(mails, lang):
    """A last call is the moment to play a card or not: its mail says what the deal needs and
    pays, who is boss, who brings which card for how much, and what the reader gains."""
    pays, _bring, _until = FACTS[lang]
    boss, lineup, keeps = DEAL[lang]
    _reader, body = mails[lang]["last_call"]
    for said in (pays, boss, lineup, keeps):
        assert said in body, (said, body)
    assert " M" in body


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_place_marker_mail_says_what_the_number_is_and_the_best_spaces(mails, lang):
    pays, bring, _until = FACTS[lang]
    _reader, body = mails[lang]["place_marker"]
    assert "16" in body and body.count(pays) == 3 and bring in body, body


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_digest_says_nothing_that_stopped_being_true_before_it_was_sent(mails, lang):
    """The news mail is composed once the game is over: the negotiation it opens with ended
    and the turn it said came next is over, so neither the negotiation's end nor "you are
    next" is said (that turn is said to be over)."""
    _pays, _bring, until = FACTS[lang]
    _reader, body = mails[lang]["news"]
    assert _lines(body), body
    assert until not in body and NEXT[lang] not in body, body
    if lang == "en":  # each row is still told once: the turn that came next is said to be over
        assert "but that turn is over now" in body, body


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_row_s_facts_go_on_lines_of_their_own(mails, lang: str) -> None:
    """A mail's row is its line, a sentence, with what the decision needs on the lines under it:
    the last call's row, its space's facts and its deal are three lines, not one paragraph."""
    _, body = mails[lang]["last_call"]
    lines = body.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("- "))
    facts, deal = lines[row + 1], lines[row + 2]
    assert facts.startswith("  ") and FACTS[lang][0] in facts, lines[row : row + 3]
    assert deal.startswith("  ") and FACTS[lang][0] not in deal and deal.strip()
    assert lines[row].rstrip().endswith((".", "。")), lines[row]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_asking_mail_says_what_silence_does_and_what_each_word_does(mails, lang) -> None:
    """The turn, place-the-marker and terms mails say what happens if the reader does not
    answer (their kind's ``silence``), and each reply word comes with what it does."""
    from flask_babel import force_locale
    from imtheboss.web import create_app
    from imtheboss.web.mail.kinds import KINDS

    app = create_app({"SECRET_KEY": "s", "BASE_URL": "http://t", "TASKS": False})
    for kind in ("your_turn", "place_marker", "offer"):
        _reader, body = mails[lang][kind]
        with app.test_request_context(), force_locale(lang):
            silence = str(KINDS[kind].silence)
        assert silence in body, (kind, body)
        explained = [w for w in body.splitlines() if w.startswith("  ") and "—" in w]
        assert len(explained) >= 2, (kind, body)  # a word or two, and chat: each with its use
