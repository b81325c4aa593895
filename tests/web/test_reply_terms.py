"""A reply acts only on the terms its mail showed (A7, no bait and switch): the mail asking the
boss about Bill's offer carries those terms in its reply address and says which terms its words
answer; when they no longer stand (withdrawn and replaced by another player's, a new price), a
reply ``accept`` or ``reject`` changes nothing and is answered "the terms changed", naming the
terms open now, and the answer's own address carries those. The same terms withdrawn and offered
again stand; terms agreed already, and a card's window the seat answered on the page, are
"already answered"; an address without terms (the older form) accepts nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from imtheboss.engine.board import default_board
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import replay
from imtheboss.engine.views import legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.replies.address import SALT, BadReplyAddress, read_address, reply_address
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.terms import Shown
from imtheboss.web.replies.words import Reading, understand
from imtheboss.web.say.display import INVESTOR_NAMES
from itsdangerous import Signer
from sqlalchemy import select
from support.deal import NAMES, PLAYERS, Setup, find_setup
from support.reply_game import REPLY_CONFIG, answers
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


class Table:
    """A deal on the table: the boss, Bill's investor the deal needs, and a third seat."""

    def __init__(self, app) -> None:
        self.app = app
        self.setup = setup = find_setup()
        self.boss, self.provider = setup.boss, setup.provider
        self.other = 3 - setup.boss - setup.provider
        self.keys = 0
        with app.app_context():
            self.gid = create_game("Friday", PLAYERS, seed=setup.seed).game_id
        self.do(self.boss, {"do": "place_marker", "space": setup.space})
        self.do(self.boss, {"do": "open_deal"})

    def do(self, seat: int, command: dict) -> None:
        self.keys += 1
        with self.app.app_context():
            submit(self.gid, seat, command, f"k-{self.keys}")

    def offer(self, price: int) -> None:
        """The provider offers its investor for ``price`` M."""
        card = f"investor:{self.setup.letter}"
        self.do(self.provider, {"do": "offer", "card": card, "price": {"cash": price}})

    def swap(self) -> None:
        """The provider withdraws; the third seat's terms (2 M, no card) wait for the boss."""
        self.do(self.provider, {"do": "withdraw"})
        self.do(self.boss, {"do": "propose", "to": self.other, "price": {"cash": 1}})
        self.do(self.other, {"do": "offer", "price": {"cash": 2}})

    def mail_to_boss(self):
        """The boss's newest offer mail, composed now."""
        with self.app.app_context():
            row = db.session.execute(
                select(Notification)
                .where(Notification.kind == "offer", Notification.seat_index == self.boss)
                .order_by(Notification.id.desc())
                .limit(1)
            ).scalar_one()
            return compose(get_game(self.gid), self.seat(self.boss), [row])

    def seat(self, index: int) -> Seat:
        return db.session.execute(
            select(Seat).where(Seat.game_id == self.gid, Seat.seat_index == index)
        ).scalar_one()

    def reply(self, to: str, body: str, n: str, who: int | None = None) -> tuple[str, str]:
        sender = PLAYERS[self.boss if who is None else who][1]
        raw = raw_mail(body + "\n\n" + quoted(), to=to, sender=sender, message_id=f"<{n}@c>")
        with self.app.app_context():
            outcome = apply_reply(raw)
        return outcome.status, outcome.reason

    def events(self, kind: str) -> list:
        with self.app.app_context():
            return [e for e in load_events(self.gid) if e.type == kind]

    def answer_mail(self):
        """The newest answer to a reply, composed."""
        row = answers(self.app)[-1]
        with self.app.app_context():
            return compose(get_game(self.gid), None, [db.session.merge(row)])

    def terms_open(self) -> list:
        with self.app.app_context():
            return list(load_state(get_game(self.gid)).deal.terms.values())


def _text(mail) -> str:
    return mail.get_body(("plain",)).get_content()


def test_the_offer_mail_carries_and_names_the_terms_its_words_answer(app) -> None:
    t = Table(app)
    t.offer(2)
    mail = t.mail_to_boss()
    local = str(mail["Reply-To"]).partition("@")[0]
    assert len(local) <= 64  # RFC 5321
    with app.app_context():
        ticket = read_address(str(mail["Reply-To"]))
    assert ticket.terms == Shown(t.provider, t.setup.letter, ("cash", 2))
    sacks = f"{INVESTOR_NAMES[t.setup.letter]} ({t.setup.letter})"
    terms = f"{NAMES[t.provider]}'s terms: 2 M for {sacks}"
    assert f"answers only these terms: {terms}." in _text(mail)


@pytest.mark.parametrize("word", ["accept", "reject"])
def test_a_reply_to_terms_swapped_for_another_players_is_refused_naming_the_new(app, word) -> None:
    t = Table(app)
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    t.swap()
    assert t.reply(address, word, "r1") == ("answered", "terms_changed")
    assert t.events("agreement_made") == []
    [open_now] = t.terms_open()  # the third seat's terms still wait: not rejected
    assert open_now.provider == t.other and open_now.price == ("cash", 2)
    mail = t.answer_mail()
    text = _text(mail)
    assert "The terms changed since the mail you answered, so nothing was done" in text
    letter = t.setup.letter
    shown = f"{NAMES[t.provider]}'s terms: 2 M for {INVESTOR_NAMES[letter]} ({letter})"
    assert f"The mail you answered showed: {shown}." in text
    assert f"Now: {NAMES[t.other]}'s terms: 2 M for no card." in text
    # the answer's own address carries the terms open now: answering it acts on them
    with app.app_context():
        assert read_address(str(mail["Reply-To"])).terms == Shown(t.other, None, ("cash", 2))
    assert t.reply(str(mail["Reply-To"]), word, "r2") == ("done", "")
    if word == "accept":
        [made] = t.events("agreement_made")
        assert made.data["provider"] == t.other and made.data["price"] == {"cash": 2}
    else:
        assert [e.data["provider"] for e in t.events("terms_removed")][-1] == t.other


def test_a_new_price_of_the_same_provider_is_refused_as_changed_terms(app) -> None:
    t = Table(app)
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    t.offer(4)
    assert t.reply(address, "accept", "r1") == ("answered", "terms_changed")
    assert t.events("agreement_made") == []
    letter = t.setup.letter
    now = f"Now: {NAMES[t.provider]}'s terms: 4 M for {INVESTOR_NAMES[letter]} ({letter})."
    assert now in _text(t.answer_mail())


def test_the_same_terms_withdrawn_and_offered_again_stand(app) -> None:
    t = Table(app)
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    with app.app_context():
        assert read_address(address).terms == Shown(t.provider, t.setup.letter, ("cash", 2))
    t.do(t.provider, {"do": "withdraw"})
    t.offer(2)
    assert t.reply(address, "accept", "r1") == ("done", "")
    [made] = t.events("agreement_made")
    assert made.data["provider"] == t.provider and made.data["price"] == {"cash": 2}


def test_terms_agreed_already_are_answered_so(app) -> None:
    t = Table(app)
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    letter = t.setup.letter
    accept = {"do": "accept", "with": t.provider, "letter": letter, "price": {"cash": 2}}
    t.do(t.boss, accept)  # on the page
    assert t.reply(address, "accept", "r1") == ("answered", "already_answered")
    assert len(t.events("agreement_made")) == 1
    assert "You had already answered that" in _text(t.answer_mail())


def test_an_address_that_showed_no_terms_accepts_none(app) -> None:
    t = Table(app)
    t.offer(2)
    with app.app_context():
        state = load_state(get_game(t.gid))
        older = reply_address(t.gid, t.seat(t.boss), state.deal.window.id)
    assert t.reply(older, "accept", "r1") == ("answered", "terms_changed")
    assert t.events("agreement_made") == []
    assert "Now: " in _text(t.answer_mail())


def test_a_reply_to_a_card_s_window_answered_on_the_page_is_already_answered(app) -> None:
    t = Table(app)
    card = {"do": "travel", "card": t.setup.travel_card, "target": f"investor:{t.setup.letter}"}
    t.do(t.setup.traveller, card)
    with app.app_context():
        row = db.session.execute(
            select(Notification).where(
                Notification.kind == "stop", Notification.seat_index == t.provider
            )
        ).scalar_one()
        address = str(compose(get_game(t.gid), t.seat(t.provider), [row])["Reply-To"])
        window = load_state(get_game(t.gid)).pending.window.id
    t.do(t.provider, {"do": "allow", "window": window})  # on the page
    assert t.reply(address, "allow", "r1", who=t.provider) == ("answered", "already_answered")
    assert "You had already answered that" in _text(t.answer_mail())


def test_the_answer_says_what_changed_in_the_seat_s_language(app) -> None:
    t = Table(app)
    with app.app_context():
        t.seat(t.boss).locale = "zh_Hans"
        db.session.commit()
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    t.swap()
    assert t.reply(address, "接受", "r1") == ("answered", "terms_changed")
    text = _text(t.answer_mail())
    assert "你回复的邮件发出后条件已经变了" in text
    assert f"现在：{NAMES[t.other]} 的条件：" in text and "The terms" not in text


def test_terms_over_the_proceeds_are_shown_for_reject_and_accept_is_not_now(app) -> None:
    t = Table(app)
    t.offer(50)  # above the deal's proceeds (R4.4): only a reject is legal
    address = str(t.mail_to_boss()["Reply-To"])
    with app.app_context():
        assert read_address(address).terms == Shown(t.provider, t.setup.letter, ("cash", 50))
    assert t.reply(address, "accept", "r1") == ("answered", "not_now")
    assert t.reply(address, "reject", "r2") == ("done", "")
    assert t.terms_open() == []


def test_the_longest_address_fits_and_one_signed_before_still_reads(app) -> None:
    """The terms make room by a 112-bit signature: with the largest window number and terms the
    local part stays within 64 characters (RFC 5321); an address sent before, with the
    full-length signature of then, still reads (it shows no terms: it accepts none)."""
    t = Table(app)
    with app.app_context():
        seat = t.seat(t.boss)
        terms = Shown(5, None, ("shares", 999))
        longest = reply_address(t.gid, seat, "", newest=999_999, step="p", terms=terms)
        assert len(longest.partition("@")[0]) <= 64, longest
        assert read_address(longest).terms == terms
        payload = f"{t.gid}.{t.boss}.{seat.token_hash[:8]}.w3"
        secret = app.config["SECRET_KEY"]
        before = Signer(secret, salt=SALT).sign(payload).decode()
        ticket = read_address(f"play+{before}@boss.example.org")
        assert (ticket.window, ticket.terms) == ("w3", None)
        head, _dot, sig = before.rpartition(".")
        flipped = f"{head}.{'A' if sig[0] != 'A' else 'B'}{sig[1:]}"  # a character that counts
        with pytest.raises(BadReplyAddress):
            read_address(f"play+{flipped}@boss.example.org")


@pytest.mark.parametrize(
    "body",
    ["同意", "好", "Yes", "Deal!", "Accept, thanks!", "接受，谢谢", "Hi,\naccept", "你好，\n同意"],
)
def test_people_s_words_for_yes_accept_the_terms_their_mail_showed(app, body) -> None:
    t = Table(app)
    t.offer(2)
    assert t.reply(str(t.mail_to_boss()["Reply-To"]), body, "r1") == ("done", "")
    [made] = t.events("agreement_made")
    assert made.data["provider"] == t.provider and made.data["price"] == {"cash": 2}
    assert "You accepted the terms of" in _text(t.answer_mail())


@pytest.mark.parametrize("body", ["不要", "No", "拒绝，谢谢"])
def test_people_s_words_for_no_reject_the_terms_their_mail_showed(app, body) -> None:
    t = Table(app)
    t.offer(2)
    assert t.reply(str(t.mail_to_boss()["Reply-To"]), body, "r1") == ("done", "")
    assert [e.data["reason"] for e in t.events("terms_removed")] == ["rejected"]
    assert t.events("agreement_made") == []


def test_yes_to_terms_that_changed_is_refused_naming_the_new(app) -> None:
    t = Table(app)
    t.offer(2)
    address = str(t.mail_to_boss()["Reply-To"])
    t.swap()
    assert t.reply(address, "同意", "r1") == ("answered", "terms_changed")
    assert t.events("agreement_made") == []
    assert f"Now: {NAMES[t.other]}'s terms: 2 M for no card." in _text(t.answer_mail())


def test_a_second_offer_while_another_waits_is_answered_by_its_own_mail(app) -> None:
    """Two providers' terms wait for the boss: the mail about the newer names its words and
    those terms (not only "chat"), and ``accept`` agrees to them, not to the other's."""
    t = Table(app)
    t.offer(2)
    t.do(t.boss, {"do": "propose", "to": t.other, "price": {"cash": 1}})
    t.do(t.other, {"do": "offer", "price": {"cash": 3}})
    assert len(t.terms_open()) == 2
    mail = t.mail_to_boss()
    text = _text(mail)
    assert "\n  accept — " in text and "\n  reject — " in text, text
    assert f"answers only these terms: {NAMES[t.other]}'s terms: 3 M" in text, text
    assert t.reply(str(mail["Reply-To"]), "accept", "r1")[0] == "done"
    [made] = t.events("agreement_made")
    assert made.data["provider"] == t.other
    [still] = t.terms_open()
    assert still.provider == t.provider


def test_an_offer_word_names_the_card_it_puts_forward(app) -> None:
    """The provider's mail about the boss's proposal suggests ``offer 3``: it says for which
    card (its only one the deal needs)."""
    t = Table(app)
    card = f"investor:{t.setup.letter}"
    t.do(t.boss, {"do": "propose", "to": t.provider, "card": card, "price": {"cash": 1}})
    with app.app_context():
        row = db.session.execute(
            select(Notification)
            .where(Notification.kind == "offer", Notification.seat_index == t.provider)
            .order_by(Notification.id.desc())
            .limit(1)
        ).scalar_one()
        text = _text(compose(get_game(t.gid), t.seat(t.provider), [row]))
    assert "\n  offer 3 — " in text, text
    sacks = f"{INVESTOR_NAMES[t.setup.letter]} ({t.setup.letter})"
    assert f"An offer by reply puts forward {sacks}." in text, text


class TwoOffers(Table):
    """A deal whose boss two providers can offer investors of two letters: ``provider`` its
    ``letter`` (``setup.letter``), ``other`` its ``second``."""

    def __init__(self, app) -> None:
        self.app, self.keys = app, 0
        self.setup, self.other, self.second = _two_providers()
        self.boss, self.provider = self.setup.boss, self.setup.provider
        with app.app_context():
            self.gid = create_game("Friday", PLAYERS, seed=self.setup.seed).game_id
        self.do(self.boss, {"do": "place_marker", "space": self.setup.space})
        self.do(self.boss, {"do": "open_deal"})


def _two_providers() -> tuple[Setup, int, str]:
    """A seed and a space the first player may mark where both others hold an investor of a
    letter the space takes (two different letters): ``(setup, other seat, its letter)``."""
    board = default_board()
    for seed in range(500):
        state = replay(new_game(NAMES, Options(), board, seed, datetime(2026, 3, 1, tzinfo=UTC)))
        boss = state.active
        marks = [c["space"] for c in legal_commands(state, boss) if c["do"] == "place_marker"]
        for index in marks:
            letters = board.spaces[index].letters
            a, b = (s for s in range(3) if s != boss)
            mine_a = [x for x in state.seat_investors(a) if x in letters]
            mine_b = [x for x in state.seat_investors(b) if x in letters]
            if mine_a and mine_b:
                setup = Setup(seed, boss, a, b, b, index, mine_a[0], "")
                return setup, b, mine_b[0]
    raise AssertionError("no seed found")


def _digest_to_boss(t: Table):
    """One mail to the boss about every offer waiting (a burst of offers is mailed together)."""
    with t.app.app_context():
        rows = list(
            db.session.execute(
                select(Notification).where(
                    Notification.kind == "offer", Notification.seat_index == t.boss
                )
            ).scalars()
        )
        assert len(rows) >= 2
        return compose(get_game(t.gid), t.seat(t.boss), rows)


def test_a_mail_of_several_terms_names_a_word_for_each_letter(app) -> None:
    """Two sets of terms wait for the boss and one mail tells of both: ``accept`` alone would
    name neither, so the mail lists ``accept C``/``reject C`` for each letter and says whose
    terms each is; ``accept`` with the second letter agrees to those terms, a bare ``accept``
    is answered "more than one move"."""
    t = TwoOffers(app)
    t.offer(2)
    seat, letter = t.other, t.second
    t.do(seat, {"do": "offer", "card": f"investor:{letter}", "price": {"cash": 3}})
    mail = _digest_to_boss(t)
    text = _text(mail)
    first = t.setup.letter
    for word in (f"accept {first}", f"reject {first}", f"accept {letter}", f"reject {letter}"):
        assert f"\n  {word} — " in text, text
    assert "\n  accept — " not in text, text
    assert f"- {first}: {NAMES[t.provider]}'s terms: 2 M for " in text, text
    assert f"- {letter}: {NAMES[seat]}'s terms: 3 M for " in text, text
    assert f"<code>accept {letter}</code>" in mail.get_body(("html",)).get_content()
    address = str(mail["Reply-To"])
    assert len(address.partition("@")[0]) <= 64
    assert t.reply(address, "accept", "r1") == ("answered", "several")
    assert t.reply(address, f"Accept {letter.lower()}, thanks", "r2") == ("done", "")
    [made] = t.events("agreement_made")
    assert (made.data["provider"], made.data["letter"]) == (seat, letter)
    assert made.data["price"] == {"cash": 3}


def test_a_letter_whose_terms_changed_since_the_mail_acts_on_nothing(app) -> None:
    """``accept C`` answers the terms for C its mail showed: a new price since, or a letter
    the mail did not show, changes nothing and is answered "the terms changed"."""
    t = TwoOffers(app)
    t.offer(2)
    seat, letter = t.other, t.second
    t.do(seat, {"do": "offer", "card": f"investor:{letter}", "price": {"cash": 3}})
    address = str(_digest_to_boss(t)["Reply-To"])
    t.do(t.provider, {"do": "withdraw"})
    t.offer(4)
    assert t.reply(address, f"accept {t.setup.letter}", "r1") == ("answered", "terms_changed")
    missing = next(x for x in "CDGLSW" if x not in (t.setup.letter, letter))
    assert t.reply(address, f"接受 {missing}", "r2")[0] == "answered"
    assert t.events("agreement_made") == []
    assert t.reply(address, f"拒绝{letter}", "r3") == ("done", "")
    removed = [(e.data["reason"], e.data.get("provider")) for e in t.events("terms_removed")]
    assert removed[-1] == ("rejected", seat), removed


@pytest.mark.parametrize(
    ("line", "verb", "letter"),
    [("accept C", "accept", "C"), ("Reject w.", "reject", "W"), ("接受Ｇ", "accept", "G")],
)
def test_accept_or_reject_with_a_letter_reads_as_that_letter(line, verb, letter) -> None:
    assert understand(line) == Reading(verb, letter=letter)
    assert understand("accept X") is None and understand("accept CD") is None
